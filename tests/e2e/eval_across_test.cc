// Sequence::EvalAcross / Session::EvalAcross (one token for each of several sequences in one
// batched evaluation, each row at its own position attending to its own caches) on the compiled
// tiny-a artifacts: against the golden float64 logits at every position of sequences that run
// at different offsets of the golden tokens (rings wrapped), against each sequence decoding
// alone (greedy tokens identical, logits within float rounding), with f16 caches and Q4_0
// weights, and the argument errors.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/sequence.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

// Golden tolerance of the float64 reference (tests/e2e/golden_test.cc).
constexpr float kReferenceTolerance = 1e-3f;
// Batched against token-by-token evaluation: the products sum in another order
// (Session::EvalBatch's tests hold the same bound).
constexpr float kRoundingTolerance = 1e-4f;

int32_t ArgMax(absl::Span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

float MaxAbsDiff(absl::Span<const float> a, absl::Span<const float> b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

std::unique_ptr<Artifact> Open(const std::string& path) {
  auto artifact = Artifact::Open(path);
  EXPECT_TRUE(artifact.ok()) << artifact.status();
  return artifact.ok() ? std::move(*artifact) : nullptr;
}

std::unique_ptr<Sequence> NewSequence(const Artifact& artifact, SessionOptions options = {}) {
  auto sequence = Sequence::Create(artifact, options);
  EXPECT_TRUE(sequence.ok()) << sequence.status();
  return sequence.ok() ? std::move(*sequence) : nullptr;
}

// Three sequences start at offsets 0, 7 and 19 of the golden tokens (each prefix evaluated
// alone, in one batch) and then advance together, one golden token each per EvalAcross, until
// each has seen every token; every row's logits are held against the golden float64 logits of
// its position. Offsets differ by more than the sliding window, so rows of one evaluation read
// rings wrapped at different places.
TEST(EvalAcrossTest, EveryRowMatchesTheGoldenLogitsOfItsPosition) {
  for (const std::string model : {"tiny-a-f32", "tiny-a-bf16"}) {
    SCOPED_TRACE(model);
    const GoldenCase golden = LoadGoldenCase(model + "-T40");
    std::unique_ptr<Artifact> artifact = Open(ArtifactPath(model, "opt"));
    ASSERT_NE(artifact, nullptr);
    const size_t vocab = static_cast<size_t>(artifact->plan().model.vocab_size);
    const size_t T = golden.tokens.size();
    const std::vector<size_t> offsets = {0, 7, 19};
    std::vector<std::unique_ptr<Sequence>> owned;
    for (size_t offset : offsets) {
      owned.push_back(NewSequence(*artifact));
      ASSERT_NE(owned.back(), nullptr);
      ASSERT_TRUE(owned.back()
                      ->Eval(absl::MakeConstSpan(golden.tokens.data(), offset), BatchLogits::kLast)
                      .ok());
    }
    size_t rows_checked = 0;
    for (;;) {
      std::vector<Sequence*> active;
      std::vector<int32_t> next;
      for (auto& s : owned) {
        if (static_cast<size_t>(s->length()) < T) {
          active.push_back(s.get());
          next.push_back(golden.tokens[static_cast<size_t>(s->length())]);
        }
      }
      if (active.empty()) break;
      std::vector<int64_t> positions;
      for (Sequence* s : active) positions.push_back(s->length());
      ASSERT_TRUE(Sequence::EvalAcross(absl::MakeConstSpan(active), next).ok());
      for (size_t i = 0; i < active.size(); ++i) {
        const size_t p = static_cast<size_t>(positions[i]);
        ASSERT_EQ(active[i]->length(), positions[i] + 1);
        ASSERT_EQ(active[i]->history().back(), next[i]);
        auto logits = active[i]->logits();
        ASSERT_TRUE(logits.ok()) << logits.status();
        const absl::Span<const float> ref(golden.logits_ref.data() + p * vocab, vocab);
        EXPECT_LE(MaxAbsDiff(*logits, ref), kReferenceTolerance) << "row " << i << " position " << p;
        EXPECT_EQ(ArgMax(*logits), ArgMax(ref)) << "position " << p;
        ++rows_checked;
      }
    }
    EXPECT_EQ(rows_checked, 3 * T - 7 - 19);
  }
}

// Greedy decoding of four prompts of different lengths together (EvalAcross) and each alone
// (Eval token by token): the same tokens, and the same logits bit for bit at every step. Also
// with f16 caches, and on the Q4_0 artifacts (whose batched products quantize the rows the same
// way as the vector ones), with two threads.
TEST(EvalAcrossTest, TogetherEqualsAlone) {
  struct Config {
    std::string path;
    KvType kv_type;
    int threads;
  };
  // f16 caches round each key and value to 11 bits: a rounding difference of the products that
  // moves a value across a binary16 rounding boundary moves it by 2^-11 relative, so there the
  // bound is the golden tolerance (kv_f16_test measures f16 caches against the reference).
  const auto tolerance = [](KvType type) {
    return type == KvType::kF16 ? kReferenceTolerance : kRoundingTolerance;
  };
  const std::vector<Config> configs = {
      {ArtifactPath("tiny-a-f32", "opt"), KvType::kF32, 1},
      {ArtifactPath("tiny-a-bf16", "opt"), KvType::kF16, 2},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-a-f32.q4_0.cortiq", KvType::kF32, 2},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-a-bf16.q8_0.cortiq", KvType::kF32, 1},
      // The formats without a few-rows kernel of their own (LinearRowsByBlocks in session.cc):
      // F16, and llama-quantize's mixes of tiny-e (Q4_K + Q6_K, Q2_K + Q3_K + Q4_K + Q6_K,
      // IQ4_XS + Q6_K...) and pure Q4_1 / Q5_0 / Q5_1 / IQ4_NL files.
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-a-f16.cortiq", KvType::kF32, 2},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-Q4_K_M.cortiq", KvType::kF32, 2},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-Q2_K.cortiq", KvType::kF32, 1},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-Q5_K_M.cortiq", KvType::kF32, 2},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-IQ4_XS.cortiq", KvType::kF32, 2},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-Q4_1-pure.cortiq", KvType::kF32, 1},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-Q5_0-pure.cortiq", KvType::kF32, 2},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-Q5_1-pure.cortiq", KvType::kF32, 1},
      {std::string(CORTIQ_ARTIFACT_DIR) + "/tiny-e-IQ4_NL-pure.cortiq", KvType::kF32, 2},
  };
  const std::vector<int32_t> golden_tokens = LoadGoldenCase("tiny-a-f32-T40").tokens;
  const std::vector<size_t> prompt_lengths = {1, 5, 17, 30};
  constexpr int kSteps = 24;
  for (const Config& config : configs) {
    SCOPED_TRACE(config.path);
    std::unique_ptr<Artifact> artifact = Open(config.path);
    ASSERT_NE(artifact, nullptr);
    // tiny-a's prompt, folded into the model's vocabulary (tiny-e's is another size).
    std::vector<int32_t> tokens = golden_tokens;
    for (int32_t& t : tokens) t %= static_cast<int32_t>(artifact->plan().model.vocab_size);
    SessionOptions options;
    options.kv_type = config.kv_type;
    options.threads = config.threads;
    options.ctx_size = 64;
    // Alone: each prompt, then greedy token by token.
    std::vector<std::vector<int32_t>> alone_tokens(prompt_lengths.size());
    std::vector<std::vector<std::vector<float>>> alone_logits(prompt_lengths.size());
    for (size_t i = 0; i < prompt_lengths.size(); ++i) {
      std::unique_ptr<Sequence> s = NewSequence(*artifact, options);
      ASSERT_NE(s, nullptr);
      ASSERT_TRUE(s->Eval(absl::MakeConstSpan(tokens.data(), prompt_lengths[i]), BatchLogits::kLast)
                      .ok());
      for (int step = 0; step < kSteps; ++step) {
        auto logits = s->logits();
        ASSERT_TRUE(logits.ok());
        alone_logits[i].emplace_back(logits->begin(), logits->end());
        const int32_t next = ArgMax(*logits);
        alone_tokens[i].push_back(next);
        ASSERT_TRUE(s->Eval(absl::MakeConstSpan(&next, 1), BatchLogits::kLast).ok());
      }
    }
    // Together.
    std::vector<std::unique_ptr<Sequence>> owned;
    std::vector<Sequence*> all;
    for (size_t i = 0; i < prompt_lengths.size(); ++i) {
      owned.push_back(NewSequence(*artifact, options));
      ASSERT_NE(owned.back(), nullptr);
      ASSERT_TRUE(owned.back()
                      ->Eval(absl::MakeConstSpan(tokens.data(), prompt_lengths[i]),
                             BatchLogits::kLast)
                      .ok());
      all.push_back(owned.back().get());
    }
    std::vector<std::vector<int32_t>> together_tokens(prompt_lengths.size());
    for (int step = 0; step < kSteps; ++step) {
      std::vector<int32_t> next;
      for (size_t i = 0; i < all.size(); ++i) {
        auto logits = all[i]->logits();
        ASSERT_TRUE(logits.ok());
        EXPECT_LE(MaxAbsDiff(*logits, alone_logits[i][static_cast<size_t>(step)]),
                  tolerance(config.kv_type))
            << "sequence " << i << " step " << step;
        // The linears of a few rows (ops/linear_rows.h) give each row the decode kernel's bits
        // and every other step is per row, so together is alone bit for bit.
        EXPECT_TRUE(std::equal(logits->begin(), logits->end(),
                               alone_logits[i][static_cast<size_t>(step)].begin(),
                               alone_logits[i][static_cast<size_t>(step)].end()))
            << "sequence " << i << " step " << step << " not bit-identical";
        next.push_back(ArgMax(*logits));
        together_tokens[i].push_back(next.back());
      }
      ASSERT_TRUE(Sequence::EvalAcross(absl::MakeConstSpan(all), next).ok());
    }
    EXPECT_EQ(together_tokens, alone_tokens);
  }
}

