// The opt-in lower-precision prefills (SessionOptions::prefill_activations) on the golden cases'
// artifacts: q8_0 on their Q8_0 and Q4_0 artifacts, bf16 on the BF16 checkpoint's. Against the
// exact prefill of the same artifact (itself checked against the float64 forward of its blocks
// in golden_test.cc, gguf_blocks_test.cc, quant_test.cc), every position's logits move, but
// within the bound of rounding the matrices' inputs (to 8 bits, to bf16), and the argmax holds
// wherever the exact logits' top two are clearly apart; the decode after the prompt runs the
// exact kernels; and for the formats an option does not apply to, nothing changes (bit for
// bit).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

// Measured on tiny-a (random weights, hidden 64: every activation block is half a row, so the
// 8-bit rounding does not average out), max |q8_0 - f32 prefill logits| over every position of
// T40: 0.42 / 0.36 (f32 / bf16 checkpoint, Q8_0 artifact), 0.39 / 0.48 (Q4_0 with Q8_0 tables);
// top-1 39-40 of 40 (the misses near ties). So this option is NOT within the 1e-3 golden
// tolerance: it trades exactness for speed, as llama.cpp does. The bound keeps a 3x margin; a
// wrong block, scale or offset moves logits by far more (tests/ops checks the kernel bit for bit
// against its formula).
constexpr float kQ8LogitsBound = 1.5f;
// bf16 activations, measured the same way: max |bf16 - f32 prefill logits| 0.132 on the BF16
// checkpoint's artifact (top-1 39 of 40, the miss at a near tie), 0.021-0.024 on the Q8_0 / Q4_0
// artifacts (only their per-layer projections are BF16). Rounding an activation to bf16 moves it
// by at most 2^-9 of itself (Q8_0 blocks: up to 1/254 of the block's largest value), so the
// deviation is a few times smaller than q8_0's; again a 3x margin.
constexpr float kBF16LogitsBound = 0.4f;
// An argmax must hold where the exact top two are further apart than this.
constexpr float kClearGap = 1.0f;

std::unique_ptr<Session> NewSession(const Artifact& artifact, PrefillActivations activations) {
  SessionOptions options;
  options.ctx_size = 128;
  options.prefill_activations = activations;
  auto session = Session::Create(artifact, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

struct Deviation {
  float max_abs = 0;   // max |option - exact| over positions and vocabulary
  int clear_misses = 0;
  int top1_same = 0;
  bool bit_identical = true;
};

// True if a matrix of `artifact` is stored as BF16 (the weights the bf16 option applies to).
bool HasBF16Weights(const Artifact& artifact) {
  for (const WeightEntry& w : artifact.plan().weights) {
    if (w.format == WeightFormat::kBF16 && w.shape.size() == 2) return true;
  }
  return false;
}

Deviation Measure(const std::string& case_name, const std::string& variant,
                  PrefillActivations activations) {
  const GoldenCase golden = LoadGoldenCase(case_name);
  auto artifact = Artifact::Open(ArtifactPath(golden.model, variant));
  EXPECT_TRUE(artifact.ok()) << artifact.status();
  if (!artifact.ok()) return {};
  const size_t vocab = static_cast<size_t>((*artifact)->plan().model.vocab_size);
  std::unique_ptr<Session> exact = NewSession(**artifact, PrefillActivations::kF32);
  std::unique_ptr<Session> q8 = NewSession(**artifact, activations);
  EXPECT_TRUE(exact->EvalBatch(golden.tokens, BatchLogits::kAll).ok());
  EXPECT_TRUE(q8->EvalBatch(golden.tokens, BatchLogits::kAll).ok());
  Deviation d;
  for (size_t t = 0; t < golden.tokens.size(); ++t) {
    const absl::Span<const float> a = exact->batch_logits(t), b = q8->batch_logits(t);
    const size_t arg_a = std::max_element(a.begin(), a.end()) - a.begin();
    const size_t arg_b = std::max_element(b.begin(), b.end()) - b.begin();
    float second = -INFINITY;
    for (size_t v = 0; v < vocab; ++v) {
      d.max_abs = std::max(d.max_abs, std::fabs(a[v] - b[v]));
      if (a[v] != b[v]) d.bit_identical = false;
      if (v != arg_a) second = std::max(second, a[v]);
    }
    d.top1_same += arg_a == arg_b;
    if (arg_a != arg_b && a[arg_a] - second > kClearGap) ++d.clear_misses;
  }
  // The next token is decoded with the exact kernels on both: it differs only through the
  // caches the prompt wrote.
  EXPECT_TRUE(exact->Eval(golden.tokens[0], true).ok());
  EXPECT_TRUE(q8->Eval(golden.tokens[0], true).ok());
  std::printf("%s %s: %s prefill activations, max |logits - exact| %.3g, top-1 %d of %zu\n",
              case_name.c_str(), variant.c_str(), PrefillActivationsName(activations), d.max_abs,
              d.top1_same, golden.tokens.size());
  return d;
}

class PrefillActivationsTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (LoadGoldenCase(GetParam()).tokens.size() <= 8) {
      GTEST_SKIP() << "a prompt of 8 tokens or fewer runs the exact few-rows kernels";
    }
  }
};

