// How far batched prefill may drift from token-by-token decode, and why. A batch computes its
// matrix products with ops::MatMul, whose summation order differs from the matrix-vector
// kernels of decode (ops/linear.h); attention, norms and RoPE run the same operations in the
// same order (ops/attention.h). So batched logits do not depend on how the tokens are split into
// batches of two or more (bit for bit), and differ from token by token only by the rounding of
// the products, amplified by the layers after them; on the golden models that stays within 1e-4
// over long sequences (4000 positions: 3e-5 measured), see README "Batched prefill".
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/generation/prefix_reuse.h"
#include "runtime/sequence.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

constexpr float kBatchTolerance = 1e-4f;
// Longer than any golden case: every sliding ring wraps hundreds of times, and the full-attention
// layers sum softmax over up to 1000 positions.
constexpr size_t kPositions = 1000;

std::vector<int32_t> RandomTokens(int64_t vocab) {
  std::mt19937 rng(7);
  std::vector<int32_t> tokens = {2};
  while (tokens.size() < kPositions) tokens.push_back(static_cast<int32_t>(rng() % vocab));
  return tokens;
}

// Logits [T, vocab] of `tokens` fed in chunks of `chunk` (1 = Eval, token by token).
std::vector<float> RunChunks(const Artifact& artifact, const std::vector<int32_t>& tokens,
                       size_t chunk) {
  SessionOptions options;
  options.ctx_size = static_cast<int64_t>(tokens.size());
  options.batch_size = static_cast<int64_t>(chunk);
  auto session = Session::Create(artifact, options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  Session& s = **session;
  const size_t vocab = static_cast<size_t>(s.plan().model.vocab_size);
  std::vector<float> logits;
  logits.reserve(tokens.size() * vocab);
  for (size_t at = 0; at < tokens.size();) {
    const size_t n = std::min(chunk, tokens.size() - at);
    const absl::Status status =
        s.EvalBatch(absl::MakeConstSpan(tokens.data() + at, n), BatchLogits::kAll);
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok()) return {};
    for (size_t t = 0; t < n; ++t) {
      logits.insert(logits.end(), s.batch_logits(t).begin(), s.batch_logits(t).end());
    }
    at += n;
  }
  return logits;
}

class PrefillRoundingTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto artifact = Artifact::Open(ArtifactPath("tiny-a-f32", GetParam()));
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    artifact_ = *std::move(artifact);
    tokens_ = RandomTokens(artifact_->plan().model.vocab_size);
  }
  std::unique_ptr<Artifact> artifact_;
  std::vector<int32_t> tokens_;
};

TEST_P(PrefillRoundingTest, BatchesOfTwoOrMoreAreBitIdenticalWhateverTheSplit) {
  // 1000 = 2 x 500 = 500 x 2 = 7 x 142 + 6 = 97 x 10 + 30: no chunk of one token (that one
  // would be Eval).
  const std::vector<float> whole = RunChunks(*artifact_, tokens_, 500);
  ASSERT_FALSE(whole.empty());
  for (const size_t chunk : {size_t{2}, size_t{7}, size_t{97}}) {
    SCOPED_TRACE(chunk);
    EXPECT_TRUE(RunChunks(*artifact_, tokens_, chunk) == whole);
  }
}

TEST_P(PrefillRoundingTest, LongSequencesStayWithinTheBoundOfTokenByToken) {
  const std::vector<float> by_token = RunChunks(*artifact_, tokens_, 1);
  const std::vector<float> batched = RunChunks(*artifact_, tokens_, 500);
  ASSERT_EQ(by_token.size(), batched.size());
  const size_t vocab = static_cast<size_t>(artifact_->plan().model.vocab_size);
  float worst = 0;
  size_t worst_position = 0;
  double total = 0;
  for (size_t i = 0; i < by_token.size(); ++i) {
    const float d = std::fabs(by_token[i] - batched[i]);
    total += d;
    if (d > worst) {
      worst = d;
      worst_position = i / vocab;
    }
  }
  EXPECT_LE(worst, kBatchTolerance) << "at position " << worst_position;
  // Rounding, not a systematic error: the typical difference is a few f32 ulps of the logits.
  EXPECT_LE(total / static_cast<double>(by_token.size()), 1e-5);
}

// Sequence::Eval never leaves the last token a chunk of its own (PromptChunkRows): 10 tokens in
// batches of 3 are 3 + 3 + 2 + 2, and the last logits (those that pick the first generated token)
// are those of one batch of 10, bit for bit — as are those of a prompt whose cached prefix is kept
// (EvalReusingPrefix evaluates at least two tokens). Before, 3 + 3 + 3 + 1 ran the last token
// through the decode kernels.
TEST_P(PrefillRoundingTest, NoPromptEndsInAChunkOfOneToken) {
  const std::vector<int32_t> prompt(tokens_.begin(), tokens_.begin() + 10);
  const auto last_logits = [&](int64_t batch_size, const std::vector<int32_t>& cached) {
    SessionOptions options;
    options.ctx_size = 64;
    options.batch_size = batch_size;
    absl::StatusOr<std::unique_ptr<Sequence>> sequence = Sequence::Create(*artifact_, options);
    EXPECT_TRUE(sequence.ok()) << sequence.status();
    if (!cached.empty()) EXPECT_TRUE((*sequence)->Eval(cached, BatchLogits::kNone).ok());
    absl::StatusOr<PrefixReuse> reuse = EvalReusingPrefix(**sequence, prompt);
    EXPECT_TRUE(reuse.ok()) << reuse.status();
    EXPECT_LE(reuse->reused, 8);
    absl::StatusOr<absl::Span<const float>> logits = (*sequence)->logits();
    EXPECT_TRUE(logits.ok()) << logits.status();
    return std::vector<float>(logits->begin(), logits->end());
  };
  const std::vector<float> whole = last_logits(16, {});
  for (const int64_t batch : {3, 4, 9}) {
    SCOPED_TRACE(batch);
    EXPECT_TRUE(last_logits(batch, {}) == whole);
  }
  // The whole prompt cached (a repeated request): its last two tokens are evaluated again.
  EXPECT_TRUE(last_logits(16, prompt) == whole);
  EXPECT_EQ(PromptChunkRows(10, 3), 3u);
  EXPECT_EQ(PromptChunkRows(4, 3), 2u);
  EXPECT_EQ(PromptChunkRows(3, 2), 2u);  // unavoidable with chunks of 2
  EXPECT_EQ(PromptChunkRows(1, 8), 1u);
  EXPECT_EQ(ReusablePrefixLength(prompt, prompt), 8u);
  EXPECT_EQ(ReusablePrefixLength(prompt, {prompt[0]}), 0u);
}

INSTANTIATE_TEST_SUITE_P(Formats, PrefillRoundingTest,
                         testing::Values("opt", "no-opt", "q8_0", "q4_0"));

}  // namespace
}  // namespace cortiq
