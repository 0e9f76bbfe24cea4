// Tests of runtime/sampling/truncation.cc: each stage against the plain reference
// (reference_sampler.cc: f64, std::exp/std::log, full sorts) on fixed and random logits, and the
// edge cases: ties, p = 1, k = 0, k > vocabulary, all -inf but one, min_keep.
#include "runtime/sampling/truncation.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/sampling/reference_sampler.h"

namespace cortiq {
namespace sampling {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<int32_t> Ids(const TokenCandidates& c) {
  return std::vector<int32_t>(c.id.begin(), c.id.begin() + c.size);
}

TokenCandidates Loaded(const std::vector<float>& logits) {
  TokenCandidates c(static_cast<int32_t>(logits.size()));
  EXPECT_TRUE(c.Load(logits).ok());
  return c;
}

// Logits of three shapes: "peaked" (a few dozen tokens well above a normal tail, like a
// language model's), "flat" (normal with sigma 2: the nucleus holds a third of the vocabulary)
// and "ties" (integers 0..7, so most logits tie).
std::vector<float> RandomLogits(int n, int shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;  // only the test's data; any values do
  std::vector<float> logits(static_cast<size_t>(n));
  for (float& l : logits) {
    switch (shape) {
      case 0:
        l = static_cast<float>(normal(gen) * 1.5);
        break;
      case 1:
        l = static_cast<float>(normal(gen) * 2.0);
        break;
      default:
        l = static_cast<float>(gen() % 8);
        break;
    }
  }
  if (shape == 0) {
    for (int j = 0; j < 40 && j < n; ++j) {
      logits[static_cast<size_t>(gen() % static_cast<uint32_t>(n))] =
          static_cast<float>(6.0 + (gen() % 8000) / 1000.0);
    }
  }
  return logits;
}

// --- top-k ---

TEST(TopKTest, KeepsHighestWithTiesToLowerId) {
  TokenCandidates c = Loaded({1, 3, 3, 2, 3});
  ApplyTopK(2, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1, 2));
  EXPECT_TRUE(c.sorted);
  c = Loaded({1, 3, 3, 2, 3});
  ApplyTopK(4, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1, 2, 4, 3));
}

TEST(TopKTest, ZeroAndAtLeastVocabularyChangeNothing) {
  for (int32_t k : {0, -1, 5, 6, 1000}) {
    TokenCandidates c = Loaded({1, 0, 4, 2, 3});
    ApplyTopK(k, &c);
    EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2, 3, 4)) << k;
    EXPECT_FALSE(c.sorted) << k;
  }
}

TEST(TopKTest, AllMinusInfButOne) {
  TokenCandidates c = Loaded({-kInf, -kInf, 5, -kInf});
  ApplyTopK(1, &c);
  EXPECT_THAT(Ids(c), ElementsAre(2));
  c = Loaded({-kInf, -kInf, 5, -kInf});
  ApplyTopK(2, &c);
  EXPECT_THAT(Ids(c), ElementsAre(2, 0));
}

TEST(TopKTest, SortedInputIsCutToAPrefix) {
  TokenCandidates c = Loaded({1, 5, 3, 4});
  ApplyTopK(3, &c);
  ASSERT_THAT(Ids(c), ElementsAre(1, 3, 2));
  ApplyTopK(2, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1, 3));
}

TEST(TopKTest, MatchesReference) {
  for (int shape = 0; shape < 3; ++shape) {
    for (int n : {10, 3000, 262144}) {
      const std::vector<float> logits = RandomLogits(n, shape, 100 + shape);
      for (int32_t k : {1, 7, 64, 1000, 2999}) {
        if (k >= n && n != 10) continue;
        if (n == 262144 && k != 64 && k != 1) continue;  // a reference sort each
        TokenCandidates c = Loaded(logits);
        ApplyTopK(k, &c);
        const reference::Set expected = reference::TopK(reference::AllTokens(logits), k);
        ASSERT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected)))
            << "shape " << shape << " n " << n << " k " << k;
        for (int64_t i = 0; i < c.size; ++i) ASSERT_EQ(c.logit[i], logits[c.id[i]]);
      }
    }
  }
}