// One sequence is Eval, bit for bit.
TEST(EvalAcrossTest, OneSequenceIsEval) {
  std::unique_ptr<Artifact> artifact = Open(ArtifactPath("tiny-a-f32", "opt"));
  ASSERT_NE(artifact, nullptr);
  const std::vector<int32_t> tokens = LoadGoldenCase("tiny-a-f32-T40").tokens;
  std::unique_ptr<Sequence> a = NewSequence(*artifact), b = NewSequence(*artifact);
  ASSERT_TRUE(a->Eval(absl::MakeConstSpan(tokens.data(), 9), BatchLogits::kLast).ok());
  ASSERT_TRUE(b->Eval(absl::MakeConstSpan(tokens.data(), 9), BatchLogits::kLast).ok());
  Sequence* one[] = {a.get()};
  ASSERT_TRUE(Sequence::EvalAcross(one, absl::MakeConstSpan(&tokens[9], 1)).ok());
  ASSERT_TRUE(b->Eval(absl::MakeConstSpan(&tokens[9], 1), BatchLogits::kLast).ok());
  auto la = a->logits(), lb = b->logits();
  ASSERT_TRUE(la.ok() && lb.ok());
  EXPECT_TRUE(std::equal(la->begin(), la->end(), lb->begin()));
}

