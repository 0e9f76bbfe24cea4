// Tests of runtime/sequence.cc on hand-built toy plans: chunked evaluation against the scalar
// reference and against token-by-token evaluation, the observer, the order of the input checks,
// what a non-finite logit leaves evaluated (kAll and kLast), truncation against fresh runs across
// sliding windows, and saved states (round trips, other batch sizes, corruption, other models).
#include "runtime/sequence.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/runtime/toy_model.h"

namespace cortiq {
namespace {

using ::cortiq::testing::BuildToyModel;
using ::cortiq::testing::FindWeight;
using ::cortiq::testing::ToyConfig;
using ::cortiq::testing::ToyLayer;
using ::cortiq::testing::ToyModel;
using ::cortiq::testing::ToyReference;
using ::testing::HasSubstr;

constexpr ModelIdentity kToyIdentity = {0x1234, 0x5678};

// A sliding ring of 3 positions (wrapped many times by 20 tokens), a full layer and a layer
// sharing the first one's cache; batches of up to 8 tokens.
ToyModel SlidingToy() {
  ToyConfig config;
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 3, 0}};
  ToyModel toy = BuildToyModel(config);
  toy.plan.max_batch = 8;
  return toy;
}

std::unique_ptr<Sequence> MakeSequence(const ToyModel& toy, int64_t batch_size,
                                       int64_t ctx_size = 64,
                                       ModelIdentity identity = kToyIdentity) {
  SessionOptions options;
  options.ctx_size = ctx_size;
  options.batch_size = batch_size;
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::CreateFromPlan(toy.plan, toy.weights(), toy.section_bytes, options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Sequence>> sequence =
      Sequence::Create(*std::move(session), identity);
  EXPECT_TRUE(sequence.ok()) << sequence.status();
  return sequence.ok() ? *std::move(sequence) : nullptr;
}

std::vector<int32_t> Tokens(size_t n, uint32_t seed = 3) {
  std::vector<int32_t> tokens;
  uint32_t x = seed;
  while (tokens.size() < n) {
    x = x * 1664525u + 1013904223u;
    tokens.push_back(static_cast<int32_t>((x >> 8) % 1101));
  }
  return tokens;
}

std::vector<int32_t> Prefix(const std::vector<int32_t>& tokens, size_t n) {
  return std::vector<int32_t>(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(n));
}

// The logits after each of `tokens` ([T * vocab]), evaluated with kAll and collected by the
// observer; empty if Eval fails.
std::vector<float> EvalAll(Sequence& sequence, const std::vector<int32_t>& tokens) {
  std::vector<float> all;
  const absl::Status status =
      sequence.Eval(tokens, BatchLogits::kAll, [&](const EvaluatedToken& t) {
        all.insert(all.end(), t.logits().begin(), t.logits().end());
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
  return status.ok() ? all : std::vector<float>();
}

// The logits after each of `continuation`, evaluated token by token after `prefix` by a new
// sequence.
std::vector<float> Fresh(const ToyModel& toy, const std::vector<int32_t>& prefix,
                         const std::vector<int32_t>& continuation) {
  std::unique_ptr<Sequence> fresh = MakeSequence(toy, 1);
  EXPECT_TRUE(fresh->Eval(prefix, BatchLogits::kNone).ok());
  return EvalAll(*fresh, continuation);
}

float MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  return m;
}

std::vector<uint8_t> Save(const Sequence& sequence) {
  std::vector<uint8_t> state(sequence.StateSize());
  EXPECT_TRUE(sequence.Save(absl::MakeSpan(state)).ok());
  return state;
}

TEST(SequenceTest, ChunkedEvalMatchesTheScalarReferenceAndTokenByToken) {
  const ToyModel toy = SlidingToy();
  const std::vector<int32_t> tokens = Tokens(20);
  ToyReference reference(toy);
  std::vector<double> want;
  for (int32_t t : tokens) {
    const std::vector<double> logits = reference.Eval(t);
    want.insert(want.end(), logits.begin(), logits.end());
  }
  const std::vector<float> one_by_one = Fresh(toy, {}, tokens);
  ASSERT_EQ(one_by_one.size(), want.size());
  // Tolerance as session_test's ForwardTest: f32 kernels against the double forward.
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(one_by_one[i], want[i], 2e-5 * (1 + std::fabs(want[i]))) << i;
  }
  for (int64_t batch : {2, 3, 8}) {
    SCOPED_TRACE(batch);
    std::unique_ptr<Sequence> sequence = MakeSequence(toy, batch);
    EXPECT_EQ(sequence->batch_size(), batch);
    std::vector<int64_t> positions;
    std::vector<size_t> indices;
    std::vector<float> all;
    ASSERT_TRUE(sequence
                    ->Eval(tokens, BatchLogits::kAll,
                           [&](const EvaluatedToken& t) {
                             positions.push_back(t.position());
                             indices.push_back(t.index());
                             EXPECT_EQ(t.token(), tokens[t.index()]);
                             EXPECT_EQ(t.tap(0).size(), 64u);
                             all.insert(all.end(), t.logits().begin(), t.logits().end());
                             return absl::OkStatus();
                           })
                    .ok());
    ASSERT_EQ(positions.size(), tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
      EXPECT_EQ(positions[i], static_cast<int64_t>(i));
      EXPECT_EQ(indices[i], i);
    }
    // Batched products sum in another order: within 1e-4 (as Session::EvalBatch).
    EXPECT_LE(MaxDiff(all, one_by_one), 1e-4f);
    EXPECT_EQ(sequence->length(), 20);
    EXPECT_TRUE(std::equal(sequence->history().begin(), sequence->history().end(),
                           tokens.begin(), tokens.end()));
    const absl::StatusOr<absl::Span<const float>> last = sequence->logits();
    ASSERT_TRUE(last.ok());
    EXPECT_TRUE(std::equal(last->begin(), last->end(), all.end() - 1101));
  }
}

TEST(SequenceTest, LogitsModesAndWhatTheObserverSees) {
  const ToyModel toy = SlidingToy();
  const std::vector<int32_t> tokens = Tokens(11);
  std::unique_ptr<Sequence> sequence = MakeSequence(toy, 4);
  // kLast: only the last token has logits, and logits() holds them.
  size_t with_logits = 0, observed = 0;
  ASSERT_TRUE(sequence
                  ->Eval(tokens, BatchLogits::kLast,
                         [&](const EvaluatedToken& t) {
                           ++observed;
                           if (!t.logits().empty()) {
                             ++with_logits;
                             EXPECT_EQ(t.index(), tokens.size() - 1);
                           }
                           return absl::OkStatus();
                         })
                  .ok());
  EXPECT_EQ(observed, tokens.size());
  EXPECT_EQ(with_logits, 1u);
  const std::vector<float> fresh = Fresh(toy, {}, tokens);
  EXPECT_LE(MaxDiff(std::vector<float>(sequence->logits()->begin(), sequence->logits()->end()),
                    std::vector<float>(fresh.end() - 1101, fresh.end())),
            1e-4f);
  // kNone: no logits afterwards.
  ASSERT_TRUE(sequence->Eval(Tokens(2, 9), BatchLogits::kNone).ok());
  EXPECT_EQ(sequence->logits().status().code(), absl::StatusCode::kFailedPrecondition);
  // An empty input changes nothing.
  ASSERT_TRUE(sequence->Eval({}, BatchLogits::kAll).ok());
  EXPECT_EQ(sequence->length(), 13);
  // An observer's error stops the evaluation after the token it saw.
  const absl::Status stopped = sequence->Eval(
      Tokens(6, 5), BatchLogits::kAll, [&](const EvaluatedToken& t) -> absl::Status {
        return t.index() == 1 ? absl::CancelledError("stop") : absl::OkStatus();
      });
  EXPECT_EQ(stopped.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(sequence->length(), 13 + 4) << "the chunk of 4 tokens was evaluated";
}

TEST(SequenceTest, InputChecksComeBeforeAnyEvaluation) {
  const ToyModel toy = SlidingToy();
  std::unique_ptr<Sequence> sequence = MakeSequence(toy, 4, /*ctx_size=*/8);
  ASSERT_TRUE(sequence->Eval(Tokens(3), BatchLogits::kLast).ok());
  // The count is checked before any id is read: a span far longer than its storage is
  // rejected without a read (the span is never dereferenced; ASan builds would report one).
  const int32_t one = 5;
  absl::Status status = sequence->Eval(
      absl::MakeConstSpan(&one, size_t{1} << 40), BatchLogits::kLast);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("1099511627776 tokens at position 3 exceed the context size 8 "
                        "(5 positions left)"));
  status = sequence->Eval(std::vector<int32_t>{1, 2, 1101}, BatchLogits::kLast);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("tokens[2] = 1101 is out of range [0, 1101)"));
  status = sequence->Eval(std::vector<int32_t>{-1}, BatchLogits::kLast);
  EXPECT_THAT(std::string(status.message()), HasSubstr("tokens[0] = -1"));
  EXPECT_EQ(sequence->length(), 3);
  EXPECT_TRUE(sequence->logits().ok()) << "a rejected input leaves the logits";
  EXPECT_TRUE(sequence->CheckTokens(std::vector<int32_t>(5, 7)).ok());
  EXPECT_FALSE(sequence->CheckTokens(std::vector<int32_t>(6, 7)).ok());
}