TEST(TopKTest, SignedZerosTie) {
  // -0 == +0: a tie, broken by id, in the block test (integer images) as in the comparisons.
  std::vector<float> logits(5000, -1.0f);
  for (int i = 0; i < 5000; i += 7) logits[static_cast<size_t>(i)] = (i % 2) ? -0.0f : 0.0f;
  for (int32_t k : {3, 100, 700}) {
    TokenCandidates c = Loaded(logits);
    ApplyTopK(k, &c);
    const reference::Set expected = reference::TopK(reference::AllTokens(logits), k);
    EXPECT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected))) << k;
  }
}

TEST(LoadTopKTest, SameAsLoadThenTopK) {
  for (int shape = 0; shape < 3; ++shape) {
    const std::vector<float> logits = RandomLogits(70000, shape, 500 + shape);
    for (int32_t k : {0, 1, 40, 64, 5000, 69999, 70000, 100000}) {
      TokenCandidates fused(70000);
      ASSERT_TRUE(LoadTopK(logits, k, &fused).ok());
      TokenCandidates separate = Loaded(logits);
      ApplyTopK(k, &separate);
      ASSERT_THAT(Ids(fused), ElementsAreArray(Ids(separate))) << shape << " " << k;
      EXPECT_EQ(fused.sorted, separate.sorted);
      for (int64_t i = 0; i < fused.size; ++i) ASSERT_EQ(fused.logit[i], separate.logit[i]);
      EXPECT_EQ(fused.MaxLogit(), separate.MaxLogit());
    }
  }
}

TEST(LoadTopKTest, RejectsNanAndInfAnywhere) {
  for (int64_t at : {0, 5, 127, 128, 129, 2000, 4095}) {
    for (float bad : {std::nanf(""), -std::nanf(""), kInf}) {
      std::vector<float> logits(4096, 0.5f);
      logits[static_cast<size_t>(at)] = bad;
      TokenCandidates c(4096);
      const absl::Status s = LoadTopK(logits, 64, &c);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << at;
      EXPECT_THAT(std::string(s.message()),
                  ::testing::HasSubstr("logits[" + std::to_string(at) + "]"));
      EXPECT_EQ(c.size, 0);
    }
  }
}

TEST(LoadTopKTest, AllMinusInfButOne) {
  std::vector<float> logits(3000, -kInf);
  logits[2500] = -3.0f;
  TokenCandidates c(3000);
  ASSERT_TRUE(LoadTopK(logits, 64, &c).ok());
  ASSERT_EQ(c.size, 64);
  EXPECT_EQ(c.id[0], 2500);
  EXPECT_EQ(c.id[1], 0);  // then the -inf ones, by id
  EXPECT_EQ(c.id[63], 62);
}

// --- top-p ---

TEST(TopPTest, OneChangesNothing) {
  TokenCandidates c = Loaded({1, 0, 4, 2});
  ApplyTopP(1.0f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2, 3));
}

TEST(TopPTest, TiesGoToLowerIdAndTheBoundaryIsInclusive) {
  // Four equal probabilities of exactly 1/4: p = 0.5 is reached after two.
  TokenCandidates c = Loaded({0, 0, 0, 0});
  ApplyTopP(0.5f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1));
  c = Loaded({0, 0, 0, 0});
  ApplyTopP(0.51f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2));
}

TEST(TopPTest, BoundaryIsInclusiveAfterTopKToo) {
  // The same four quarters, sorted by top-k first (the prefix walk instead of the histogram).
  TokenCandidates c = Loaded({0, 0, 0, 0, -kInf});
  ApplyTopK(4, &c);
  ASSERT_TRUE(c.sorted);
  ApplyTopP(0.5f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1));
  c = Loaded({0, 0, 0, 0, -kInf});
  ApplyTopK(4, &c);
  ApplyTopP(0.51f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2));
}

TEST(TopPTest, SmallPKeepsTheMostLikelyAndMinKeepMore) {
  TokenCandidates c = Loaded({1, 3, 3, 2});
  ApplyTopP(1e-6f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1));
  c = Loaded({1, 3, 3, 2});
  ApplyTopP(1e-6f, 3, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1, 2, 3));  // id order kept
}

