// llama-quantize's files executed exactly: every GGUF of tests/data/models/tiny-e-gguf (Q4_K_M,
// Q5_K_M, Q3_K_M, Q2_K, IQ4_XS default mixes; Q2_K .. Q6_K, IQ4_XS, IQ4_NL, Q4_1, Q5_0, Q5_1
// --pure, all of tiny-e-bf16.gguf; Q4_0 --pure, whose rows of 512 weights are stored as
// q4_0x16) and tiny-a's F16 conversion, compiled as they are (no
// requantization: each weight keeps its GGUF type), run token by token and in prompt batches;
// every position's logits within 1e-3 of the float64 forward of the file's own dequantized blocks
// (reference_forward.h). The quantization error itself (top-1 agreement and mean KL against the
// float64 forward of the unquantized source) is printed and recorded, not bounded: it is the
// file's, not the engine's.
//
// CORTIQ_EXTRA_GGUF_DIR=DIR adds every DIR/X.gguf that has a DIR/X.cortiq beside it (compiled
// by hand), against DIR's *-f32.gguf or *-bf16.gguf as the unquantized source (if there is one):
// for checking files of other shapes once, without committing them.
//
// And tiny-a with an untied LM head (make_untied_checkpoint.py) against the float64 forward.
//
// And cortiq-compile --weights q4_k_m / q5_k_m / q6_k of tiny-e-bf16.gguf against llama-quantize's
// Q4_K_M / Q5_K_M / Q6_K files of the same source: every weight the same type and byte for byte
// the same blocks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "formats/checkpoint_reader.h"
#include "gtest/gtest.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"
#include "ops/quantize_q8_0x16.h"
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

// The engine's logits [T, vocab] for `tokens` on a fresh session of `artifact`: token by token
// (batched false), or in prompt batches of the compiled batch size with every row's logits.
absl::StatusOr<std::vector<float>> EngineLogits(const Artifact& artifact,
                                                const std::vector<int32_t>& tokens, bool batched) {
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                          Session::Create(artifact, SessionOptions()));
  const size_t vocab = static_cast<size_t>(artifact.plan().model.vocab_size);
  std::vector<float> logits(tokens.size() * vocab);
  if (!batched) {
    for (size_t t = 0; t < tokens.size(); ++t) {
      CORTIQ_RETURN_IF_ERROR(session->Eval(tokens[t], /*want_logits=*/true));
      std::copy(session->logits().begin(), session->logits().end(), &logits[t * vocab]);
    }
    return logits;
  }
  const size_t chunk = static_cast<size_t>(session->batch_size());
  for (size_t begin = 0; begin < tokens.size(); begin += chunk) {
    const size_t n = std::min(chunk, tokens.size() - begin);
    CORTIQ_RETURN_IF_ERROR(
        session->EvalBatch(absl::MakeConstSpan(tokens).subspan(begin, n), BatchLogits::kAll));
    for (size_t t = 0; t < n; ++t) {
      std::copy(session->batch_logits(t).begin(), session->batch_logits(t).end(),
                &logits[(begin + t) * vocab]);
    }
  }
  return logits;
}