TEST(SequenceTest, CreateNeedsAFreshSession) {
  const ToyModel toy = SlidingToy();
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::CreateFromPlan(toy.plan, toy.weights(), toy.section_bytes, SessionOptions{});
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Eval(3, false).ok());
  const absl::StatusOr<std::unique_ptr<Sequence>> sequence =
      Sequence::Create(*std::move(session), kToyIdentity);
  EXPECT_EQ(sequence.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Sequence::Create(nullptr, kToyIdentity).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Gives the LM head its own copy of the tied embedding table, so that poisoning a token's
// embedding row poisons only the logits of positions that read it.
void UntieHead(ToyModel* toy) {
  const int embed = FindWeight(toy->plan, "embed");
  WeightEntry head = toy->plan.weights[embed];
  head.name = "head";
  head.offset = toy->section_bytes;  // a multiple of 64
  toy->section_bytes += (head.size_bytes + 63) / 64 * 64;
  toy->section.resize(toy->section_bytes / 8 + 1);
  uint8_t* base = reinterpret_cast<uint8_t*>(toy->section.data());
  std::memcpy(base + head.offset, base + toy->plan.weights[embed].offset, head.size_bytes);
  toy->plan.weights.push_back(head);
  toy->values.push_back(toy->values[embed]);
  for (Step& s : toy->plan.steps) {
    if (s.kind == StepKind::kLmHead) s.weight = static_cast<int32_t>(toy->plan.weights.size() - 1);
  }
}

TEST(SequenceTest, NonFiniteLogitsKeepTheTokensBeforeTheFailingOne) {
  // Token 7's embedding row is NaN: its hidden state, and every later position attending to its
  // keys, gives NaN logits.
  constexpr int32_t kPoisoned = 7;
  ToyModel toy = SlidingToy();
  UntieHead(&toy);
  const WeightEntry& embed = toy.plan.weights[FindWeight(toy.plan, "embed")];
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t c = 0; c < embed.shape[1]; ++c) {
    std::memcpy(reinterpret_cast<uint8_t*>(toy.section.data()) + embed.offset +
                    (kPoisoned * embed.shape[1] + c) * 4,
                &nan, 4);
  }
  const std::vector<int32_t> prefix = {1, 2, 3};
  const std::vector<int32_t> input = {4, 5, kPoisoned, 8, 9};
  for (int64_t batch : {1, 8}) {
    SCOPED_TRACE(batch);
    // kAll: the first non-finite row fails; the two before it stay evaluated and observed.
    std::unique_ptr<Sequence> all = MakeSequence(toy, batch);
    ASSERT_TRUE(all->Eval(prefix, BatchLogits::kLast).ok());
    size_t observed = 0;
    absl::Status status = all->Eval(input, BatchLogits::kAll, [&](const EvaluatedToken& t) {
      ++observed;
      EXPECT_TRUE(std::all_of(t.logits().begin(), t.logits().end(),
                              [](float v) { return std::isfinite(v); }));
      return absl::OkStatus();
    });
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("tokens[2] (position 5): non-finite logits at position 5"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("2 tokens of the call were evaluated"));
    EXPECT_EQ(observed, 2u);
    EXPECT_EQ(all->length(), 5);
    EXPECT_EQ(all->logits().status().code(), absl::StatusCode::kFailedPrecondition);
    // It continues as a sequence that never saw the poisoned token.
    EXPECT_LE(MaxDiff(EvalAll(*all, {10, 11}), Fresh(toy, {1, 2, 3, 4, 5}, {10, 11})), 1e-4f);

    // kLast: only the last token's logits are computed, so the failure is the last token's and
    // the four before it (the poisoned one included) stay evaluated.
    std::unique_ptr<Sequence> last = MakeSequence(toy, batch);
    ASSERT_TRUE(last->Eval(prefix, BatchLogits::kLast).ok());
    status = last->Eval(input, BatchLogits::kLast);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(status.message()), HasSubstr("tokens[4] (position 7)"));
    EXPECT_EQ(last->length(), 7);
    EXPECT_EQ(last->history().back(), 8);
  }
}

