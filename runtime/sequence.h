// Sequence: one token sequence over a Session, with the state the executor alone does not keep:
// the token history, which positions each sliding-window ring still holds, truncation (which
// recomputes overwritten ring rows from the history), the saved-state format of Save/Restore,
// and inputs longer than a batch (evaluated in chunks of batch_size() tokens, each observed token
// by token). The C API (runtime/cortiq.h) and cortiq-run are thin layers over it.
#ifndef CORTIQ_RUNTIME_SEQUENCE_H_
#define CORTIQ_RUNTIME_SEQUENCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/artifact.h"
#include "runtime/plan.h"
#include "runtime/session.h"

namespace cortiq {

// What a saved state records of its model, so that restoring it into another model fails:
// the artifact's plan checksum (ArtifactHeader::checksum: header and plan, not the weights; from
// format 3.1 the plan holds the weights' hashes, so it identifies them too) and a digest of
// sampled weight pages.
struct ModelIdentity {
  uint64_t plan_checksum = 0;
  uint64_t weight_digest = 0;
};

// The identity of `artifact`: its header checksum, and FNV-1a (Fnv1a64) over the weight
// section's size and 16 evenly spaced 4 KiB chunks of it (all of it below 64 KiB). Touches at most
// 16 pages, so it stays cheap for multi-GB models, and two compilations of one plan with
// different weights almost surely differ.
ModelIdentity IdentifyModel(const Artifact& artifact);

// One evaluated token, as Sequence::Eval shows it to an observer; valid during the call only.
class EvaluatedToken {
 public:
  // Index of the token in the span given to Eval.
  size_t index() const { return index_; }
  // Its absolute position in the sequence.
  int64_t position() const { return position_; }
  // Its id.
  int32_t token() const { return token_; }
  // Its [vocab_size] f32 logits if the evaluation computed them (every token with
  // BatchLogits::kAll, the last one with kLast), else empty.
  absl::Span<const float> logits() const { return logits_; }
  // plan().taps[i] (i < taps.size()) after this token, e.g. "layer.3" = the hidden state after
  // decoder layer 3: [num_elements] f32.
  absl::Span<const float> tap(size_t i) const { return session_->batch_tap(i, row_); }

 private:
  friend class Sequence;
  EvaluatedToken(const Session* session, size_t row, size_t index, int64_t position,
                 int32_t token, absl::Span<const float> logits)
      : session_(session),
        row_(row),
        index_(index),
        position_(position),
        token_(token),
        logits_(logits) {}

  const Session* session_;
  size_t row_;  // row of the session's last evaluation
  size_t index_;
  int64_t position_;
  int32_t token_;
  absl::Span<const float> logits_;
};

// Called by Sequence::Eval after each evaluated token, in order. An error stops the evaluation
// and is returned by Eval (the tokens evaluated so far stay evaluated; length() tells how many).
using TokenObserver = absl::FunctionRef<absl::Status(const EvaluatedToken&)>;

// A token sequence on its own Session. Not thread-safe (one Sequence per thread; sequences of
// one Artifact may run concurrently). Everything is allocated at Create; nothing per token.
//
// Rows of the next chunk of an evaluation with `remaining` (>= 1) tokens left and chunks of at
// most `max_rows` (>= 1): min(max_rows, remaining), one less when that would leave exactly one
// token for a last chunk of its own and max_rows >= 3. A chunk of one row takes the decode
// kernels (ops/linear.h), whose rounding differs from the batched products' (ops/matmul.h),
// while batches of two or more rows give the same bits however a prompt is split
// (tests/e2e/prefill_rounding_test.cc): so a prompt's last logits, which pick its first
// generated token, do not depend on the batch size or the chunk size. (max_rows 2 cannot avoid
// a one-row chunk for an odd count; max_rows 1 is one row at a time throughout.)
size_t PromptChunkRows(size_t remaining, size_t max_rows);

// Errors use absl::Status codes that the C API maps one to one (runtime/c_api.cc):
// InvalidArgument (a bad id or buffer size), ResourceExhausted (context full), DataLoss
// (non-finite logits; a corrupt saved state), OutOfRange (a length past the sequence or the
// context), FailedPrecondition (no logits; a state of another model), Unimplemented (a state
// of a newer format or another byte order), Internal (a bug).
class Sequence {
 public:
  // A new session for `artifact` (Session::Create) and its identity (IdentifyModel). Errors: as
  // Session::Create; ResourceExhausted if the token history ([ctx_size] int32) cannot be
  // allocated.
  static absl::StatusOr<std::unique_ptr<Sequence>> Create(const Artifact& artifact,
                                                          SessionOptions options);
  // Over an existing, freshly created or Reset `session` (length() 0), saving states stamped
  // with `identity` (e.g. IdentifyModel of the session's artifact, computed once per model).
  // Errors: InvalidArgument for a null session or one with positions; ResourceExhausted as
  // above.
  static absl::StatusOr<std::unique_ptr<Sequence>> Create(std::unique_ptr<Session> session,
                                                          ModelIdentity identity);

