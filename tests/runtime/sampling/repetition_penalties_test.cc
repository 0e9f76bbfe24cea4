// Tests of runtime/sampling/repetition_penalties.cc: the window, the three formulas, and the
// whole stage against the reference (reference_sampler.cc: counts the window with a std::map).
#include "runtime/sampling/repetition_penalties.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/sampling/reference_sampler.h"

namespace cortiq {
namespace sampling {
namespace {

using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(RepetitionPenaltiesTest, WindowKeepsTheLastN) {
  RepetitionPenalties p(3, 1.1f, 0.0f, 0.0f);
  for (int32_t t : {5, 5, 7, 8}) p.Accept(t);
  EXPECT_EQ(p.window_size(), 3);
  EXPECT_EQ(p.CountOf(5), 1);  // the first 5 left the window
  EXPECT_EQ(p.CountOf(7), 1);
  EXPECT_EQ(p.CountOf(8), 1);
  p.Accept(9);
  p.Accept(9);
  EXPECT_EQ(p.CountOf(5), 0);
  EXPECT_EQ(p.CountOf(7), 0);
  EXPECT_EQ(p.CountOf(8), 1);
  EXPECT_EQ(p.CountOf(9), 2);
  p.Reset();
  EXPECT_EQ(p.window_size(), 0);
  EXPECT_EQ(p.CountOf(9), 0);
}

TEST(RepetitionPenaltiesTest, UnboundedAndOffWindows) {
  RepetitionPenalties all(-1, 1.5f, 0.0f, 0.0f);
  for (int i = 0; i < 1000; ++i) all.Accept(3);
  EXPECT_EQ(all.CountOf(3), 1000);
  EXPECT_EQ(all.window_size(), 1000);
  RepetitionPenalties off(0, 1.5f, 1.0f, 1.0f);
  off.Accept(3);
  EXPECT_FALSE(off.active());
  EXPECT_EQ(off.CountOf(3), 0);
}

TEST(RepetitionPenaltiesTest, ActiveOnlyWhenSomePenaltyIsSet) {
  EXPECT_FALSE(RepetitionPenalties(64, 1.0f, 0.0f, 0.0f).active());
  EXPECT_TRUE(RepetitionPenalties(64, 1.1f, 0.0f, 0.0f).active());
  EXPECT_TRUE(RepetitionPenalties(64, 1.0f, 0.1f, 0.0f).active());
  EXPECT_TRUE(RepetitionPenalties(64, 1.0f, 0.0f, -0.1f).active());
}

TEST(RepetitionPenaltiesTest, RepeatPenaltyDividesPositiveAndMultipliesNegative) {
  RepetitionPenalties p(8, 2.0f, 0.0f, 0.0f);
  for (int32_t t : {0, 1, 2, 4}) p.Accept(t);
  TokenCandidates c(5);
  ASSERT_TRUE(c.Load({4.0f, -4.0f, 0.0f, 6.0f, -kInf}).ok());
  ASSERT_TRUE(p.Apply(&c).ok());
  EXPECT_EQ(c.logit[0], 2.0f);   // 4 / 2
  EXPECT_EQ(c.logit[1], -8.0f);  // -4 * 2
  EXPECT_EQ(c.logit[2], 0.0f);
  EXPECT_EQ(c.logit[3], 6.0f);   // not in the window
  EXPECT_EQ(c.logit[4], -kInf);  // stays banned
}

TEST(RepetitionPenaltiesTest, FrequencyAndPresenceAsOpenAiDefinesThem) {
  RepetitionPenalties p(16, 1.0f, 0.5f, 0.25f);
  for (int32_t t : {1, 1, 1, 2}) p.Accept(t);
  TokenCandidates c(3);
  ASSERT_TRUE(c.Load({1.0f, 1.0f, 1.0f}).ok());
  ASSERT_TRUE(p.Apply(&c).ok());
  EXPECT_EQ(c.logit[0], 1.0f);
  EXPECT_EQ(c.logit[1], 1.0f - 3 * 0.5f - 0.25f);
  EXPECT_EQ(c.logit[2], 1.0f - 1 * 0.5f - 0.25f);
}

TEST(RepetitionPenaltiesTest, MatchesReferenceOverRandomHistories) {
  std::mt19937 gen(11);
  const int32_t vocab = 50;
  for (int trial = 0; trial < 200; ++trial) {
    SamplingOptions o;
    o.repeat_last_n = static_cast<int32_t>(gen() % 40) - 1;  // -1 .. 38
    o.repeat_penalty = 0.5f + static_cast<float>(gen() % 100) / 50.0f;
    o.frequency_penalty = static_cast<float>(static_cast<int>(gen() % 200) - 100) / 100.0f;
    o.presence_penalty = static_cast<float>(static_cast<int>(gen() % 200) - 100) / 100.0f;
    RepetitionPenalties p(o.repeat_last_n, o.repeat_penalty, o.frequency_penalty,
                          o.presence_penalty);
    std::vector<int32_t> history;
    const int length = static_cast<int>(gen() % 120);
    for (int i = 0; i < length; ++i) {
      history.push_back(static_cast<int32_t>(gen() % 12));  // many repeats
      p.Accept(history.back());
    }
    std::vector<float> logits(vocab);
    for (float& l : logits) l = static_cast<float>(static_cast<int>(gen() % 2001) - 1000) / 100.0f;
    TokenCandidates c(vocab);
    ASSERT_TRUE(c.Load(logits).ok());
    ASSERT_TRUE(p.Apply(&c).ok());
    const std::vector<float> expected = reference::AdjustedLogits(logits, o, history);
    for (int32_t t = 0; t < vocab; ++t) ASSERT_EQ(c.logit[t], expected[t]) << trial << " " << t;
  }
}

TEST(RepetitionPenaltiesTest, ReportsOverflowToInfinity) {
  RepetitionPenalties p(4, 1e-38f, 0.0f, 0.0f);
  p.Accept(1);
  TokenCandidates c(2);
  ASSERT_TRUE(c.Load({0.0f, 100.0f}).ok());
  const absl::Status s = p.Apply(&c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("logit 100 of token 1"));
  EXPECT_THAT(s.message(), HasSubstr("into inf"));
}

TEST(RepetitionPenaltiesTest, RejectsHistoryOutsideTheVocabulary) {
  RepetitionPenalties p(4, 1.5f, 0.0f, 0.0f);
  p.Accept(7);
  TokenCandidates c(3);
  ASSERT_TRUE(c.Load({0.0f, 1.0f, 2.0f}).ok());
  EXPECT_THAT(p.Apply(&c).message(), HasSubstr("token 7 is out of range [0, 3)"));
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