// A sequence that advanced with EvalAcross truncates, saves and restores like any other: its
// history and rings were kept.
TEST(EvalAcrossTest, HistoryAndRingsAreKept) {
  std::unique_ptr<Artifact> artifact = Open(ArtifactPath("tiny-a-f32", "opt"));
  ASSERT_NE(artifact, nullptr);
  const GoldenCase golden = LoadGoldenCase("tiny-a-f32-T40");
  const size_t vocab = static_cast<size_t>(artifact->plan().model.vocab_size);
  SessionOptions options;
  options.batch_size = 2;  // small rings: window - 1 + 2 rows
  std::unique_ptr<Sequence> a = NewSequence(*artifact, options), b = NewSequence(*artifact, options);
  Sequence* both[] = {a.get(), b.get()};
  for (size_t p = 0; p < 30; ++p) {
    const int32_t next[] = {golden.tokens[p], golden.tokens[p]};
    ASSERT_TRUE(Sequence::EvalAcross(both, next).ok());
  }
  EXPECT_THAT(std::vector<int32_t>(a->history().begin(), a->history().end()),
              ::testing::ElementsAreArray(golden.tokens.begin(), golden.tokens.begin() + 30));
  // Truncating past the ring recomputes it from the history: position 12 then matches the golden
  // logits again.
  ASSERT_TRUE(a->Truncate(12).ok());
  ASSERT_TRUE(a->Eval(absl::MakeConstSpan(&golden.tokens[12], 1), BatchLogits::kLast).ok());
  auto logits = a->logits();
  ASSERT_TRUE(logits.ok());
  EXPECT_LE(MaxAbsDiff(*logits, absl::MakeConstSpan(golden.logits_ref.data() + 12 * vocab, vocab)),
            kReferenceTolerance);
}