  Sequence(const Sequence&) = delete;
  Sequence& operator=(const Sequence&) = delete;

  // Evaluates `tokens` at positions length() .. length() + T - 1 (T = tokens.size()) in chunks
  // of batch_size() tokens (Session::EvalBatch: one chunk reads every weight once; a chunk of
  // one token is Session::Eval; PromptChunkRows: no last chunk of one token after others), calling `observer` after each token, and advances length() by
  // T. `logits` says which logits are computed and checked for NaN/Inf: kAll every token's,
  // kLast the last token's (logits() then holds them), kNone none (logits() then has none).
  // T = 0 does nothing. Checked before anything is evaluated (and before any id is read): the
  // context (ResourceExhausted "context full: T tokens at position P exceed the context size C
  // (R positions left)"), then every id (InvalidArgument "tokens[i] = X is out of range [0,
  // vocab_size)"). DataLoss "tokens[i] (position P): non-finite logits ...; i tokens of the
  // call were evaluated" if a computed logit is NaN or infinite: the tokens before token i
  // stay evaluated (and observed), token i and those after it are not, and logits() has none.
  // Token i is the first whose logits are non-finite with kAll; with kLast only the last
  // token's logits are computed, so it is the last token (all T - 1 others stay evaluated).
  // An observer error is returned as is (see TokenObserver).
  absl::Status Eval(absl::Span<const int32_t> tokens, BatchLogits logits);
  absl::Status Eval(absl::Span<const int32_t> tokens, BatchLogits logits,
                    TokenObserver observer);

  // One token for each of several sequences in one batched evaluation (Session::EvalAcross:
  // row i is tokens[i] at sequences[i]->length(), attending to sequences[i]'s own caches; the
  // linears as matrix-matrix products over the rows, each weight read once for all of them), on
  // sequences[0]'s session (its arena and threads). Afterwards each sequence is as after
  // Eval({tokens[i]}, BatchLogits::kLast): its history has the token and logits() its logits
  // (within float rounding of Eval's: the products sum in another order; one sequence is Eval
  // bit for bit). The sequences must be distinct sequences of one Artifact (or of one plan and
  // weights), with batch_size() of sequences[0] >= their count. Errors: those of
  // Session::EvalAcross (InvalidArgument, ResourceExhausted "sessions[i]: context full ...",
  // nothing evaluated); DataLoss naming the first sequence whose logits are NaN or infinite:
  // that sequence and every other failing one are not advanced and have no logits; the others
  // are advanced.
  static absl::Status EvalAcross(absl::Span<Sequence* const> sequences,
                                 absl::Span<const int32_t> tokens);

  // The checks of Eval, for callers that want to reject an input before any side effect:
  // OkStatus if `tokens` fits the context after length() and every id is in [0, vocab_size).
  absl::Status CheckTokens(absl::Span<const int32_t> tokens) const;

  // The [vocab_size] f32 logits of the last evaluated token: available after an Eval that
  // computed them (kLast, kAll), and after restoring a state saved while they were available;
  // not after Create, Reset, a Truncate to a shorter length, an Eval with kNone or a failed Eval
  // (FailedPrecondition "no logits: ...").
  absl::StatusOr<absl::Span<const float>> logits() const;

