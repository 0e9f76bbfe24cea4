// Session: the plan executor. Holds the execution state of one sequence (activation arena, KV
// caches, position) for an opened Artifact and evaluates a token (Eval) or a batch of tokens
// (EvalBatch, the plan's batched form) by running the plan's steps on the ops/ kernels. What a
// sequence needs beyond that (token history, truncation, saved states, inputs longer than a
// batch) is runtime/sequence.h.
#ifndef CORTIQ_RUNTIME_SESSION_H_
#define CORTIQ_RUNTIME_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/artifact.h"
#include "runtime/kv_cache.h"
#include "runtime/plan.h"
#include "runtime/thread_pool.h"

namespace cortiq {

// Options of a Session.
// The element type of the activations that prompt batches' matrix products read
// (SessionOptions::prefill_activations).
enum class PrefillActivations {
  kF32,   // as computed: exact
  kQ8_0,  // quantized to Q8_0 blocks for Q8_0 / Q4_0 weights: faster, lower precision
  kBF16,  // rounded to bf16 for BF16 weights: faster, lower precision
};

// "f32" / "q8_0" / "bf16" ("unknown" for another value), the names of --prefill-activations;
// PrefillActivationsFromName is its inverse.
const char* PrefillActivationsName(PrefillActivations activations);
std::optional<PrefillActivations> PrefillActivationsFromName(absl::string_view name);

// True if prompt batches multiply a matrix stored as `format` with `activations` (kQ8_0: Q8_0
// and Q4_0, plain or x16; kBF16: BF16; kF32: every format); the others stay exact.
bool PrefillActivationsApply(PrefillActivations activations, WeightFormat format);

struct SessionOptions {
  // Longest sequence (positions 0 .. ctx_size - 1) the session can evaluate;
  // clamped to the model's max_position_embeddings. Must be >= 1.
  // Full-attention caches hold ctx_size rows.
  int64_t ctx_size = 4096;
  // Threads of the session's pool, in [1, 256] (the calling thread is one of
  // them): matrix products are split by output rows; in a batch (EvalBatch),
  // attention and the other row-wise steps are split by rows when there is
  // enough work to pay for waking the pool. Results are bit-identical for any
  // count: every output is computed the same way whatever the split.
  int threads = 1;
  // Largest batch EvalBatch accepts: 0 = the plan's max_batch; otherwise clamped to
  // [1, max_batch] (and to ctx_size). The arena holds batch_size rows of every
  // activation, and sliding caches window - 1 + batch_size rows.
  int64_t batch_size = 0;
  // Element type of the KV caches (runtime/kv_cache.h): f32 (exact) or f16 (half the bytes
  // attention reads and the caches take; each cached key and value rounded to binary16, within
  // 2^-11 relative: logits move by about that relative error times their sensitivity; measured
  // on the golden models in tests/e2e/kv_f16_test.cc).
  KvType kv_type = KvType::kF32;
  // Activations of the prompt batches' matrix products (EvalBatch, batches past the few-rows
  // kernels): f32 (exact, the default) or, opt-in and lower precision,
  // - q8_0: each token's inputs to a Q8_0 or Q4_0 weight matrix quantized to Q8_0 blocks and
  //   multiplied with 8-bit integer dot products, as llama.cpp's CPU backend does for these
  //   formats (ops/matmul_q8_activations.h; 1.7-2.2x faster products with AVX-512 VNNI, the
  //   logits' deviation measured in tests/e2e/prefill_activations_test.cc);
  // - bf16: each token's inputs to a BF16 weight matrix rounded to bf16 and multiplied with
  //   AVX-512 BF16 dot products (ops/matmul_bf16_activations.h; the deviation measured in
  //   tests/e2e/prefill_activations_test.cc).
  // Other weight formats, decoding and the few-rows kernels stay exact.
  PrefillActivations prefill_activations = PrefillActivations::kF32;
};

// Which logits EvalBatch computes.
enum class BatchLogits {
  kNone,  // none (a prompt chunk whose logits nobody reads)
  kLast,  // the last token's: logits()
  kAll,   // every token's: batch_logits(t) (cortiq-run --dump-logits)
};

// The executor of one sequence. Create resolves every plan step once (weight
// pointers, the kernel for each step's weight format, sizes, RoPE tables, f32
// copies of bf16 norm gains, the values of scalar weights) and allocates
// everything (arena and caches for batch_size() rows, attention scratch); Eval
// and EvalBatch allocate nothing. Not thread-safe: use one Session per thread
// (they may share the Artifact, which must outlive them).
class Session {
 public:
  // Prepares a session for `artifact`'s plan (already validated by
  // Artifact::Open). Every allocation size is overflow-checked (the arena is
  // bounded by kMaxArenaBytes, cache sizes by KvCache::Create). Errors:
  // InvalidArgument for ctx_size < 1 or threads outside [1, 256];
  // ResourceExhausted if an allocation fails or its size overflows (the
  // message names it and its size).
  static absl::StatusOr<std::unique_ptr<Session>> Create(
      const Artifact& artifact, SessionOptions options);

