// Tests of runtime/sampling/draw.cc: argmax ties, the mapping from the uniform number to the
// token against the reference (f64 std::exp softmax), never drawing a zero-probability token,
// one generator output per draw, and the distribution of many seeded draws (chi-square).
#include "runtime/sampling/draw.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/sampling/truncation.h"
#include "tests/runtime/sampling/chi_square.h"
#include "tests/runtime/sampling/reference_sampler.h"

namespace cortiq {
namespace sampling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TokenCandidates Loaded(const std::vector<float>& logits) {
  TokenCandidates c(static_cast<int32_t>(logits.size()));
  EXPECT_TRUE(c.Load(logits).ok());
  return c;
}

TEST(ArgmaxTokenTest, HighestLogitTiesToLowestId) {
  EXPECT_EQ(ArgmaxToken(Loaded({1, 3, 2, 3})), 1);
  EXPECT_EQ(ArgmaxToken(Loaded({-kInf, -kInf, 0.5f})), 2);
  EXPECT_EQ(ArgmaxToken(Loaded({7})), 0);
  // In any order of the set.
  TokenCandidates c = Loaded({0, 5, 5, 1});
  std::swap(c.id[1], c.id[2]);
  EXPECT_EQ(ArgmaxToken(c), 1);
}

TEST(DrawTokenTest, MatchesReferenceForTheSameUniform) {
  std::mt19937 gen(3);
  Xoshiro256StarStar rng(99);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + static_cast<int>(gen() % 300);
    std::vector<float> logits(static_cast<size_t>(n));
    for (float& l : logits) l = static_cast<float>(static_cast<int>(gen() % 4001) - 2000) / 200.0f;
    const float temperature = 0.1f + static_cast<float>(gen() % 30) / 10.0f;
    TokenCandidates c = Loaded(logits);
    const int32_t k = static_cast<int32_t>(gen() % 50);  // sometimes sorted
    ApplyTopK(k, &c);
    const reference::Set set = reference::TopK(reference::AllTokens(logits), k);
    Xoshiro256StarStar copy = rng;
    const double u = copy.NextUniform();
    ASSERT_EQ(DrawToken(temperature, &rng, &c), reference::DrawWithUniform(set, temperature, u))
        << trial;
    ASSERT_EQ(rng.state(), copy.state()) << "one output per draw";
  }
}

TEST(DrawTokenTest, NeverDrawsAZeroProbabilityToken) {
  Xoshiro256StarStar rng(1);
  for (int i = 0; i < 10000; ++i) {
    TokenCandidates c = Loaded({-kInf, 0.0f, -kInf, -200.0f});
    ASSERT_EQ(DrawToken(1.0f, &rng, &c), 1);
  }
}

TEST(DrawTokenTest, TheRunningSumMustExceedTheTarget) {
  // Four weights of exactly 1: u = 0.25 puts the target at 1.0, which the first candidate's
  // running sum reaches but does not exceed.
  TokenCandidates c = Loaded({0, 0, 0, 0});
  EXPECT_EQ(DrawTokenForUniform(1.0f, 0.25, &c), 1);
  EXPECT_EQ(DrawTokenForUniform(1.0f, 0.0, &c), 0);
  EXPECT_EQ(DrawTokenForUniform(1.0f, 0.9999999999, &c), 3);
  // u = 0 never picks a leading candidate of weight 0.
  c = Loaded({-kInf, -kInf, 1.0f, 1.0f});
  EXPECT_EQ(DrawTokenForUniform(1.0f, 0.0, &c), 2);
  EXPECT_EQ(DrawTokenForUniform(0.5f, 0.0, &c), 2);
  // The largest u below 1 never runs past the last candidate that has weight.
  c = Loaded({1.0f, 1.0f, -kInf, -kInf});
  EXPECT_EQ(DrawTokenForUniform(1.0f, 1.0 - 0x1.0p-53, &c), 1);
}

TEST(DrawTokenTest, SeededDrawsFollowTheSoftmax) {
  const std::vector<float> logits = {0.0f, 1.0f, 2.0f, -1.0f, 0.5f, 1.5f, -0.5f, 0.25f};
  for (float temperature : {1.0f, 0.5f, 2.0f}) {
    Xoshiro256StarStar rng(2024);
    std::vector<int64_t> counts(logits.size(), 0);
    constexpr int kDraws = 200000;
    for (int i = 0; i < kDraws; ++i) {
      TokenCandidates c = Loaded(logits);
      ++counts[static_cast<size_t>(DrawToken(temperature, &rng, &c))];
    }
    const std::vector<double> p =
        reference::Probabilities(reference::AllTokens(logits), temperature);
    const double statistic = ChiSquare(counts, p);
    EXPECT_LT(statistic, ChiSquareCritical001(static_cast<int>(logits.size()) - 1))
        << "temperature " << temperature;
  }
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