TEST(TopPTest, AllMinusInfButOne) {
  TokenCandidates c = Loaded({-kInf, 3, -kInf, -kInf});
  ApplyTopP(0.9f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1));
}

TEST(TopPTest, MatchesReferenceSortedAndUnsorted) {
  for (int shape = 0; shape < 3; ++shape) {
    for (int n : {50, 5000, 262144}) {
      const std::vector<float> logits = RandomLogits(n, shape, 200 + shape);
      for (float p : {0.05f, 0.3f, 0.9f, 0.95f, 0.999f}) {
        // The full vocabulary size (a reference sort each) for the common p only.
        if (n == 262144 && p != 0.95f && p != 0.3f) continue;
        for (int32_t k : {0, 40}) {
          if (n == 262144 && k != 0) continue;
          TokenCandidates c = Loaded(logits);
          ApplyTopK(k, &c);
          ApplyTopP(p, 0, &c);
          reference::Set expected = reference::TopK(reference::AllTokens(logits), k);
          expected = reference::TopP(expected, p, 0);
          ASSERT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected)))
              << "shape " << shape << " n " << n << " p " << p << " k " << k;
        }
      }
    }
  }
}

TEST(TopPTest, NucleusInsideAndBeyondTheProbe) {
  // A large unsorted set whose nucleus holds 1..3000 tokens: within the 256 probed first, and
  // past them (the histogram).
  for (int top : {1, 10, 255, 256, 257, 3000}) {
    std::vector<float> logits(20000, -30.0f);
    for (int j = 0; j < top; ++j)
      logits[static_cast<size_t>((j * 7919) % 20000)] = 5.0f + 0.001f * j;
    for (float p : {0.5f, 0.9f, 0.999f}) {
      TokenCandidates c = Loaded(logits);
      ApplyTopP(p, 0, &c);
      const reference::Set expected = reference::TopP(reference::AllTokens(logits), p, 0);
      ASSERT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected))) << top << " " << p;
      EXPECT_FALSE(c.sorted);
      for (int64_t i = 1; i < c.size; ++i) ASSERT_LT(c.id[i - 1], c.id[i]);  // id order
    }
  }
}

TEST(TopPTest, SignedZerosTie) {
  std::vector<float> logits(3000, -5.0f);
  for (int i = 0; i < 3000; i += 3) logits[static_cast<size_t>(i)] = (i % 2) ? -0.0f : 0.0f;
  for (float p : {0.2f, 0.5f, 0.97f}) {
    TokenCandidates c = Loaded(logits);
    ApplyTopP(p, 0, &c);
    const reference::Set expected = reference::TopP(reference::AllTokens(logits), p, 0);
    EXPECT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected))) << p;
  }
}

TEST(TopPTest, MinKeepMatchesReference) {
  const std::vector<float> logits = RandomLogits(3000, 0, 7);
  for (int32_t min_keep : {1, 5, 100, 2999, 5000}) {
    TokenCandidates c = Loaded(logits);
    ApplyTopP(0.2f, min_keep, &c);
    const reference::Set expected = reference::TopP(reference::AllTokens(logits), 0.2, min_keep);
    EXPECT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected))) << min_keep;
  }
}

// --- min-p ---

TEST(MinPTest, ZeroChangesNothingAndOneKeepsTheTiedMaxima) {
  TokenCandidates c = Loaded({1, 0, 4, 4});
  ApplyMinP(0.0f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2, 3));
  ApplyMinP(1.0f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(2, 3));
}

TEST(MinPTest, ThresholdRelativeToTheMostLikely) {
  // Probabilities relative to the largest: 1, e^-0.5 = 0.61, e^-1 = 0.37, e^-3 = 0.05.
  const std::vector<float> logits = {2.0f, 1.5f, 1.0f, -1.0f};
  TokenCandidates c = Loaded(logits);
  ApplyMinP(0.5f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1));
  c = Loaded(logits);
  ApplyMinP(0.3f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2));
  c = Loaded(logits);
  ApplyMinP(0.5f, 3, &c);  // min_keep: the best three
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2));
}