TEST(SequenceTest, TruncateMatchesFreshRunsAcrossTheSlidingWindow) {
  const ToyModel toy = SlidingToy();
  const std::vector<int32_t> tokens = Tokens(14);
  const std::vector<int32_t> continuation = Tokens(5, 77);
  for (int64_t batch : {1, 4}) {
    std::unique_ptr<Sequence> sequence = MakeSequence(toy, batch);
    for (size_t evaluated : {1, 3, 4, 6, 14}) {
      for (size_t length = 0; length <= evaluated; ++length) {
        SCOPED_TRACE(::testing::Message()
                     << "batch " << batch << ", evaluated " << evaluated << ", cut to " << length);
        sequence->Reset();
        ASSERT_TRUE(sequence->Eval(Prefix(tokens, evaluated), BatchLogits::kLast).ok());
        ASSERT_TRUE(sequence->Truncate(static_cast<int64_t>(length)).ok());
        EXPECT_EQ(sequence->length(), static_cast<int64_t>(length));
        if (length < evaluated) {
          EXPECT_EQ(sequence->logits().status().code(), absl::StatusCode::kFailedPrecondition);
        }
        const std::vector<float> got = EvalAll(*sequence, continuation);
        const std::vector<float> want = Fresh(toy, Prefix(tokens, length), continuation);
        if (batch == 1) {
          EXPECT_EQ(got, want);  // token by token: bit for bit
        } else {
          EXPECT_LE(MaxDiff(got, want), 1e-4f);
        }
      }
    }
  }
  std::unique_ptr<Sequence> sequence = MakeSequence(toy, 1);
  ASSERT_TRUE(sequence->Eval(Prefix(tokens, 4), BatchLogits::kLast).ok());
  const absl::Status status = sequence->Truncate(5);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(std::string(status.message()), "length 5 is beyond the session's length 4");
  EXPECT_EQ(sequence->Truncate(-1).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(sequence->Truncate(4).ok());
  EXPECT_TRUE(sequence->logits().ok()) << "truncating to the length keeps the logits";
}

TEST(SequenceTest, SavedStatesRestoreIntoOtherBatchAndContextSizes) {
  const ToyModel toy = SlidingToy();
  const std::vector<int32_t> tokens = Tokens(12);
  const std::vector<int32_t> continuation = Tokens(6, 41);
  const std::vector<float> want = Fresh(toy, tokens, continuation);
  for (int64_t from : {1, 8}) {
    std::unique_ptr<Sequence> source = MakeSequence(toy, from);
    ASSERT_TRUE(source->Eval(tokens, BatchLogits::kLast).ok());
    const std::vector<float> source_logits(source->logits()->begin(), source->logits()->end());
    std::vector<uint8_t> state = Save(*source);
    // Save needs the whole state and writes exactly StateSize() bytes.
    std::vector<uint8_t> short_buffer(state.size() - 1);
    EXPECT_EQ(source->Save(absl::MakeSpan(short_buffer)).code(),
              absl::StatusCode::kInvalidArgument);
    for (int64_t to : {1, 3, 8}) {
      SCOPED_TRACE(::testing::Message() << from << " -> " << to);
      std::unique_ptr<Sequence> target = MakeSequence(toy, to, /*ctx_size=*/20);
      ASSERT_TRUE(target->Eval(Tokens(4, 99), BatchLogits::kLast).ok());
      ASSERT_TRUE(target->Restore(state).ok());
      EXPECT_EQ(target->length(), 12);
      EXPECT_TRUE(std::equal(target->history().begin(), target->history().end(),
                             tokens.begin(), tokens.end()));
      EXPECT_EQ(std::vector<float>(target->logits()->begin(), target->logits()->end()),
                source_logits);
      EXPECT_LE(MaxDiff(EvalAll(*target, continuation), want), 1e-4f);
      // A restored sequence truncates (recomputing from the restored history) like any other.
      ASSERT_TRUE(target->Truncate(5).ok());
      EXPECT_LE(MaxDiff(EvalAll(*target, continuation),
                        Fresh(toy, Prefix(tokens, 5), continuation)),
                1e-4f);
    }
  }
}

TEST(SequenceTest, BadStatesAreRejectedAndLeaveTheSequenceUntouched) {
  const ToyModel toy = SlidingToy();
  std::unique_ptr<Sequence> source = MakeSequence(toy, 1);
  ASSERT_TRUE(source->Eval(Tokens(9), BatchLogits::kLast).ok());
  const std::vector<uint8_t> state = Save(*source);

  std::unique_ptr<Sequence> target = MakeSequence(toy, 1);
  const std::vector<int32_t> own = Tokens(3, 8);
  ASSERT_TRUE(target->Eval(own, BatchLogits::kLast).ok());
  const auto expect = [&](const std::vector<uint8_t>& bytes, absl::StatusCode code,
                          const std::string& message) {
    const absl::Status status = target->Restore(bytes);
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(message));
  };
  std::vector<uint8_t> bad = state;
  bad[0] = 'X';
  expect(bad, absl::StatusCode::kDataLoss, "not a cortiq session state");
  bad = state;
  bad[16] = 3;  // version
  expect(bad, absl::StatusCode::kUnimplemented, "state format version 3");
  bad[16] = 0;
  expect(bad, absl::StatusCode::kDataLoss, "state format version 0");
  bad = state;
  std::reverse(bad.begin() + 20, bad.begin() + 24);  // byte-order mark
  expect(bad, absl::StatusCode::kUnimplemented, "byte order");
  bad = state;
  bad[bad.size() / 2] ^= 1;
  expect(bad, absl::StatusCode::kDataLoss, "checksum mismatch");
  expect(std::vector<uint8_t>(state.begin(), state.begin() + 79),
         absl::StatusCode::kInvalidArgument, "smaller than the 80-byte state header");
  bad = state;
  bad.push_back(0);
  expect(bad, absl::StatusCode::kInvalidArgument, "pass exactly the saved size");
  // Another model, and a context too short for the state.
  std::unique_ptr<Sequence> other = MakeSequence(toy, 1, 64, ModelIdentity{0x1234, 0x9999});
  EXPECT_EQ(other->Restore(state).code(), absl::StatusCode::kFailedPrecondition);
  std::unique_ptr<Sequence> small = MakeSequence(toy, 1, /*ctx_size=*/8);
  const absl::Status status = small->Restore(state);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("9 positions; this session's context size is 8"));

  EXPECT_EQ(target->length(), 3);
  EXPECT_TRUE(std::equal(target->history().begin(), target->history().end(), own.begin(),
                         own.end()));
  const std::vector<int32_t> next = Tokens(4, 21);
  EXPECT_EQ(EvalAll(*target, next), Fresh(toy, own, next));
}

}  // namespace
}  // namespace cortiq
