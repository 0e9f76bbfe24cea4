// Tests of runtime/sampling/logit_bias.cc.
#include "runtime/sampling/logit_bias.h"

#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace sampling {
namespace {

using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(LogitBiasTest, AddsBiasesAndSumsDuplicates) {
  TokenCandidates c(4);
  ASSERT_TRUE(c.Load({1.0f, 2.0f, 3.0f, 4.0f}).ok());
  const std::vector<LogitBias> biases = {{0, 0.5f}, {2, -1.0f}, {0, 0.25f}, {3, -kInf}};
  ASSERT_TRUE(ApplyLogitBias(biases, &c).ok());
  EXPECT_EQ(c.logit[0], 1.75f);
  EXPECT_EQ(c.logit[1], 2.0f);
  EXPECT_EQ(c.logit[2], 2.0f);
  EXPECT_EQ(c.logit[3], -kInf);
}

TEST(LogitBiasTest, EmptyChangesNothing) {
  TokenCandidates c(2);
  ASSERT_TRUE(c.Load({1.0f, 2.0f}).ok());
  c.EnsureWeights();
  ASSERT_TRUE(ApplyLogitBias({}, &c).ok());
  EXPECT_TRUE(c.has_weights);
  EXPECT_EQ(c.logit[1], 2.0f);
}

TEST(LogitBiasTest, InvalidatesWeights) {
  TokenCandidates c(2);
  ASSERT_TRUE(c.Load({1.0f, 2.0f}).ok());
  c.EnsureWeights();
  const std::vector<LogitBias> biases = {{0, 3.0f}};
  ASSERT_TRUE(ApplyLogitBias(biases, &c).ok());
  EXPECT_FALSE(c.has_weights);
}

TEST(LogitBiasTest, Errors) {
  TokenCandidates c(3);
  ASSERT_TRUE(c.Load({1.0f, 3e38f, 0.0f}).ok());
  std::vector<LogitBias> out_of_range = {{1, 0.0f}, {3, 1.0f}};
  absl::Status s = ApplyLogitBias(out_of_range, &c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("logit_bias[1]: token 3 is out of range [0, 3)"));
  std::vector<LogitBias> negative = {{-1, 1.0f}};
  EXPECT_THAT(ApplyLogitBias(negative, &c).message(), HasSubstr("token -1 is out of range"));
  std::vector<LogitBias> overflow = {{1, 3e38f}};
  s = ApplyLogitBias(overflow, &c);
  EXPECT_THAT(s.message(), HasSubstr("logit_bias[0]: bias 3e+38 on token 1"));
  EXPECT_THAT(s.message(), HasSubstr("gives inf"));
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