  // As Create, for a Plan held in memory instead of an artifact file (tests,
  // tools that compile and run in one process). `plan` is copied and checked
  // with ValidatePlan(plan, weight_section_bytes); `weights` points at the
  // weight section (weight i at weights + plan.weights[i].offset), 4-byte
  // aligned, and must outlive the session. Errors: as Create, plus
  // InvalidArgument from ValidatePlan or a misaligned `weights`.
  static absl::StatusOr<std::unique_ptr<Session>> CreateFromPlan(
      const Plan& plan, const uint8_t* weights, uint64_t weight_section_bytes,
      SessionOptions options);

  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Evaluates `token` at position length() and advances length() by one. If
  // want_logits, also runs the steps of rows = logits (runtime/plan.h: the head
  // and, in Gemma-4 E models, the KV-shared layers), after which logits() holds
  // this position's logits, and checks that every logit is finite. Without it,
  // the taps those steps write keep older values unless every_tap() is set. Errors: those of CheckTokens (nothing is
  // evaluated); DataLoss "non-finite logits at position P (NaN/Inf in the weights, or an
  // overflow)" if want_logits and a logit is NaN or infinite. For that last
  // error the position is NOT consumed: length() stays P (its KV rows are
  // rewritten by the next Eval before anything reads them), so the caller may
  // continue with another token; logits() and the taps keep the non-finite
  // values for inspection. Without want_logits nothing is checked.
  absl::Status Eval(int32_t token, bool want_logits);

  // Evaluates `tokens` (1 <= T = tokens.size() <= batch_size()) at positions
  // length() .. length() + T - 1 with the plan's batched form (runtime/plan.h):
  // matrix-matrix products over the T rows, every row's keys and values appended
  // before the attention of its layer runs, each row attending causally within
  // its window. Equal to T calls of Eval within float rounding (the products sum
  // in another order; tests hold 1e-4). logits() (kLast, kAll) and the taps then
  // show the last token; batch_logits(t) every token (kAll). Errors: InvalidArgument
  // for an empty batch or T > batch_size(); those of CheckTokens (for all of these
  // nothing is evaluated); DataLoss for non-finite logits, naming the first such
  // position among the checked ones (kAll: every row; kLast: the last row only);
  // length() then becomes that position: the rows before it stay evaluated (they
  // do not depend on it: attention is causal), it and the rows after it are not.
  // A batch of one token is Eval (the per-token plan), bit for bit.
  absl::Status EvalBatch(absl::Span<const int32_t> tokens, BatchLogits logits);