TEST(EvalAcrossTest, Errors) {
  std::unique_ptr<Artifact> artifact = Open(ArtifactPath("tiny-a-f32", "opt"));
  std::unique_ptr<Artifact> other = Open(ArtifactPath("tiny-a-bf16", "opt"));
  ASSERT_NE(artifact, nullptr);
  ASSERT_NE(other, nullptr);
  SessionOptions small;
  small.batch_size = 2;
  small.ctx_size = 4;
  std::unique_ptr<Sequence> a = NewSequence(*artifact, small), b = NewSequence(*artifact),
                            c = NewSequence(*artifact), d = NewSequence(*other);
  const int32_t two[] = {3, 4};
  const int32_t three[] = {3, 4, 5};
  {
    Sequence* s[] = {a.get(), b.get()};
    absl::Status status = Sequence::EvalAcross(s, three);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("3 tokens for 2 sessions"));
  }
  {
    Sequence* s[] = {a.get(), b.get(), c.get()};
    absl::Status status = Sequence::EvalAcross(s, three);
    EXPECT_THAT(status.message(), HasSubstr("exceed the batch size 2"));
  }
  {
    Sequence* s[] = {b.get(), b.get()};
    EXPECT_THAT(Sequence::EvalAcross(s, two).message(), HasSubstr("sessions[1] is sessions[0]"));
  }
  {
    Sequence* s[] = {b.get(), d.get()};
    EXPECT_THAT(Sequence::EvalAcross(s, two).message(), HasSubstr("another plan"));
  }
  {
    Sequence* s[] = {b.get(), a.get()};  // a's context (4) is smaller: allowed
    const int32_t bad[] = {3, 1 << 30};
    absl::Status status = Sequence::EvalAcross(s, bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("sessions[1]: tokens[0] = 1073741824 is out of range"));
    EXPECT_EQ(a->length(), 0);
    EXPECT_EQ(b->length(), 0);
  }
  {
    // A full context: nothing is evaluated, the message names the session.
    ASSERT_TRUE(a->Eval(three, BatchLogits::kLast).ok());
    ASSERT_TRUE(a->Eval(absl::MakeConstSpan(three, 1), BatchLogits::kLast).ok());
    Sequence* s[] = {b.get(), a.get()};
    absl::Status status = Sequence::EvalAcross(s, two);
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(status.message(), HasSubstr("sessions[1]: context full"));
    EXPECT_EQ(b->length(), 0);
    Sequence* bigger_second[] = {a.get(), b.get()};  // b's context exceeds the executor's
    EXPECT_THAT(Sequence::EvalAcross(bigger_second, two).message(),
                HasSubstr("more than sessions[0]'s"));
  }
  {
    Sequence* s[] = {b.get(), nullptr};
    EXPECT_THAT(Sequence::EvalAcross(s, two).message(), HasSubstr("sequences[1] is null"));
    EXPECT_EQ(Sequence::EvalAcross({}, {}).code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace cortiq