TEST(MinPTest, AllMinusInfButOne) {
  TokenCandidates c = Loaded({-kInf, -kInf, -kInf, 0.5f});
  ApplyMinP(0.05f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(3));
}

TEST(MinPTest, MatchesReference) {
  for (int shape = 0; shape < 3; ++shape) {
    const std::vector<float> logits = RandomLogits(20000, shape, 300 + shape);
    for (float p : {0.01f, 0.05f, 0.2f, 0.9f}) {
      for (int32_t min_keep : {0, 10}) {
        TokenCandidates c = Loaded(logits);
        ApplyMinP(p, min_keep, &c);
        const reference::Set expected = reference::MinP(reference::AllTokens(logits), p, min_keep);
        ASSERT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected)))
            << "shape " << shape << " p " << p;
      }
    }
  }
}

// --- typical-p ---

TEST(TypicalPTest, OneChangesNothing) {
  TokenCandidates c = Loaded({1, 0, 4, 2});
  ApplyTypicalP(1.0f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(0, 1, 2, 3));
}

TEST(TypicalPTest, CanDropTheMostLikelyToken) {
  // One token of probability 0.4 and 60 of 0.01: H = 3.13 nats, so the small ones' surprisal
  // (4.6) is closer to it than the large one's (0.92).
  std::vector<float> logits(61, std::log(0.01f));
  logits[30] = std::log(0.4f);
  TokenCandidates c = Loaded(logits);
  ApplyTypicalP(0.5f, 0, &c);
  const reference::Set expected = reference::TypicalP(reference::AllTokens(logits), 0.5, 0);
  EXPECT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected)));
  EXPECT_EQ(c.size, 51);  // 51 * 0.01 > 0.5
  for (int64_t i = 0; i < c.size; ++i) EXPECT_NE(c.id[i], 30);
}

TEST(TypicalPTest, MinusInfinityTokensOrderLast) {
  TokenCandidates c = Loaded({-kInf, 1.0f, -kInf, 1.2f, 0.9f});
  ApplyTypicalP(0.99f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1, 3, 4));
  c = Loaded({-kInf, 2.0f, -kInf});
  ApplyTypicalP(0.5f, 0, &c);
  EXPECT_THAT(Ids(c), ElementsAre(1));
}

TEST(TypicalPTest, MatchesReference) {
  for (int shape = 0; shape < 3; ++shape) {
    for (int n : {64, 20000}) {
      const std::vector<float> logits = RandomLogits(n, shape, 400 + shape);
      for (float p : {0.2f, 0.5f, 0.9f, 0.95f}) {
        for (int32_t min_keep : {0, 30}) {
          TokenCandidates c = Loaded(logits);
          ApplyTypicalP(p, min_keep, &c);
          const reference::Set expected =
              reference::TypicalP(reference::AllTokens(logits), p, min_keep);
          ASSERT_THAT(Ids(c), ElementsAreArray(reference::Ids(expected)))
              << "shape " << shape << " n " << n << " p " << p << " min_keep " << min_keep;
        }
      }
    }
  }
}

// --- the stages together ---

TEST(TruncationTest, NeverEmptiesTheSet) {
  std::mt19937 gen(9);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(gen() % 40);
    std::vector<float> logits(static_cast<size_t>(n));
    for (float& l : logits) l = (gen() % 3 == 0) ? -kInf : static_cast<float>(gen() % 5);
    logits[gen() % static_cast<uint32_t>(n)] = 1.0f;  // at least one finite
    TokenCandidates c = Loaded(logits);
    ApplyTopK(static_cast<int32_t>(gen() % 5), &c);
    ApplyTypicalP(0.01f + static_cast<float>(gen() % 100) / 100.0f, 0, &c);
    ApplyTopP(0.01f + static_cast<float>(gen() % 100) / 100.0f, 0, &c);
    ApplyMinP(static_cast<float>(gen() % 101) / 100.0f, 0, &c);
    ASSERT_GE(c.size, 1) << trial;
    float max_kept = -kInf;
    for (int64_t i = 0; i < c.size; ++i) max_kept = std::max(max_kept, c.logit[i]);
    ASSERT_GT(max_kept, -kInf) << trial;  // a finite candidate survives
  }
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