TEST_P(PrefillActivationsTest, Q8LogitsStayWithinTheEightBitBound) {
  for (const char* variant : {"q8_0", "q4_0-tables"}) {
    SCOPED_TRACE(variant);
    const Deviation d = Measure(GetParam(), variant, PrefillActivations::kQ8_0);
    EXPECT_FALSE(d.bit_identical) << "the option changed nothing";
    EXPECT_LE(d.max_abs, kQ8LogitsBound);
    EXPECT_EQ(d.clear_misses, 0);
  }
}

TEST_P(PrefillActivationsTest, Q8LeavesOtherFormatsUnchanged) {
  // f32 / bf16 weights: the option applies to Q8_0 and Q4_0 matrices only.
  const Deviation d = Measure(GetParam(), "opt", PrefillActivations::kQ8_0);
  EXPECT_TRUE(d.bit_identical);
}

// The bf16 option changes the products of BF16 matrices: all of a BF16 checkpoint's, and in
// the Q8_0 / Q4_0 artifacts those kept in BF16 (the per-layer projections, whose 16 columns
// make no 32-weight block); an artifact with none (tiny-a-f32's) is unchanged bit for bit.
TEST_P(PrefillActivationsTest, BF16LogitsStayWithinTheRoundingBound) {
  const GoldenCase golden = LoadGoldenCase(GetParam());
  for (const char* variant : {"opt", "q8_0", "q4_0-tables"}) {
    SCOPED_TRACE(variant);
    auto artifact = Artifact::Open(ArtifactPath(golden.model, variant));
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    const Deviation d = Measure(GetParam(), variant, PrefillActivations::kBF16);
    if (!HasBF16Weights(**artifact)) {
      EXPECT_TRUE(d.bit_identical) << "no BF16 matrix, yet the option changed the logits";
      continue;
    }
    EXPECT_FALSE(d.bit_identical) << "the option changed nothing";
    EXPECT_LE(d.max_abs, kBF16LogitsBound);
    EXPECT_EQ(d.clear_misses, 0);
  }
}

// Decoding stays exact under an option, also when more sessions than the few-rows kernels take
// decode together (Session::EvalAcross, cortiq-server --parallel > 8): the logits are those of
// sessions without the option, bit for bit.
TEST(PrefillActivationsAcrossTest, DecodingManySessionsTogetherStaysExact) {
  const GoldenCase golden = LoadGoldenCase("tiny-a-bf16-T40");
  for (const auto& [variant, activations] :
       {std::pair{"q8_0", PrefillActivations::kQ8_0}, std::pair{"opt", PrefillActivations::kBF16}}) {
    SCOPED_TRACE(variant);
    auto artifact = Artifact::Open(ArtifactPath(golden.model, variant));
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    constexpr size_t kSessions = 12;
    std::vector<std::unique_ptr<Session>> exact, option;
    std::vector<Session*> exact_ptrs, option_ptrs;
    std::vector<int32_t> tokens;
    for (size_t i = 0; i < kSessions; ++i) {
      exact.push_back(NewSession(**artifact, PrefillActivations::kF32));
      option.push_back(NewSession(**artifact, activations));
      ASSERT_TRUE(exact.back() && option.back());
      const int32_t first = golden.tokens[i % golden.tokens.size()];
      ASSERT_TRUE(exact.back()->Eval(first, true).ok());
      ASSERT_TRUE(option.back()->Eval(first, true).ok());
      exact_ptrs.push_back(exact.back().get());
      option_ptrs.push_back(option.back().get());
      tokens.push_back(golden.tokens[(i + 1) % golden.tokens.size()]);
    }
    for (int step = 0; step < 3; ++step) {
      ASSERT_TRUE(Session::EvalAcross(exact_ptrs, tokens).ok());
      ASSERT_TRUE(Session::EvalAcross(option_ptrs, tokens).ok());
      for (size_t i = 0; i < kSessions; ++i) {
        const absl::Span<const float> a = exact[i]->logits(), b = option[i]->logits();
        ASSERT_EQ(a.size(), b.size());
        EXPECT_EQ(memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
            << "session " << i << " step " << step;
      }
    }
  }
}

TEST(PrefillActivationsNamesTest, RoundTripAndRejectUnknown) {
  for (PrefillActivations a :
       {PrefillActivations::kF32, PrefillActivations::kQ8_0, PrefillActivations::kBF16}) {
    EXPECT_EQ(PrefillActivationsFromName(PrefillActivationsName(a)), a);
  }
  EXPECT_STREQ(PrefillActivationsName(PrefillActivations::kBF16), "bf16");
  EXPECT_FALSE(PrefillActivationsFromName("q4_0").has_value());
  EXPECT_FALSE(PrefillActivationsFromName("BF16").has_value());
  EXPECT_FALSE(PrefillActivationsFromName("").has_value());
}

TEST(PrefillActivationsNamesTest, SessionRejectsAValueOutsideTheEnum) {
  const GoldenCase golden = LoadGoldenCase("tiny-a-f32-T40");
  auto artifact = Artifact::Open(ArtifactPath(golden.model, "opt"));
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  SessionOptions options;
  options.prefill_activations = static_cast<PrefillActivations>(7);
  auto session = Session::Create(**artifact, options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("prefill_activations"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AllCases, PrefillActivationsTest, testing::ValuesIn(GoldenCaseNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace cortiq
