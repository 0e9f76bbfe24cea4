// llama-quantize's files executed exactly: every GGUF of tests/data/models/tiny-d-gguf (Q4_K_M,
// Q5_K_M, Q3_K_M, Q2_K, IQ4_XS default mixes; Q2_K .. Q6_K, IQ4_XS, IQ4_NL, Q4_1, Q5_0, Q5_1
// --pure) and tiny-a's F16 conversion, compiled as they are (no requantization: each weight keeps
// its GGUF type), run token by token and in prompt batches; every position's logits within 1e-3
// of the float64 forward of the file's own dequantized blocks (reference_forward.h). The
// quantization error itself (top-1 agreement and mean KL against the f32 model's float64
// reference, tests/data/golden/tiny-d-f32-T40) is printed and recorded, not bounded: it is the
// file's, not the engine's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "formats/checkpoint_reader.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"
#include "tests/e2e/reference_forward.h"

namespace cortiq {
namespace {

constexpr double kTolerance = 1e-3;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<int32_t> ReadTokens(const std::string& path) {
  std::string text = ReadFile(path);
  std::vector<int32_t> tokens;
  for (absl::string_view part : absl::StrSplit(text, absl::ByAnyChar("[], \n"), absl::SkipEmpty())) {
    int32_t id;
    if (absl::SimpleAtoi(part, &id)) tokens.push_back(id);
  }
  return tokens;
}

std::vector<float> ReadF32(const std::string& path) {
  std::string bytes = ReadFile(path);
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

// The float64 reference itself, on the golden F32 GGUF of tiny-a: within 1e-5 of the golden
// float64 forward (an independent implementation of the same formulas).
TEST(ReferenceForwardTest, MatchesTheGoldenReference) {
  GoldenCase golden = LoadGoldenCase("tiny-a-f32-T40");
  auto forward = ReferenceForward::Open(std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-a-f32.gguf");
  ASSERT_TRUE(forward.ok()) << forward.status();
  const std::vector<double> logits = (*forward)->Logits(golden.tokens);
  ASSERT_EQ(logits.size(), golden.logits_ref.size());
  double worst = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    worst = std::max(worst, std::fabs(logits[i] - golden.logits_ref[i]));
  }
  EXPECT_LE(worst, 1e-5);
  std::printf("reference forward vs golden float64 (tiny-a-f32-T40): max |d| %.3g\n", worst);
}

struct Variant {
  std::string name;  // artifact / file stem
  std::string gguf;
};

std::vector<Variant> Variants() {
  std::vector<Variant> v;
  for (const char* name :
       {"tiny-d-Q4_K_M", "tiny-d-Q5_K_M", "tiny-d-Q3_K_M", "tiny-d-Q2_K", "tiny-d-IQ4_XS",
        "tiny-d-Q6_K", "tiny-d-Q5_K-pure", "tiny-d-Q4_K-pure", "tiny-d-Q3_K-pure",
        "tiny-d-Q2_K-pure", "tiny-d-IQ4_XS-pure", "tiny-d-IQ4_NL-pure", "tiny-d-Q4_1-pure",
        "tiny-d-Q5_0-pure", "tiny-d-Q5_1-pure"}) {
    v.push_back({name, std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-d-gguf/" + name + ".gguf"});
  }
  v.push_back({"tiny-a-f16", std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-a-f16.gguf"});
  return v;
}

class GgufBlocksTest : public testing::TestWithParam<Variant> {};

TEST_P(GgufBlocksTest, EveryPositionMatchesTheFloat64ForwardOfItsOwnBlocks) {
  const Variant& variant = GetParam();
  const bool tiny_d = variant.name.rfind("tiny-d", 0) == 0;
  const std::string case_dir = std::string(CORTIQ_TEST_DATA_DIR) + "/golden/" +
                               (tiny_d ? "tiny-d-f32-T40" : "tiny-a-f32-T40");
  const std::vector<int32_t> tokens = ReadTokens(case_dir + "/tokens.json");
  const std::vector<float> f32_ref = ReadF32(case_dir + "/logits_ref.f32");
  ASSERT_FALSE(tokens.empty());

  auto artifact = Artifact::Open(std::string(CORTIQ_ARTIFACT_DIR) + "/" + variant.name + ".cortiq");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  // No requantization: every weight the GGUF holds in blocks (or f16) keeps that format.
  auto reader = OpenCheckpoint(variant.gguf, /*map_data=*/false);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (const WeightEntry& w : (*artifact)->plan().weights) {
    const TensorSpec* spec = (*reader)->Find(w.name);
    if (spec == nullptr || w.shape.size() != 2) continue;  // derived (fused) or a vector
    EXPECT_EQ(WeightFormatName(w.format),
              absl::AsciiStrToLower((*reader)->StoredTypeName(w.name)))
        << w.name;
  }

  auto forward = ReferenceForward::Open(variant.gguf);
  ASSERT_TRUE(forward.ok()) << forward.status();
  const std::vector<double> ref = (*forward)->Logits(tokens);
  const size_t vocab = ref.size() / tokens.size();
  ASSERT_EQ(static_cast<size_t>((*artifact)->plan().model.vocab_size), vocab);

  for (const size_t batch : {size_t{1}, size_t{0}}) {  // token by token; the compiled batch
    SessionOptions options;
    auto session = Session::Create(**artifact, options);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<float> logits(tokens.size() * vocab);
    if (batch == 1) {
      for (size_t t = 0; t < tokens.size(); ++t) {
        ASSERT_TRUE((*session)->Eval(tokens[t], /*want_logits=*/true).ok());
        std::copy((*session)->logits().begin(), (*session)->logits().end(), &logits[t * vocab]);
      }
    } else {
      // In chunks of the compiled batch size.
      const size_t chunk = static_cast<size_t>((*session)->batch_size());
      for (size_t begin = 0; begin < tokens.size(); begin += chunk) {
        const size_t n = std::min(chunk, tokens.size() - begin);
        ASSERT_TRUE((*session)
                        ->EvalBatch(absl::MakeConstSpan(tokens).subspan(begin, n),
                                    BatchLogits::kAll)
                        .ok());
        for (size_t t = 0; t < n; ++t) {
          std::copy((*session)->batch_logits(t).begin(), (*session)->batch_logits(t).end(),
                    &logits[(begin + t) * vocab]);
        }
      }
    }
    double worst = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      double diff = 0;
      for (size_t v = 0; v < vocab; ++v) {
        diff = std::max(diff, std::fabs(logits[t * vocab + v] - ref[t * vocab + v]));
      }
      EXPECT_LE(diff, kTolerance) << variant.name << " position " << t << " batch " << batch;
      worst = std::max(worst, diff);
    }
    // Quantization error against the f32 model (reported, not bounded).
    double top1 = 0, kl = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      const float* p = &f32_ref[t * vocab];
      const float* q = &logits[t * vocab];
      top1 += std::max_element(p, p + vocab) - p == std::max_element(q, q + vocab) - q;
      const double mp = *std::max_element(p, p + vocab), mq = *std::max_element(q, q + vocab);
      double sp = 0, sq = 0;
      for (size_t v = 0; v < vocab; ++v) sp += std::exp(p[v] - mp), sq += std::exp(q[v] - mq);
      for (size_t v = 0; v < vocab; ++v) {
        const double lp = p[v] - mp - std::log(sp), lq = q[v] - mq - std::log(sq);
        kl += std::exp(lp) * (lp - lq);
      }
    }
    top1 /= tokens.size();
    kl /= tokens.size();
    RecordProperty("max_abs_diff_vs_own_blocks", std::to_string(worst));
    RecordProperty("top1_vs_f32", std::to_string(top1));
    RecordProperty("mean_kl_vs_f32", std::to_string(kl));
    std::printf("%s (%s): max |d| vs float64 of its own blocks %.3g; vs the f32 model: top-1 "
                "%.1f%%, mean KL %.3g nats\n",
                variant.name.c_str(), batch == 1 ? "token by token" : "batched", worst,
                100 * top1, kl);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFiles, GgufBlocksTest, testing::ValuesIn(Variants()),
                         [](const testing::TestParamInfo<Variant>& info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace cortiq