  // Positions evaluated: the next token's position.
  int64_t length() const { return session_->length(); }
  // The session's context size (SessionOptions::ctx_size resolved).
  int64_t ctx_size() const { return session_->ctx_size(); }
  // Tokens per chunk of Eval (SessionOptions::batch_size resolved).
  int64_t batch_size() const { return session_->batch_size(); }
  // The tokens of positions 0 .. length() - 1.
  absl::Span<const int32_t> history() const {
    return absl::MakeConstSpan(history_.get(), static_cast<size_t>(length()));
  }

  // Starts a new sequence at position 0 (O(1): caches are not cleared, rows are only read after
  // being rewritten).
  void Reset();

  // Forgets every position >= `length` (0 <= length <= length()), so that the next Eval sees
  // exactly what a sequence that evaluated only the first `length` tokens sees (bit-identical
  // logits). Sliding-window layers keep a ring of window - 1 + batch_size rows, in which
  // positions >= length may have overwritten rows that the positions after the cut still need
  // (length - window + 1 .. length - 1); then every cache is recomputed by re-evaluating the
  // history's tokens 0 .. length - 1 without the LM head (later rows depend on every earlier
  // token through the full-attention layers and the stacked windows, so it starts at 0).
  // Otherwise (e.g. cutting one token, or a sequence that never outgrew the window) it is O(1).
  // length = 0 is Reset. logits() has none afterwards unless length == length(). Errors:
  // OutOfRange "length L is beyond the session's length N"; Internal if a recomputation fails
  // (impossible for a valid history; the sequence is then Reset).
  absl::Status Truncate(int64_t length);

  // Bytes of the state Save writes now: a header, the KV rows the sequence still uses (every
  // position of full-attention caches, at most `window` positions of sliding ones), the token
  // history and, if available, the last logits.
  size_t StateSize() const;
  // Writes the state into the first StateSize() bytes of `out` (the format is described in
  // sequence.cc; host byte order, with the model's identity, a version and a checksum).
  // Errors: InvalidArgument "buffer of N bytes; the state needs M" if out is smaller.
  absl::Status Save(absl::Span<uint8_t> out) const;
  // Replaces the sequence's state by one Save wrote for the same model, in this or another
  // sequence of any context size that holds its length, any batch size and thread count.
  // Everything is checked before anything changes: on error the sequence is untouched. Errors:
  // InvalidArgument (smaller than the state header; not exactly the recorded size),
  // DataLoss "corrupt session state: ..." (bad magic, checksum mismatch, inconsistent contents,
  // an older format), Unimplemented (a newer format version, another byte order),
  // FailedPrecondition (saved from a different model: plan checksum, weight digest, vocab size
  // or cache count differ), OutOfRange (more positions than ctx_size()).
  absl::Status Restore(absl::Span<const uint8_t> state);

  const Session& session() const { return *session_; }
  const Plan& plan() const { return session_->plan(); }
  // Session::set_every_tap: every tap on every evaluated row (for observers of the taps).
  void set_every_tap(bool every_tap) { session_->set_every_tap(every_tap); }
  // Session::set_step_profile: per-step wall time.
  void set_step_profile(std::vector<double>* seconds) { session_->set_step_profile(seconds); }

 private:
  enum class LogitsState { kNone, kLive, kRestored };

  Sequence() = default;
  absl::Status EvalChunks(absl::Span<const int32_t> tokens, BatchLogits logits,
                          const TokenObserver* observer);
  // Records that positions [first, first + count) are about to be written.
  void MarkWritten(int64_t first, int64_t count);
  // First position of cache `c` that Save writes.
  int64_t FirstSaved(size_t c) const;

  std::unique_ptr<Session> session_;
  ModelIdentity identity_;
  std::unique_ptr<int32_t[]> history_;  // [ctx_size]
  // Per cache: every position in [valid_from, length) still has its rows in the cache (always 0
  // for full caches; for a ring of R rows, evaluating position p overwrote p - R, so
  // valid_from >= p - R + 1 after it).
  std::vector<int64_t> valid_from_;
  LogitsState logits_state_ = LogitsState::kNone;
  std::unique_ptr<float[]> restored_logits_;  // [vocab_size]
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SEQUENCE_H_
