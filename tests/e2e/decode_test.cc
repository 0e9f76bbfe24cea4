// Decoding behaviour of compiled tiny-a artifacts: determinism after Reset, the greedy chain and
// every prefix recomputed, the sliding window of exactly W positions and the full layers'
// unbounded view (by changing cached K/V), threads, and bad input at the artifact level.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

int32_t ArgMax(absl::Span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

std::vector<float> Copy(absl::Span<const float> values) {
  return std::vector<float>(values.begin(), values.end());
}

class DecodeTest : public testing::Test {
 protected:
  void SetUp() override {
    auto artifact = Artifact::Open(ArtifactPath("tiny-a-f32", "opt"));
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    artifact_ = std::move(*artifact);
    tokens_ = LoadGoldenCase("tiny-a-f32-T40").tokens;
  }
  std::unique_ptr<Session> NewSession(SessionOptions options = {}) {
    auto session = Session::Create(*artifact_, options);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }
  // Index of the tap named `name` ("layer.N").
  size_t TapIndex(const std::string& name) {
    const auto& taps = artifact_->plan().taps;
    for (size_t i = 0; i < taps.size(); ++i) {
      if (taps[i].name == name) return i;
    }
    ADD_FAILURE() << "no tap " << name;
    return 0;
  }

  std::unique_ptr<Artifact> artifact_;
  std::vector<int32_t> tokens_;
};

TEST_F(DecodeTest, ResetGivesBitIdenticalLogits) {
  auto session = NewSession();
  std::vector<std::vector<float>> first;
  for (int32_t token : tokens_) {
    ASSERT_TRUE(session->Eval(token, true).ok());
    first.push_back(Copy(session->logits()));
  }
  session->Reset();
  EXPECT_EQ(session->length(), 0);
  for (size_t t = 0; t < tokens_.size(); ++t) {
    ASSERT_TRUE(session->Eval(tokens_[t], true).ok());
    EXPECT_EQ(Copy(session->logits()), first[t]) << "position " << t;
  }
}

TEST_F(DecodeTest, TwoThreadsGiveBitIdenticalLogits) {
  auto one = NewSession(SessionOptions{.ctx_size = 64, .threads = 1});
  auto two = NewSession(SessionOptions{.ctx_size = 64, .threads = 2});
  for (int32_t token : tokens_) {
    ASSERT_TRUE(one->Eval(token, true).ok());
    ASSERT_TRUE(two->Eval(token, true).ok());
    ASSERT_EQ(Copy(one->logits()), Copy(two->logits()));
  }
}

// Greedy decoding to 3W + 5 tokens: each generated token is the argmax of the previous logits,
// and recomputing every prefix from scratch gives the same logits as the incremental run (the
// sliding rings wrap three times on the way).
TEST_F(DecodeTest, GreedyChainEqualsRecomputeOfEveryPrefix) {
  const int64_t window = 8;  // tiny-a sliding_window
  const size_t total = 3 * window + 5;
  auto session = NewSession();
  std::vector<int32_t> sequence(tokens_.begin(), tokens_.begin() + 6);
  std::vector<std::vector<float>> logits;
  for (size_t t = 0; t < total; ++t) {
    ASSERT_TRUE(session->Eval(sequence[t], true).ok());
    logits.push_back(Copy(session->logits()));
    if (t + 1 == sequence.size()) sequence.push_back(ArgMax(session->logits()));
  }
  for (size_t t = 5; t + 1 < total; ++t) {
    EXPECT_EQ(sequence[t + 1], ArgMax(logits[t])) << "position " << t;
  }
  auto fresh = NewSession();
  for (size_t t = 0; t < total; ++t) {
    fresh->Reset();
    for (size_t i = 0; i <= t; ++i) ASSERT_TRUE(fresh->Eval(sequence[i], i == t).ok());
    ASSERT_EQ(Copy(fresh->logits()), logits[t]) << "prefix of " << t + 1 << " tokens";
  }
}

// Changes the cached key/value of position 0 in every cache right after it is written, then
// decodes on. A sliding layer sees exactly the last W = 8 positions, so layer 0 (whose K/V depend
// only on each position's own token) is unchanged from position W on, layer 1 from 2W - 1 on and
// layer 2 from 3W - 2 on; the full layer 3 sees position 0 forever. An off-by-one window (W + 1
// or W - 1) fails the first or the second expectation.
TEST_F(DecodeTest, SlidingLayersForgetPositionZeroAfterWindowFullLayersDoNot) {
  const int64_t window = 8;
  const size_t total = 3 * window + 5;
  std::vector<std::vector<std::vector<float>>> base(4), changed(4);  // [layer][position]
  const size_t taps[4] = {TapIndex("layer.0"), TapIndex("layer.1"), TapIndex("layer.2"),
                          TapIndex("layer.3")};
  for (int run = 0; run < 2; ++run) {
    auto session = NewSession();
    // Layer 3's output feeds only the logits (rows = logits): computed without logits only
    // when every tap is asked for.
    session->set_every_tap(true);
    for (size_t t = 0; t < total; ++t) {
      ASSERT_TRUE(session->Eval(tokens_[t], false).ok());
      if (run == 1 && t == 0) {
        for (size_t c = 0; c < session->plan().caches.size(); ++c) {
          KvCache& cache = session->cache(c);
          float* key = cache.mutable_keys() + cache.RowOf(0) * cache.row_width();
          float* value = cache.mutable_values() + cache.RowOf(0) * cache.row_width();
          for (int64_t i = 0; i < cache.row_width(); ++i) {
            key[i] += 0.5f;
            value[i] *= -1.0f;
          }
        }
      }
      for (int l = 0; l < 4; ++l) {
        (run == 0 ? base : changed)[l].push_back(Copy(session->tap(taps[l])));
      }
    }
  }
  ASSERT_EQ(artifact_->plan().caches.size(), 4u);
  const size_t unaffected_from[3] = {static_cast<size_t>(window),
                                     static_cast<size_t>(2 * window - 1),
                                     static_cast<size_t>(3 * window - 2)};
  for (int l = 0; l < 3; ++l) {
    EXPECT_NE(base[l][unaffected_from[l] - 1], changed[l][unaffected_from[l] - 1])
        << "sliding layer " << l << " must still see position 0 at position "
        << unaffected_from[l] - 1;
    for (size_t t = unaffected_from[l]; t < total; ++t) {
      EXPECT_EQ(base[l][t], changed[l][t]) << "sliding layer " << l << " position " << t;
    }
  }
  for (size_t t = 1; t < total; ++t) {
    EXPECT_NE(base[3][t], changed[3][t]) << "full layer 3 position " << t;
  }
}

TEST_F(DecodeTest, TokenOutsideVocabularyIsAnErrorAndChangesNothing) {
  auto session = NewSession();
  ASSERT_TRUE(session->Eval(2, true).ok());
  absl::Status status = session->Eval(512, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("512"));
  EXPECT_EQ(session->Eval(-1, true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session->length(), 1);
}

TEST_F(DecodeTest, ContextOverflowIsAnError) {
  auto session = NewSession(SessionOptions{.ctx_size = 4});
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(session->Eval(tokens_[i], false).ok());
  absl::Status status = session->Eval(tokens_[4], true);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("context full"));
  session->Reset();
  EXPECT_TRUE(session->Eval(tokens_[0], true).ok());
}

TEST(DecodeArtifactTest, MissingFileIsAnError) {
  auto artifact = Artifact::Open(std::string(CORTIQ_ARTIFACT_DIR) + "/does-not-exist.cortiq");
  ASSERT_FALSE(artifact.ok());
  EXPECT_THAT(std::string(artifact.status().message()), HasSubstr("does-not-exist.cortiq"));
}

TEST(DecodeArtifactTest, TruncatedArtifactIsAnError) {
  std::ifstream in(ArtifactPath("tiny-a-f32", "opt"), std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  ASSERT_GT(bytes.size(), 4096u);
  const std::string path = testing::TempDir() + "/truncated.cortiq";
  for (size_t keep : {size_t{0}, size_t{10}, size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
    auto artifact = Artifact::Open(path);
    ASSERT_FALSE(artifact.ok()) << "kept " << keep << " bytes";
    EXPECT_THAT(std::string(artifact.status().message()), HasSubstr(path));
  }
}

}  // namespace
}  // namespace cortiq
