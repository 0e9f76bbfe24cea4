// Batched prefill (Session::EvalBatch) against token-by-token decode (Session::Eval) on every
// golden case: the whole sequence as one batch, and chunks of 1, 3, W - 1, W, W + 1 and 2W + 3
// tokens (W = the sliding window), give logits within 1e-4 of token by token at every position
// and within the golden tolerance (1e-3) of the float64 reference, and leave equal KV caches.
// Batches are bit-identical for 1 and 2 threads.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

constexpr float kBatchTolerance = 1e-4f;
constexpr float kGoldenTolerance = 1e-3f;

std::unique_ptr<Session> NewSession(const Artifact& artifact, int threads) {
  SessionOptions options;
  options.ctx_size = 128;
  options.threads = threads;
  auto session = Session::Create(artifact, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

// Logits [T, vocab] of `tokens` fed in chunks of `chunk` tokens (0 = token by token).
std::vector<float> RunChunks(Session& session, const std::vector<int32_t>& tokens,
                             size_t chunk) {
  const size_t vocab = static_cast<size_t>(session.plan().model.vocab_size);
  std::vector<float> logits;
  logits.reserve(tokens.size() * vocab);
  for (size_t at = 0; at < tokens.size();) {
    if (chunk == 0) {
      EXPECT_TRUE(session.Eval(tokens[at], true).ok());
      logits.insert(logits.end(), session.logits().begin(), session.logits().end());
      ++at;
      continue;
    }
    const size_t n = std::min(chunk, tokens.size() - at);
    const absl::Status status =
        session.EvalBatch(absl::MakeConstSpan(tokens.data() + at, n), BatchLogits::kAll);
    EXPECT_TRUE(status.ok()) << status;
    for (size_t t = 0; t < n; ++t) {
      logits.insert(logits.end(), session.batch_logits(t).begin(), session.batch_logits(t).end());
    }
    // logits() is the chunk's last row.
    EXPECT_TRUE(std::equal(session.logits().begin(), session.logits().end(),
                           session.batch_logits(n - 1).begin()));
    at += n;
  }
  return logits;
}

float MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Max |Δ| between the cached keys/values of the positions the next query could read.
float MaxCacheDiff(Session& a, Session& b, int64_t length) {
  float m = 0;
  for (size_t c = 0; c < a.plan().caches.size(); ++c) {
    KvCache& x = a.cache(c);
    KvCache& y = b.cache(c);
    const int64_t width = x.row_width();
    const int64_t from = a.plan().caches[c].sliding
                             ? std::max<int64_t>(0, length - a.plan().caches[c].window)
                             : 0;
    for (int64_t p = from; p < length; ++p) {
      for (int64_t i = 0; i < width; ++i) {
        m = std::max(m, std::fabs(x.keys()[x.RowOf(p) * width + i] -
                                  y.keys()[y.RowOf(p) * width + i]));
        m = std::max(m, std::fabs(x.values()[x.RowOf(p) * width + i] -
                                  y.values()[y.RowOf(p) * width + i]));
      }
    }
  }
  return m;
}

class PrefillTest : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(PrefillTest, ChunksAgreeWithTokenByToken) {
  const auto& [case_name, mode] = GetParam();
  const GoldenCase golden = LoadGoldenCase(case_name);
  auto artifact = Artifact::Open(ArtifactPath(golden.model, mode));
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  int64_t window = 0;
  for (const CacheEntry& c : (*artifact)->plan().caches) window = std::max(window, c.window);
  ASSERT_GT(window, 0);
  const size_t w = static_cast<size_t>(window);

  std::unique_ptr<Session> reference = NewSession(**artifact, 1);
  ASSERT_NE(reference, nullptr);
  const std::vector<float> by_token = RunChunks(*reference, golden.tokens, 0);
  const int64_t length = static_cast<int64_t>(golden.tokens.size());

  for (size_t chunk : {golden.tokens.size(), size_t{1}, size_t{3}, w - 1, w, w + 1, 2 * w + 3}) {
    SCOPED_TRACE(chunk);
    std::unique_ptr<Session> session = NewSession(**artifact, 1);
    ASSERT_NE(session, nullptr);
    const std::vector<float> logits = RunChunks(*session, golden.tokens, chunk);
    EXPECT_LE(MaxDiff(logits, by_token), kBatchTolerance);
    if (mode != "q8_0") EXPECT_LE(MaxDiff(logits, golden.logits_ref), kGoldenTolerance);
    EXPECT_EQ(session->length(), length);
    EXPECT_LE(MaxCacheDiff(*session, *reference, length), kBatchTolerance);
    // Decode continues from the prefilled caches as from the token-by-token ones.
    ASSERT_TRUE(session->Eval(golden.tokens[1], true).ok());
    std::vector<float> next(session->logits().begin(), session->logits().end());
    std::unique_ptr<Session> again = NewSession(**artifact, 1);
    RunChunks(*again, golden.tokens, 0);
    ASSERT_TRUE(again->Eval(golden.tokens[1], true).ok());
    EXPECT_LE(MaxDiff(next, std::vector<float>(again->logits().begin(), again->logits().end())),
              kBatchTolerance);
  }
}

TEST_P(PrefillTest, BatchIsBitIdenticalForOneAndTwoThreads) {
  const auto& [case_name, mode] = GetParam();
  const GoldenCase golden = LoadGoldenCase(case_name);
  auto artifact = Artifact::Open(ArtifactPath(golden.model, mode));
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  std::unique_ptr<Session> one = NewSession(**artifact, 1);
  std::unique_ptr<Session> two = NewSession(**artifact, 2);
  const std::vector<float> a = RunChunks(*one, golden.tokens, golden.tokens.size());
  const std::vector<float> b = RunChunks(*two, golden.tokens, golden.tokens.size());
  EXPECT_EQ(a, b);
}

INSTANTIATE_TEST_SUITE_P(AllCases, PrefillTest,
                         testing::Combine(testing::ValuesIn(GoldenCaseNames()),
                                          testing::Values("opt", "no-opt", "q8_0")),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" +
                                              std::get<1>(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace cortiq