  // Evaluates one token for each of several sessions in one pass of the plan (continuous
  // batching: the decode steps of a server's slots): row i is tokens[i] at position
  // sessions[i]->length(), its keys and values appended to sessions[i]'s caches and its queries
  // attending to sessions[i]'s own cache (each row at its own position). Every other step runs as
  // in EvalBatch over the n = sessions.size() rows: the linears and the LM head as products over
  // all n rows, so each weight is read once for all the sessions (up to 8 rows by the few-rows
  // kernels of ops/linear_rows.h, more by MatMul). Runs on sessions[0]'s arena and thread pool
  // (the executor; its batch_size() >= n). Afterwards each session is as after
  // Eval(tokens[i], true): length() one more, logits() its row's [vocab_size] logits; its taps
  // are unspecified. For n <= 8 equal to calling Eval on each session bit for bit (the few-rows
  // kernels compute each row as the decode kernels do; tests/e2e/eval_across_test.cc); for
  // n > 8 within float rounding (the products sum in MatMul's order, as EvalBatch). Every session must run the plan of sessions[0] over the same weights (sessions
  // of one Artifact), with ctx_size() <= sessions[0]->ctx_size(). Errors, nothing evaluated:
  // InvalidArgument for no sessions, tokens.size() != sessions.size(), n > sessions[0]'s
  // batch_size(), a null or repeated session, or one of another plan; CheckTokens' errors of a
  // session, prefixed "sessions[i]: ". DataLoss "sessions[i]: non-finite logits at position P
  // ..." if a row's logits are NaN or infinite: that session (and every other failing one) is
  // not advanced (its position is rewritten by its next evaluation), the others are.
  static absl::Status EvalAcross(absl::Span<Session* const> sessions,
                                 absl::Span<const int32_t> tokens);

  // OkStatus if `tokens` can be evaluated next: ResourceExhausted "context full:
  // T tokens at position P exceed the context size C (R positions left)" if
  // length() + T > ctx_size() (checked first, without reading the ids), then
  // InvalidArgument "tokens[i] = X is out of range [0, vocab_size)".
  absl::Status CheckTokens(absl::Span<const int32_t> tokens) const;
  // [vocab_size] logits of row t (t < T) of the last EvalBatch(..., kAll).
  absl::Span<const float> batch_logits(size_t t) const;
  // plan().taps[i] of row t (t < T) of the last EvalBatch (or of the last Eval, t = 0).
  absl::Span<const float> batch_tap(size_t i, size_t t) const;
  // Whether every tap is computed on every evaluated row: the steps of rows = logits that
  // are not logits_only (the layers that feed only the logits, e.g. Gemma-4's KV-shared
  // layers) then run on every row, as if every position's logits were wanted but for the head
  // (cortiq-run --dump-layers, observers of the taps). Off by default; it costs what the
  // rows analysis saves (runtime/plan.h). Caches and logits are the same either way.
  bool every_tap() const { return every_tap_; }
  void set_every_tap(bool every_tap) { every_tap_ = every_tap; }
  // Per-step wall time (cortiq-bench --profile): while `seconds` is non-null, Eval and
  // EvalBatch add each step's elapsed seconds to (*seconds)[i], i the step's index in
  // plan().steps (the vector is resized to the step count, its entries kept); steps that do not
  // run add nothing. Timing costs two clock reads per step. Null (the default) stops it.
  void set_step_profile(std::vector<double>* seconds);
  // The largest batch EvalBatch accepts (SessionOptions::batch_size resolved).
  int64_t batch_size() const { return batch_size_; }

  // [vocab_size] f32 logits of the last Eval(..., true); unspecified before
  // one.
  absl::Span<const float> logits() const;
  // The buffer of plan().taps[i] (0 <= i < taps.size()) as left by the last
  // Eval.
  absl::Span<const float> tap(size_t i) const;

  // Number of positions evaluated since Create / Reset.
  int64_t length() const { return length_; }
  // The effective context size (options.ctx_size clamped to
  // max_position_embeddings).
  int64_t ctx_size() const { return ctx_size_; }
  // Starts a new sequence at position 0. Cache contents are not cleared (rows
  // are only read after being rewritten).
  void Reset() { length_ = 0; }

  const Plan& plan() const { return *plan_; }

  // The storage of plan().caches[i] (0 <= i < caches.size()), for inspection, for Sequence's
  // saved states and for tests that change cached keys/values to observe which layers read
  // them.
  KvCache& cache(size_t i) { return caches_[i]; }
  const KvCache& cache(size_t i) const { return caches_[i]; }

