// Golden logits: every position of every case in tests/data/golden, compiled with and without the
// pass pipeline and from the llama.cpp-converted GGUF of the same checkpoint ("gguf"), against the float64 reference (max |Δ| ≤ 1e-3, same argmax) and against
// llama.cpp (≤ 2.5e-2 for F32, ≤ 0.3 for BF16; same argmax where llama.cpp's top two logits are
// further apart than that tolerance).
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

constexpr float kReferenceTolerance = 1e-3f;

size_t ArgMax(const float* row, size_t n) { return std::max_element(row, row + n) - row; }

// Gap between the largest and the second-largest value of `row`.
float TopTwoGap(const float* row, size_t n) {
  float first = -INFINITY, second = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    if (row[i] > first) {
      second = first;
      first = row[i];
    } else if (row[i] > second) {
      second = row[i];
    }
  }
  return first - second;
}

class GoldenTest : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GoldenTest, EveryPositionMatchesTheReferences) {
  const auto& [case_name, mode] = GetParam();
  GoldenCase golden = LoadGoldenCase(case_name);
  ASSERT_FALSE(golden.tokens.empty());
  auto artifact = Artifact::Open(ArtifactPath(golden.model, mode));
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  auto session = Session::Create(**artifact, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status();

  const size_t vocab = golden.logits_ref.size() / golden.tokens.size();
  ASSERT_EQ(static_cast<size_t>((*artifact)->plan().model.vocab_size), vocab);
  const float llama_tolerance = golden.model == "tiny-a-bf16" ? 0.3f : 2.5e-2f;
  float worst_ref = 0.0f, worst_llama = 0.0f;
  for (size_t t = 0; t < golden.tokens.size(); ++t) {
    ASSERT_TRUE((*session)->Eval(golden.tokens[t], /*want_logits=*/true).ok());
    absl::Span<const float> logits = (*session)->logits();
    ASSERT_EQ(logits.size(), vocab);
    const float* ref = &golden.logits_ref[t * vocab];
    const float* llama = &golden.logits_llama[t * vocab];
    float diff_ref = 0.0f, diff_llama = 0.0f;
    for (size_t v = 0; v < vocab; ++v) {
      ASSERT_TRUE(std::isfinite(logits[v])) << "position " << t << " logit " << v;
      diff_ref = std::max(diff_ref, std::fabs(logits[v] - ref[v]));
      diff_llama = std::max(diff_llama, std::fabs(logits[v] - llama[v]));
    }
    EXPECT_LE(diff_ref, kReferenceTolerance) << case_name << " position " << t;
    EXPECT_LE(diff_llama, llama_tolerance) << case_name << " position " << t;
    EXPECT_EQ(ArgMax(logits.data(), vocab), ArgMax(ref, vocab)) << "position " << t;
    if (TopTwoGap(llama, vocab) > llama_tolerance) {
      EXPECT_EQ(ArgMax(logits.data(), vocab), ArgMax(llama, vocab)) << "position " << t;
    }
    worst_ref = std::max(worst_ref, diff_ref);
    worst_llama = std::max(worst_llama, diff_llama);
  }
  RecordProperty("max_abs_diff_vs_reference", std::to_string(worst_ref));
  RecordProperty("max_abs_diff_vs_llama_cpp", std::to_string(worst_llama));
  std::printf("%s (%s): max |Δ| vs reference %.3g, vs llama.cpp %.3g\n", case_name.c_str(),
              mode.c_str(), worst_ref, worst_llama);
}

INSTANTIATE_TEST_SUITE_P(
    AllCases, GoldenTest,
    testing::Combine(testing::Values("tiny-a-f32-T6", "tiny-a-f32-T40", "tiny-a-bf16-T40"),
                     testing::Values("opt", "no-opt", "gguf")),
    [](const testing::TestParamInfo<GoldenTest::ParamType>& info) {
      std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

}  // namespace
}  // namespace cortiq
