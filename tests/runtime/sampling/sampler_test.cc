// Tests of runtime/sampling/sampler.cc: the whole chain against the reference chain
// (reference_sampler.cc) for the same uniform numbers, its distribution (chi-square),
// reproducibility, greedy decoding, penalties through Accept, and the errors.
#include "runtime/sampling/sampler.h"

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/sampling/chi_square.h"
#include "tests/runtime/sampling/reference_sampler.h"

namespace cortiq {
namespace sampling {
namespace {

using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> RandomLogits(std::mt19937* gen, int n, float scale) {
  std::vector<float> logits(static_cast<size_t>(n));
  for (float& l : logits) {
    l = scale * static_cast<float>(static_cast<int>((*gen)() % 20001) - 10000) / 10000.0f;
  }
  return logits;
}

Sampler Make(const SamplingOptions& options, int32_t vocab_size) {
  absl::StatusOr<Sampler> s = Sampler::Create(options, vocab_size);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

// Option sets covering each stage alone and all together.
std::vector<SamplingOptions> OptionSets() {
  std::vector<SamplingOptions> sets;
  auto add = [&](auto change) {
    SamplingOptions o;
    o.seed = 1234;
    o.top_k = 0;
    o.top_p = 1;
    o.min_p = 0;
    o.repeat_last_n = 0;
    o.temperature = 1;
    change(o);
    sets.push_back(o);
  };
  add([](SamplingOptions&) {});  // plain softmax
  add([](SamplingOptions& o) { o.temperature = 0.6f; });
  add([](SamplingOptions& o) { o.top_k = 40; });
  add([](SamplingOptions& o) { o.top_p = 0.9f; });
  add([](SamplingOptions& o) { o.min_p = 0.1f; });
  add([](SamplingOptions& o) { o.typical_p = 0.8f; });
  add([](SamplingOptions& o) {  // Gemma 4 defaults
    o = DefaultSamplingOptions({true, 1.0f, 64, 0.95f, {}, {}, {}});
    o.seed = 7;
  });
  add([](SamplingOptions& o) {  // everything at once
    o.temperature = 0.7f;
    o.top_k = 50;
    o.typical_p = 0.95f;
    o.top_p = 0.9f;
    o.min_p = 0.02f;
    o.repeat_penalty = 1.3f;
    o.repeat_last_n = 16;
    o.frequency_penalty = 0.2f;
    o.presence_penalty = 0.1f;
    o.logit_bias = {{3, 2.0f}, {5, -kInf}, {7, -1.5f}};
  });
  add([](SamplingOptions& o) {  // everything but top-k
    o.temperature = 1.3f;
    o.typical_p = 0.97f;
    o.top_p = 0.95f;
    o.min_p = 0.01f;
    o.repeat_penalty = 1.1f;
    o.repeat_last_n = -1;
    o.logit_bias = {{2, 1.0f}};
  });
  return sets;
}

TEST(SamplerTest, MatchesReferenceChainForTheSameUniforms) {
  constexpr int32_t kVocab = 1000;
  for (const SamplingOptions& options : OptionSets()) {
    Sampler sampler = Make(options, kVocab);
    Xoshiro256StarStar rng(*options.seed);  // the draws the sampler will make
    std::mt19937 gen(5);
    std::vector<int32_t> history;
    for (int step = 0; step < 300; ++step) {
      const std::vector<float> logits = RandomLogits(&gen, kVocab, 8.0f);
      absl::StatusOr<int32_t> token = sampler.Sample(logits);
      ASSERT_TRUE(token.ok()) << token.status();
      const reference::Set set =
          reference::ChainCandidates(reference::AdjustedLogits(logits, options, history), options);
      const int32_t expected =
          reference::DrawWithUniform(set, options.temperature, rng.NextUniform());
      ASSERT_EQ(*token, expected) << "step " << step;
      ASSERT_TRUE(sampler.Accept(*token).ok());
      history.push_back(*token);
    }
  }
}

TEST(SamplerTest, SeededDrawsFollowTheChainsDistribution) {
  // 12 tokens with fixed logits and a fixed history; the chain keeps a subset whose tempered
  // softmax the draws must follow.
  const std::vector<float> logits = {2.0f, 1.6f, 1.5f, 1.2f,  1.0f,  0.9f,
                                     0.5f, 0.4f, 0.0f, -0.5f, -1.0f, -3.0f};
  SamplingOptions options;
  options.seed = 77;
  options.temperature = 0.8f;
  options.top_k = 10;
  options.top_p = 0.95f;
  options.min_p = 0.05f;
  options.repeat_penalty = 1.2f;
  options.presence_penalty = 0.1f;
  options.logit_bias = {{4, 0.3f}};
  const std::vector<int32_t> history = {0, 2, 2};
  Sampler sampler = Make(options, static_cast<int32_t>(logits.size()));
  for (int32_t t : history) ASSERT_TRUE(sampler.Accept(t).ok());
  const reference::Set set =
      reference::ChainCandidates(reference::AdjustedLogits(logits, options, history), options);
  ASSERT_GE(set.items.size(), 5u);
  const std::vector<double> p = reference::Probabilities(set, options.temperature);
  std::vector<double> expected(logits.size(), 0.0);
  for (size_t i = 0; i < set.items.size(); ++i) expected[set.items[i].id] = p[i];
  std::vector<int64_t> counts(logits.size(), 0);
  for (int i = 0; i < 200000; ++i) {
    absl::StatusOr<int32_t> token = sampler.Sample(logits);
    ASSERT_TRUE(token.ok());
    ASSERT_GT(expected[*token], 0.0) << "drew token " << *token << " outside the kept set";
    ++counts[*token];
  }
  EXPECT_LT(ChiSquare(counts, expected),
            ChiSquareCritical001(static_cast<int>(set.items.size()) - 1));
}

TEST(SamplerTest, SameSeedSameTokensResetAndCopyRepeatThem) {
  SamplingOptions options = DefaultSamplingOptions({true, 1.0f, 64, 0.95f, {}, {}, {}});
  options.seed = 42;
  options.repeat_penalty = 1.1f;
  std::mt19937 gen(8);
  std::vector<std::vector<float>> steps;
  for (int i = 0; i < 100; ++i) steps.push_back(RandomLogits(&gen, 5000, 6.0f));
  auto run = [&](Sampler& s) {
    std::vector<int32_t> tokens;
    for (const auto& logits : steps) {
      tokens.push_back(*s.Sample(logits));
      EXPECT_TRUE(s.Accept(tokens.back()).ok());
    }
    return tokens;
  };
  Sampler a = Make(options, 5000);
  Sampler b = Make(options, 5000);
  const std::vector<int32_t> first = run(a);
  EXPECT_EQ(run(b), first);
  a.Reset();
  EXPECT_EQ(run(a), first);
  options.seed = 43;
  Sampler c = Make(options, 5000);
  EXPECT_NE(run(c), first);
  // A copy taken mid-way continues identically.
  a.Reset();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(a.Accept(*a.Sample(steps[i])).ok());
  Sampler copy = a;
  for (int i = 50; i < 100; ++i) {
    const int32_t x = *a.Sample(steps[i]);
    const int32_t y = *copy.Sample(steps[i]);
    ASSERT_EQ(x, y) << i;
    ASSERT_TRUE(a.Accept(x).ok());
    ASSERT_TRUE(copy.Accept(y).ok());
  }
}

// ResetHistory forgets the penalties but not the generator: after it the sampler draws what a
// sampler with an empty history and the same generator state draws.
TEST(SamplerTest, ResetHistoryKeepsTheGenerator) {
  SamplingOptions options = DefaultSamplingOptions({true, 1.0f, 0, 1.0f, {}, {}, {}});
  options.min_p = 0.0f;
  options.seed = 7;
  options.repeat_penalty = 3.0f;
  options.repeat_last_n = -1;
  std::mt19937 gen(3);
  const std::vector<float> logits = RandomLogits(&gen, 50, 2.0f);
  Sampler a = Make(options, 50);
  Sampler fresh = Make(options, 50);
  // Both draw 20 tokens; only `a` remembers them.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(a.Accept(*a.Sample(logits)).ok());
    (void)*fresh.Sample(logits);
  }
  a.ResetHistory();
  for (int i = 0; i < 30; ++i) {
    const int32_t x = *a.Sample(logits);
    ASSERT_EQ(x, *fresh.Sample(logits)) << i;
    ASSERT_TRUE(a.Accept(x).ok());
    ASSERT_TRUE(fresh.Accept(x).ok());
  }
  // Reset, by contrast, restarts the generator too: its first draws are the seed's first draws.
  Sampler b = Make(options, 50);
  const int32_t first = *b.Sample(logits);
  a.Reset();
  EXPECT_EQ(*a.Sample(logits), first);
}

// A sampler given another's generator state (a saved chat) draws what that one draws next, even
// with another seed; the all-zero state is refused and changes nothing.
TEST(SamplerTest, GeneratorStateContinuesTheDraws) {
  SamplingOptions options = DefaultSamplingOptions({true, 1.0f, 0, 1.0f, {}, {}, {}});
  options.min_p = 0.0f;
  options.seed = 11;
  std::mt19937 gen(5);
  const std::vector<float> logits = RandomLogits(&gen, 40, 2.0f);
  Sampler a = Make(options, 40);
  for (int i = 0; i < 7; ++i) (void)*a.Sample(logits);
  options.seed = 12;
  Sampler b = Make(options, 40);
  ASSERT_TRUE(b.set_generator_state(a.generator_state()).ok());
  const std::array<uint64_t, 4> before = b.generator_state();
  EXPECT_EQ(b.set_generator_state({0, 0, 0, 0}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.generator_state(), before);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(*b.Sample(logits), *a.Sample(logits)) << i;
}

TEST(SamplerTest, UnsetSeedIsDrawnAndReported) {
  SamplingOptions options;
  Sampler a = Make(options, 10);
  options.seed = a.seed();
  Sampler b = Make(options, 10);
  std::mt19937 gen(1);
  for (int i = 0; i < 50; ++i) {
    const std::vector<float> logits = RandomLogits(&gen, 10, 2.0f);
    ASSERT_EQ(*a.Sample(logits), *b.Sample(logits));
  }
}

TEST(SamplerTest, GreedyIsArgmaxWithTiesToLowestId) {
  SamplingOptions options;
  options.temperature = 0;
  Sampler s = Make(options, 5);
  EXPECT_EQ(*s.Sample({1, 4, 2, 4, 0}), 1);
  EXPECT_EQ(*s.Sample({-kInf, -kInf, -kInf, -kInf, -7}), 4);
  // With every truncation on, greedy still picks the most likely token.
  options.top_k = 2;
  options.top_p = 0.1f;
  options.min_p = 0.9f;
  Sampler t = Make(options, 5);
  EXPECT_EQ(*t.Sample({1, 4, 2, 4, 0}), 1);
}

TEST(SamplerTest, GreedyFollowsPenaltiesAndBias) {
  SamplingOptions options;
  options.temperature = 0;
  options.repeat_penalty = 2.0f;
  options.logit_bias = {{0, -kInf}};
  Sampler s = Make(options, 4);
  const std::vector<float> logits = {9, 3, 2.5f, 1};
  EXPECT_EQ(*s.Sample(logits), 1);  // token 0 banned
  ASSERT_TRUE(s.Accept(1).ok());
  EXPECT_EQ(*s.Sample(logits), 2);  // 3 / 2 = 1.5 < 2.5
}

TEST(SamplerTest, GreedyWithTypicalPIsTheArgmaxOfWhatTypicalKeeps) {
  // llama.cpp's temperature-0 sampler picks the best of the candidates the truncations left;
  // typical-p can drop the most likely token (see TypicalPTest.CanDropTheMostLikelyToken).
  std::vector<float> logits(61, std::log(0.01f));
  logits[30] = std::log(0.4f);
  SamplingOptions options;
  options.temperature = 0;
  options.top_k = 0;
  options.top_p = 1;
  options.min_p = 0;
  options.typical_p = 0.5f;
  Sampler s = Make(options, 61);
  EXPECT_EQ(*s.Sample(logits), 0);
  options.typical_p = 1;
  Sampler plain = Make(options, 61);
  EXPECT_EQ(*plain.Sample(logits), 30);
}

TEST(SamplerTest, AllMinusInfButOneAlwaysGivesThatOne) {
  std::vector<float> logits(300, -kInf);
  logits[123] = -50.0f;
  for (const SamplingOptions& base : OptionSets()) {
    SamplingOptions options = base;
    options.logit_bias.clear();
    options.repeat_last_n = 0;
    Sampler s = Make(options, 300);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(*s.Sample(logits), 123);
  }
}

TEST(SamplerTest, Errors) {
  SamplingOptions options;
  options.top_p = 1.5f;
  EXPECT_THAT(Sampler::Create(options, 10).status().message(),
              HasSubstr("top_p must be in (0, 1], got 1.5"));
  Sampler s = Make(SamplingOptions(), 4);
  absl::StatusOr<int32_t> r = s.Sample({0, 1, NAN, 2});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("logits[2] is NaN"));
  EXPECT_THAT(s.Sample({0, kInf, 1, 2}).status().message(), HasSubstr("logits[1] is +inf"));
  EXPECT_THAT(s.Sample({0, 1, 2}).status().message(),
              HasSubstr("logits has 3 entries, the vocabulary has 4"));
  r = s.Sample({-kInf, -kInf, -kInf, -kInf});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("every logit is -inf"));
  EXPECT_THAT(s.Accept(4).message(), HasSubstr("token 4 is out of range [0, 4)"));
  EXPECT_THAT(s.Accept(-1).message(), HasSubstr("token -1 is out of range"));
  // A ban of every token.
  SamplingOptions ban;
  ban.logit_bias = {{0, -kInf}, {1, -kInf}};
  Sampler b = Make(ban, 2);
  EXPECT_THAT(b.Sample({1, 2}).status().message(), HasSubstr("-inf after logit_bias"));
  // The sampler stays usable after an error.
  EXPECT_TRUE(s.Sample({0, 1, 2, 3}).ok());
  // The same errors on the fast paths: greedy (one scan) and top-k straight from the logits.
  SamplingOptions greedy;
  greedy.temperature = 0;
  Sampler g = Make(greedy, 4);
  EXPECT_THAT(g.Sample({0, 1, NAN, 2}).status().message(), HasSubstr("logits[2] is NaN"));
  EXPECT_THAT(g.Sample({0, kInf, 1, 2}).status().message(), HasSubstr("logits[1] is +inf"));
  EXPECT_THAT(g.Sample({0, 1, 2}).status().message(), HasSubstr("logits has 3 entries"));
  EXPECT_EQ(g.Sample({-kInf, -kInf, -kInf, -kInf}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  SamplingOptions top_k;
  top_k.top_k = 2;
  Sampler t = Make(top_k, 4);
  EXPECT_THAT(t.Sample({0, 1, 2, NAN}).status().message(), HasSubstr("logits[3] is NaN"));
  EXPECT_EQ(t.Sample({-kInf, -kInf, -kInf, -kInf}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(*t.Sample({-kInf, -kInf, 1, -kInf}), 2);
}

TEST(SamplerTest, LargeVocabularyDefaultsMatchReference) {
  // Gemma's vocabulary size with its defaults and with top-p alone (no top-k: the linear cut).
  constexpr int32_t kVocab = 262144;
  std::mt19937 gen(12);
  std::vector<SamplingOptions> sets(2, DefaultSamplingOptions({true, 1.0f, 64, 0.95f, {}, {}, {}}));
  sets[1].top_k = 0;
  sets[1].min_p = 0;
  for (SamplingOptions& options : sets) {
    options.seed = 5;
    Sampler sampler = Make(options, kVocab);
    Xoshiro256StarStar rng(5);
    for (int step = 0; step < 3; ++step) {
      const std::vector<float> logits = RandomLogits(&gen, kVocab, 12.0f);
      const int32_t token = *sampler.Sample(logits);
      const reference::Set set = reference::ChainCandidates(logits, options);
      EXPECT_EQ(token, reference::DrawWithUniform(set, options.temperature, rng.NextUniform()));
    }
  }
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