 private:
  // Sequence drives the session with inputs it has checked once (CheckTokens) and moves
  // length() for truncate and restore.
  friend class Sequence;
  struct Prepared;  // one plan step with resolved pointers, kernels and sizes
  struct Rows;      // the rows of an evaluation a step runs over
  struct RopeTable;
  // A step's kernel binding (one per kind, chosen by Prepare).
  using StepFn = void (Session::*)(const Prepared&, const Rows&);

  Session() = default;
  absl::Status Prepare(SessionOptions options);
  // Runs step i over `rows` (its kernel binding), timed into profile_ when set.
  void RunStep(size_t i, const Rows& rows);
  // EvalBatch after its checks: 1 <= tokens.size() <= batch_size() tokens that CheckTokens
  // accepted. One token runs EvalToken.
  absl::Status Run(absl::Span<const int32_t> tokens, BatchLogits logits);
  // Eval after its checks.
  absl::Status EvalToken(int32_t token, bool want_logits);
  // Sets length() to `length` (0 <= length <= ctx_size()) without touching the
  // caches (Sequence's truncate and restore): the caller guarantees that every cache row the
  // next positions read holds what evaluating the sequence's first `length` tokens wrote.
  void SetLength(int64_t length) { length_ = length; }
  // The batched layout (runtime/plan.h) for batches of `rows`: buffer `index`'s
  // first row and the floats between rows.
  float* BatchRow(int32_t index, size_t rows, size_t row) const;
  size_t BatchStride(int32_t index) const;
  // row_fn(t) for each row of `r`, split over the pool when the step has enough work.
  template <class F>
  void ForRows(const Prepared& p, const Rows& r, const F& row_fn);
  // The kernel bindings: step `p` over the rows `r`.
  void RunEmbedding(const Prepared& p, const Rows& r);
  void RunMatrix(const Prepared& p, const Rows& r);  // linear, lm_head
  void RunRmsNorm(const Prepared& p, const Rows& r);
  void RunResidualRmsNorm(const Prepared& p, const Rows& r);
  void RunRope(const Prepared& p, const Rows& r);
  void RunKvAppend(const Prepared& p, const Rows& r);
  void RunAttention(const Prepared& p, const Rows& r);
  void RunGeluTanh(const Prepared& p, const Rows& r);
  void RunGeluTanhMul(const Prepared& p, const Rows& r);
  void RunMul(const Prepared& p, const Rows& r);
  void RunAdd(const Prepared& p, const Rows& r);
  void RunScale(const Prepared& p, const Rows& r);
  void RunLayerScalar(const Prepared& p, const Rows& r);
  void RunSoftcap(const Prepared& p, const Rows& r);
  // f(begin, end, thread) over [0, n) split across the pool (or inline).
  template <class F>
  void ParallelFor(size_t n, const F& f);

  Plan owned_plan_;  // CreateFromPlan's copy
  const Plan* plan_ = nullptr;
  const uint8_t* weights_ = nullptr;
  int64_t ctx_size_ = 0;
  int64_t length_ = 0;
  FloatArray arena_;
  // Attention scratch: attention_scratch_floats_ per thread, at least
  // ops::AttentionScratchFloats(ctx_size, num_heads, head_dim) for every attention step.
  FloatArray scratch_;
  size_t attention_scratch_floats_ = 0;
  // One query's attention shared by the threads (RunAttention): every softmax block's partial
  // results, at least ops::AttentionPartialFloats(ctx_size, num_heads, head_dim) floats for every
  // attention step, allocated only with more than one thread (null otherwise).
  FloatArray shared_partials_;
  int64_t batch_size_ = 1;
  size_t last_rows_ = 1;  // rows of the last evaluation (1 after Eval)
  uint64_t evaluations_ = 0;             // EvalAcross calls run on this session's steps
  std::vector<int64_t> across_positions_;  // [batch_size]: EvalAcross's row positions
  bool every_tap_ = false;
  std::vector<double>* profile_ = nullptr;  // set_step_profile
  std::vector<KvCache> caches_;
  std::vector<RopeTable> rope_tables_;
  std::vector<FloatArray> gains_;  // f32 copies of bf16 norm gains
  std::vector<Prepared> steps_;
  std::unique_ptr<ThreadPool> pool_;       // null for one thread
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SESSION_H_