// An untied LM head (tiny-a with tie_word_embeddings false and an lm_head.weight of its own,
// written by make_untied_checkpoint.py and compiled at build time): the engine's logits at every
// position, token by token and batched, within 1e-3 of the float64 forward, which reads that
// head; and the head matters (the table as head gives logits far away), so neither side can
// pass by reading the embedding table.
TEST(UntiedHeadTest, EveryPositionMatchesTheFloat64ForwardWithItsOwnHead) {
  const std::string dir = std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-a-untied";
  const std::vector<int32_t> tokens =
      ReadTokens(std::string(CORTIQ_TEST_DATA_DIR) + "/golden/tiny-a-f32-T40/tokens.json");
  auto forward = ReferenceForward::Open(dir);
  ASSERT_TRUE(forward.ok()) << forward.status();
  const std::vector<double> ref = (*forward)->Logits(tokens);
  auto tied = ReferenceForward::Open(std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-a-f32");
  ASSERT_TRUE(tied.ok()) << tied.status();
  const std::vector<double> tied_ref = (*tied)->Logits(tokens);
  ASSERT_EQ(ref.size(), tied_ref.size());
  double head_matters = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    head_matters = std::max(head_matters, std::fabs(ref[i] - tied_ref[i]));
  }
  EXPECT_GT(head_matters, 0.1);

  auto artifact = Artifact::Open(std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-a-untied.cortiq");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  const size_t vocab = ref.size() / tokens.size();
  for (const bool batched : {false, true}) {
    absl::StatusOr<std::vector<float>> engine = EngineLogits(**artifact, tokens, batched);
    ASSERT_TRUE(engine.ok()) << engine.status();
    const std::vector<float>& logits = *engine;
    for (size_t t = 0; t < tokens.size(); ++t) {
      double diff = 0;
      for (size_t v = 0; v < vocab; ++v) {
        diff = std::max(diff, std::fabs(logits[t * vocab + v] - ref[t * vocab + v]));
      }
      EXPECT_LE(diff, kTolerance) << "position " << t << (batched ? " batched" : "");
    }
  }
}

struct Variant {
  std::string name;      // file stem
  std::string gguf;      // the quantized (or f16) file
  std::string artifact;  // its cortiq-compile output
  std::string source;    // the unquantized GGUF it was made from (quantization error)
};

// ctest lists a parameterized case with its GetParam(): the file stem, not the struct's bytes.
void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

std::vector<Variant> Variants() {
  const std::string data = CORTIQ_TEST_DATA_DIR;
  const std::string artifacts = CORTIQ_ARTIFACT_DIR;
  std::vector<Variant> v;
  for (const char* name :
       {"tiny-e-Q4_K_M", "tiny-e-Q5_K_M", "tiny-e-Q3_K_M", "tiny-e-Q2_K", "tiny-e-IQ4_XS",
        "tiny-e-Q6_K", "tiny-e-Q5_K-pure", "tiny-e-Q4_K-pure", "tiny-e-Q3_K-pure",
        "tiny-e-Q2_K-pure", "tiny-e-IQ4_XS-pure", "tiny-e-IQ4_NL-pure", "tiny-e-Q4_1-pure",
        "tiny-e-Q5_0-pure", "tiny-e-Q5_1-pure", "tiny-e-Q4_0-pure", "tiny-e-Q8_0-pure"}) {
    v.push_back({name, data + "/models/tiny-e-gguf/" + name + ".gguf",
                 artifacts + "/" + name + ".cortiq", data + "/models/tiny-e-bf16.gguf"});
  }
  v.push_back({"tiny-a-f16", data + "/models/tiny-a-f16.gguf", artifacts + "/tiny-a-f16.cortiq",
               data + "/models/tiny-a-f32.gguf"});
  if (const char* dir = std::getenv("CORTIQ_EXTRA_GGUF_DIR")) {
    std::string source;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::filesystem::path& path = entry.path();
      if (path.extension() != ".gguf") continue;
      const std::string stem = path.stem().string();
      if (stem.size() > 4 && (stem.substr(stem.size() - 4) == "-f32" ||
                              stem.substr(stem.size() - 5) == "-bf16")) {
        source = path.string();
      } else {
        files.push_back(path);
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::filesystem::path artifact = path;
      artifact.replace_extension(".cortiq");
      if (std::filesystem::exists(artifact)) {
        v.push_back({"extra-" + path.stem().string(), path.string(), artifact.string(), source});
      }
    }
  }
  return v;
}

// The float64 logits of `source` over `tokens`, computed once per process and file.
const std::vector<double>& SourceLogits(const std::string& source,
                                        const std::vector<int32_t>& tokens) {
  static auto* cache = new std::map<std::string, std::vector<double>>();
  auto it = cache->find(source);
  if (it == cache->end()) {
    auto forward = ReferenceForward::Open(source);
    EXPECT_TRUE(forward.ok()) << forward.status();
    it = cache->emplace(source, forward.ok() ? (*forward)->Logits(tokens) : std::vector<double>())
             .first;
  }
  return it->second;
}

class GgufBlocksTest : public testing::TestWithParam<Variant> {};

TEST_P(GgufBlocksTest, EveryPositionMatchesTheFloat64ForwardOfItsOwnBlocks) {
  const Variant& variant = GetParam();
  // The 40 prompt tokens of the golden cases (ids below every test model's vocabulary).
  const std::vector<int32_t> tokens =
      ReadTokens(std::string(CORTIQ_TEST_DATA_DIR) + "/golden/tiny-a-f32-T40/tokens.json");
  ASSERT_FALSE(tokens.empty());

  auto artifact = Artifact::Open(variant.artifact);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  // No requantization: every weight the GGUF holds in blocks (or f16) keeps that format, Q4_0 /
  // Q8_0 / Q4_K on rows of whole 512-weight groups as q4_0x16 / q8_0x16 / q4_kx16: the GGUF's
  // blocks regrouped (Q4_K's scales unpacked).
  auto reader = OpenCheckpoint(variant.gguf, /*map_data=*/true);
  ASSERT_TRUE(reader.ok()) << reader.status();
  int regrouped = 0;
  const auto& weights = (*artifact)->plan().weights;
  for (size_t i = 0; i < weights.size(); ++i) {
    const WeightEntry& w = weights[i];
    const TensorSpec* spec = (*reader)->Find(w.name);
    if (spec == nullptr || w.shape.size() != 2) continue;  // derived (fused) or a vector
    const std::string type = absl::AsciiStrToLower((*reader)->StoredTypeName(w.name));
    const bool q4 = w.format == WeightFormat::kQ4_0x16;
    const bool q4_k = w.format == WeightFormat::kQ4_Kx16;
    const bool q5_k = w.format == WeightFormat::kQ5_Kx16;
    if (!q4 && !q4_k && !q5_k && w.format != WeightFormat::kQ8_0x16) {
      EXPECT_EQ(WeightFormatName(w.format), type) << w.name;
      continue;
    }
    EXPECT_EQ(type, q4 ? "q4_0" : q4_k ? "q4_k" : q5_k ? "q5_k" : "q8_0") << w.name;
    ASSERT_EQ(w.shape[1] % 512, 0) << w.name;
    auto raw = (*reader)->RawData(w.name);
    ASSERT_TRUE(raw.ok()) << raw.status();
    const size_t n = static_cast<size_t>(w.num_elements());
    // Q4_Kx16 / Q5_Kx16 add 8 bytes of unpacked scales per 512 weights; the others only
    // regroup.
    ASSERT_EQ(q4_k ? raw->size() / 288 * 296 : q5_k ? raw->size() / 352 * 360 : raw->size(),
              w.size_bytes)
        << w.name;
    std::vector<uint8_t> expected(w.size_bytes);
    if (q4) {
      ops::Q4_0ToQ4_0x16(raw->data(), n, expected.data());
    } else if (q4_k) {
      ops::Q4_KToQ4_Kx16(raw->data(), n, expected.data());
    } else if (q5_k) {
      ops::Q5_KToQ5_Kx16(raw->data(), n, expected.data());
    } else {
      ops::Q8_0ToQ8_0x16(raw->data(), n, expected.data());
    }
    EXPECT_EQ(0, std::memcmp(expected.data(), (*artifact)->weight_data(static_cast<int32_t>(i)),
                             expected.size()))
        << w.name;
    ++regrouped;
  }
  if (variant.name == "tiny-e-Q4_0-pure" || variant.name == "tiny-e-Q8_0-pure" ||
      variant.name == "tiny-e-Q4_K-pure" || variant.name == "tiny-e-Q5_K-pure") {
    EXPECT_GT(regrouped, 0) << "tiny-e's down_proj rows (512 weights) are stored regrouped";
  }

  auto forward = ReferenceForward::Open(variant.gguf);
  ASSERT_TRUE(forward.ok()) << forward.status();
  const std::vector<double> ref = (*forward)->Logits(tokens);
  const size_t vocab = ref.size() / tokens.size();
  ASSERT_EQ(static_cast<size_t>((*artifact)->plan().model.vocab_size), vocab);

  for (const size_t batch : {size_t{1}, size_t{0}}) {  // token by token; the compiled batch
    absl::StatusOr<std::vector<float>> engine = EngineLogits(**artifact, tokens, batch == 0);
    ASSERT_TRUE(engine.ok()) << engine.status();
    const std::vector<float>& logits = *engine;
    double worst = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      double diff = 0;
      for (size_t v = 0; v < vocab; ++v) {
        diff = std::max(diff, std::fabs(logits[t * vocab + v] - ref[t * vocab + v]));
      }
      EXPECT_LE(diff, kTolerance) << variant.name << " position " << t << " batch " << batch;
      worst = std::max(worst, diff);
    }
    // Quantization error against the unquantized source (reported, not bounded).
    if (variant.source.empty()) {
      std::printf("%s (%s): max |d| vs float64 of its own blocks %.3g; no *-f32.gguf or "
                  "*-bf16.gguf source in CORTIQ_EXTRA_GGUF_DIR: quantization error not measured\n",
                  variant.name.c_str(), batch == 1 ? "token by token" : "batched", worst);
      continue;
    }
    const std::vector<double>& source_ref = SourceLogits(variant.source, tokens);
    ASSERT_EQ(source_ref.size(), ref.size());
    double top1 = 0, kl = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      const double* p = &source_ref[t * vocab];
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
    RecordProperty("top1_vs_source", std::to_string(top1));
    RecordProperty("mean_kl_vs_source", std::to_string(kl));
    std::printf("%s (%s): max |d| vs float64 of its own blocks %.3g; vs the source: top-1 "
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

// cortiq-compile --weights MIX of tiny-e-bf16.gguf (compiled --no-opt, so every weight keeps its
// checkpoint name) against llama-quantize's file of the same type and source: the same type for
// every matrix, and the same bytes (q4_0 rows of whole 512-weight groups: stored q4_0x16, the
// same blocks regrouped). The one documented difference: a plain format (q6_k, q4_0) also
// quantizes per_layer_model_projection, which llama-quantize always leaves unquantized.
struct Requantized {
  std::string weights;  // --weights
  std::string gguf;     // llama-quantize's file of the same type
};

void PrintTo(const Requantized& r, std::ostream* os) { *os << r.weights << " vs " << r.gguf; }

class CompileWeightsTest : public testing::TestWithParam<Requantized> {};

TEST_P(CompileWeightsTest, BlocksAreLlamaQuantizesBytes) {
  const Requantized& param = GetParam();
  auto artifact = Artifact::Open(std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-bf16." +
                                 param.weights + ".cortiq");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  auto reader = OpenCheckpoint(std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-e-gguf/" +
                                   param.gguf + ".gguf",
                               /*map_data=*/true);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::vector<WeightEntry>& weights = (*artifact)->plan().weights;
  int compared = 0, matrices = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const WeightEntry& w = weights[i];
    if (w.shape.size() != 2) continue;
    ++matrices;
    const TensorSpec* spec = (*reader)->Find(w.name);
    ASSERT_NE(spec, nullptr) << w.name;
    const std::string type = absl::AsciiStrToLower((*reader)->StoredTypeName(w.name));
    const bool plain =
        param.weights == "q6_k" || param.weights == "q4_0" || param.weights == "q8_0";
    if (plain && w.name.find("per_layer_model_projection") != std::string::npos) {
      EXPECT_EQ(WeightFormatName(w.format), param.weights) << w.name;
      continue;
    }
    const bool regrouped = (w.format == WeightFormat::kQ4_0x16 && type == "q4_0") ||
                           (w.format == WeightFormat::kQ8_0x16 && type == "q8_0") ||
                           (w.format == WeightFormat::kQ4_Kx16 && type == "q4_k") ||
                           (w.format == WeightFormat::kQ5_Kx16 && type == "q5_k");
    if (!regrouped) {
      EXPECT_EQ(WeightFormatName(w.format), type) << w.name;
      if (WeightFormatName(w.format) != type) continue;
    }
    auto raw = (*reader)->RawData(w.name);
    ASSERT_TRUE(raw.ok()) << raw.status();
    const size_t n = static_cast<size_t>(w.num_elements());
    // Q4_Kx16: the llama-quantize super-blocks regrouped, 8 more bytes per 512 weights.
    ASSERT_EQ(w.format == WeightFormat::kQ4_Kx16   ? raw->size() / 288 * 296
              : w.format == WeightFormat::kQ5_Kx16 ? raw->size() / 352 * 360
                                                   : raw->size(),
              w.size_bytes)
        << w.name;
    std::vector<uint8_t> expected(raw->begin(), raw->end());
    if (regrouped && w.format == WeightFormat::kQ4_0x16) {
      ops::Q4_0ToQ4_0x16(raw->data(), n, expected.data());
    } else if (regrouped && w.format == WeightFormat::kQ4_Kx16) {
      expected.resize(w.size_bytes);
      ops::Q4_KToQ4_Kx16(raw->data(), n, expected.data());
    } else if (regrouped && w.format == WeightFormat::kQ5_Kx16) {
      expected.resize(w.size_bytes);
      ops::Q5_KToQ5_Kx16(raw->data(), n, expected.data());
    } else if (regrouped) {
      ops::Q8_0ToQ8_0x16(raw->data(), n, expected.data());
    }
    raw = absl::Span<const uint8_t>(expected);
    const uint8_t* ours = (*artifact)->weight_data(static_cast<int32_t>(i));
    size_t first = 0;
    while (first < raw->size() && ours[first] == (*raw)[first]) ++first;
    EXPECT_EQ(first, raw->size()) << w.name << " (" << type << "): first differing byte " << first
                                  << " of " << raw->size();
    ++compared;
  }
  // Every matrix of the model (the PLE projection aside under q6_k) was compared.
  EXPECT_EQ(compared, param.weights == "q6_k" || param.weights == "q4_0" || param.weights == "q8_0"
                          ? matrices - 1
                          : matrices);
  EXPECT_GE(compared, 20);
  std::printf("--weights %s: %d of %d matrices byte-identical to llama-quantize's %s\n",
              param.weights.c_str(), compared, matrices, param.gguf.c_str());
}

INSTANTIATE_TEST_SUITE_P(TinyE, CompileWeightsTest,
                         testing::Values(Requantized{"q4_k_m", "tiny-e-Q4_K_M"},
                                         Requantized{"q5_k_m", "tiny-e-Q5_K_M"},
                                         Requantized{"q6_k", "tiny-e-Q6_K"},
                                         Requantized{"q4_0", "tiny-e-Q4_0-pure"},
                                         Requantized{"q8_0", "tiny-e-Q8_0-pure"}),
                         [](const testing::TestParamInfo<Requantized>& info) {
                           return info.param.weights;
                         });

}  // namespace
}  // namespace cortiq
