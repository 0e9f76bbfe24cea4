// Tests of runtime/sampling/token_candidates.cc: Load's checks, the maximum, the weights and
// their fixed-order sum, and KeepIf.
#include "runtime/sampling/token_candidates.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace sampling {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<int32_t> Ids(const TokenCandidates& c) {
  return std::vector<int32_t>(c.id.begin(), c.id.begin() + c.size);
}

TEST(CanonicalBeforeTest, HigherLogitThenLowerId) {
  EXPECT_TRUE(CanonicalBefore(2.0f, 9, 1.0f, 0));
  EXPECT_FALSE(CanonicalBefore(1.0f, 0, 2.0f, 9));
  EXPECT_TRUE(CanonicalBefore(1.0f, 3, 1.0f, 4));
  EXPECT_FALSE(CanonicalBefore(1.0f, 4, 1.0f, 3));
  EXPECT_FALSE(CanonicalBefore(1.0f, 4, 1.0f, 4));
  EXPECT_TRUE(CanonicalBefore(-kInf, 0, -kInf, 1));
}

TEST(TokenCandidatesTest, LoadsEveryTokenInIdOrder) {
  TokenCandidates c(4);
  ASSERT_TRUE(c.Load({0.5f, -kInf, 3.0f, -2.0f}).ok());
  EXPECT_EQ(c.size, 4);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(c.logit[2], 3.0f);
  EXPECT_FALSE(c.sorted);
  EXPECT_FALSE(c.has_weights);
  EXPECT_EQ(c.MaxLogit(), 3.0f);
}

TEST(TokenCandidatesTest, LoadRejectsNanInfAndWrongSize) {
  TokenCandidates c(3);
  absl::Status s = c.Load({0.0f, std::nanf(""), 1.0f});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("logits[1] is NaN"));
  s = c.Load({0.0f, 1.0f, kInf});
  EXPECT_THAT(s.message(), HasSubstr("logits[2] is +inf"));
  s = c.Load({0.0f, 1.0f});
  EXPECT_THAT(s.message(), HasSubstr("logits has 2 entries, the vocabulary has 3"));
}

TEST(TokenCandidatesTest, MaxLogitOfAnySizeAndAllMinusInf) {
  for (int n : {1, 7, 8, 9, 17, 100}) {
    TokenCandidates c(n);
    std::vector<float> logits(static_cast<size_t>(n), -1.0f);
    logits[static_cast<size_t>(n - 1)] = 4.0f;
    ASSERT_TRUE(c.Load(logits).ok());
    EXPECT_EQ(c.MaxLogit(), 4.0f) << n;
    std::vector<float> all_banned(static_cast<size_t>(n), -kInf);
    ASSERT_TRUE(c.Load(all_banned).ok());
    EXPECT_EQ(c.MaxLogit(), -kInf) << n;
  }
}

TEST(TokenCandidatesTest, WeightsAreExpOfLogitMinusMax) {
  TokenCandidates c(11);
  std::vector<float> logits = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -kInf};
  ASSERT_TRUE(c.Load(logits).ok());
  c.EnsureWeights();
  EXPECT_TRUE(c.has_weights);
  EXPECT_EQ(c.weight_shift, 10.0f);
  double expected_sum = 0;
  for (int i = 0; i < 11; ++i) {
    const double expected = std::exp(static_cast<double>(logits[i]) - 10.0);
    EXPECT_NEAR(c.weight[i], expected, 1e-6 * expected) << i;
    expected_sum += expected;
  }
  EXPECT_EQ(c.weight[9], 1.0f);
  EXPECT_EQ(c.weight[10], 0.0f);
  EXPECT_NEAR(c.WeightSum(), expected_sum, 1e-6 * expected_sum);
}

TEST(TokenCandidatesTest, WeightSumIsExactForRepresentableSums) {
  TokenCandidates c(37);
  std::vector<float> logits(37, 0.0f);  // every weight exactly 1
  ASSERT_TRUE(c.Load(logits).ok());
  c.EnsureWeights();
  EXPECT_EQ(c.WeightSum(), 37.0);
  c.size = 5;
  EXPECT_EQ(c.WeightSum(), 5.0);
}

TEST(TokenCandidatesTest, KeepIfKeepsOrderAndWeights) {
  TokenCandidates c(6);
  ASSERT_TRUE(c.Load({0, 1, 2, 3, 4, 5}).ok());
  c.EnsureWeights();
  const float w4 = c.weight[4];
  c.KeepIf([&](int64_t i) { return c.id[i] % 2 == 0; });
  EXPECT_THAT(Ids(c), ElementsAre(0, 2, 4));
  EXPECT_EQ(c.logit[2], 4.0f);
  EXPECT_EQ(c.weight[2], w4);
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
