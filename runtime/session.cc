// Session: resolves every plan step to pointers and sizes once (Prepare), then
// evaluates a token by dispatching each step to its ops/ kernel (Eval).
#include "runtime/session.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hwy/base.h"
#include "ops/attention.h"
#include "ops/elementwise.h"
#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// Largest thread count a session accepts (far above any core count this
// targets).
constexpr int kMaxThreads = 256;
// A linear step is split across threads only from this many weight elements on:
// below it (64K elements = 128-256 KiB of weights, some tens of microseconds)
// waking the workers costs about as much as the product itself.
constexpr uint64_t kParallelMinElements = uint64_t{1} << 16;

// Exact bf16 -> f32 widening (bf16 is the top half of an f32).
float BF16ToF32(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

// Element `i` of a weight as f32.
float WeightElement(const uint8_t* data, WeightFormat format, size_t i) {
  if (format == WeightFormat::kBF16) return BF16ToF32(data + 2 * i);
  float f;
  std::memcpy(&f, data + 4 * i, sizeof(f));
  return f;
}

// True if no element of `values` is NaN or +-Inf. Tests the exponent bits rather than
// std::isfinite so that the check survives -ffinite-math-only and vectorizes.
bool AllFinite(absl::Span<const float> values) {
  uint32_t non_finite = 0;
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return non_finite == 0;
}

// Row `token` of an embedding table [rows, cols] in `format`, times `scale`, into out. HF's
// per-layer-input rule: ids past the table read row 0 (Gemma-4 tables have vocab_size rows, so
// this never triggers there).
void GatherTokenRow(const uint8_t* weight, WeightFormat format, size_t rows, size_t cols,
                    int32_t token, float scale, float* out) {
  const size_t row = static_cast<size_t>(token) < rows ? static_cast<size_t>(token) : 0;
  switch (format) {
    case WeightFormat::kBF16:
      ops::GatherRowBF16(reinterpret_cast<const hwy::bfloat16_t*>(weight), cols, row, 0, cols,
                         scale, out);
      return;
    case WeightFormat::kQ8_0:
      ops::GatherRowQ8_0(weight, cols, row, 0, cols, scale, out);
      return;
    case WeightFormat::kQ4_0:
      ops::GatherRowQ4_0(weight, cols, row, 0, cols, scale, out);
      return;
    case WeightFormat::kF32:
      ops::GatherRowF32(reinterpret_cast<const float*>(weight), cols, row, 0, cols, scale, out);
      return;
  }
}

// First row of thread `t`'s share of `rows` rows split over `threads` threads.
// The Linear kernels compute every row the same way whatever range it is in
// (ops/linear.h), so every output is bit-identical to the one-thread result;
// boundaries are multiples of 4 so that each thread's range starts a whole
// group of four rows (no lone rows in the middle of the matrix).
size_t SplitRow(size_t rows, int threads, int t) {
  if (t >= threads) return rows;
  const size_t begin =
      rows * static_cast<size_t>(t) / static_cast<size_t>(threads);
  return begin & ~size_t{3};
}

}  // namespace

// One step with everything resolved but its operands' rows (BatchRow places them
// for the evaluation's row count): the weight pointer into the mapping, the
// cache, sizes as size_t, parameters in the kernels' types.
struct Session::Prepared {
  StepKind kind = StepKind::kLinear;
  bool logits_only = false;
  size_t n = 0;  // elements of out (of in0 for kv_append)
  const uint8_t* weight = nullptr;
  WeightFormat format = WeightFormat::kF32;
  size_t rows = 0, cols = 0;  // weight [rows, cols]: embedding, linear, lm_head
  bool parallel = false;      // linear / lm_head split over the pool
  const float* gain = nullptr;  // (residual_)rms_norm gain (f32, possibly a
                                // copy) or null
  float scalar = 1.0f;  // residual_rms_norm's weight2[0] as f32, 1 if none
  KvCache* cache = nullptr;
  size_t i0 = 0, i1 = 0;
  size_t num_kv_heads = 0, head_dim = 0;  // attention
  float f0 = 0.0f;  // embedding/attention/scale factor, rms_norm eps, softcap
                    // cap, layer_scalar's weight value
  RopeTable* rope = nullptr;
};

// cos/sin of one (theta, head_dim, rotated_pairs) RoPE configuration for the
// positions being evaluated, recomputed only when they change (q and k of a
// layer, and all layers of one type, share it).
struct Session::RopeTable {
  double theta = 0.0;
  size_t head_dim = 0;
  size_t pairs = 0;
  // cos / sin of the positions of the current evaluation: [batch_size, pairs] each.
  int64_t batch_position = -1;  // first position they hold, -1 = none yet
  size_t batch_count = 0;
  FloatArray batch_cos, batch_sin;
};

Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Create(
    const Artifact& artifact, SessionOptions options) {
  std::unique_ptr<Session> session(new Session());
  session->plan_ = &artifact.plan();
  session->weights_ = artifact.weight_section();
  CORTIQ_RETURN_IF_ERROR(session->Prepare(options));
  return session;
}

absl::StatusOr<std::unique_ptr<Session>> Session::CreateFromPlan(
    const Plan& plan, const uint8_t* weights, uint64_t weight_section_bytes,
    SessionOptions options) {
  CORTIQ_RETURN_IF_ERROR(ValidatePlan(plan, weight_section_bytes));
  if (reinterpret_cast<uintptr_t>(weights) % 4 != 0 ||
      (weights == nullptr && weight_section_bytes != 0)) {
    return absl::InvalidArgumentError(
        "weights must be a 4-byte aligned, non-null pointer");
  }
  std::unique_ptr<Session> session(new Session());
  session->owned_plan_ = plan;
  session->plan_ = &session->owned_plan_;
  session->weights_ = weights;
  CORTIQ_RETURN_IF_ERROR(session->Prepare(options));
  return session;
}

absl::Status Session::Prepare(SessionOptions options) {
  const Plan& plan = *plan_;
  if (options.ctx_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ctx-size must be >= 1, got ", options.ctx_size));
  }
  if (options.threads < 1 || options.threads > kMaxThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "threads must be in [1, ", kMaxThreads, "], got ", options.threads));
  }
  ctx_size_ = std::min(options.ctx_size, plan.model.max_position_embeddings);
  if (options.batch_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch size must be >= 0 (0 = the plan's ", plan.max_batch, "), got ",
                     options.batch_size));
  }
  batch_size_ = options.batch_size == 0 ? plan.max_batch
                                        : std::min(options.batch_size, plan.max_batch);
  batch_size_ = std::max<int64_t>(1, std::min(batch_size_, ctx_size_));

  // ValidatePlan bounds arena_bytes; re-checked here because a wrapped size would allocate a tiny
  // arena that every step then overruns. Rounded up by division, which cannot wrap
  // ((arena_bytes + 3) / 4 is 0 for arena_bytes = 2^64 - 1).
  if (plan.arena_bytes > kMaxArenaBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "arena_bytes = ", plan.arena_bytes, " exceeds the limit of ", kMaxArenaBytes, " bytes"));
  }
  // ValidatePlan bounds max_batch * arena_bytes by kMaxArenaBytes.
  const uint64_t batch_arena_bytes = plan.arena_bytes * static_cast<uint64_t>(batch_size_);
  const uint64_t arena_floats = batch_arena_bytes / 4 + (batch_arena_bytes % 4 != 0 ? 1 : 0);
  CORTIQ_ASSIGN_OR_RETURN(arena_, AllocateFloats(arena_floats, "the activation arena"));
  CORTIQ_ASSIGN_OR_RETURN(scratch_,
                          AllocateFloats(static_cast<uint64_t>(ctx_size_) *
                                             static_cast<uint64_t>(options.threads),
                                         "the attention scratch"));
  caches_.reserve(plan.caches.size());
  for (const CacheEntry& entry : plan.caches) {
    CORTIQ_ASSIGN_OR_RETURN(KvCache cache, KvCache::Create(entry, ctx_size_, batch_size_));
    caches_.push_back(std::move(cache));
  }
  if (options.threads > 1)
    pool_ = std::make_unique<ThreadPool>(options.threads);

  const auto size = [&](int32_t index) {
    return static_cast<size_t>(plan.buffers[index].num_elements);
  };

  // RoPE tables: one per distinct configuration (the vector is sized first so
  // pointers into it stay valid).
  std::vector<size_t> rope_index(plan.steps.size(), 0);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    if (s.kind != StepKind::kRope) continue;
    size_t k = 0;
    while (k < rope_tables_.size() &&
           !(rope_tables_[k].theta == s.f0 &&
             rope_tables_[k].head_dim == static_cast<size_t>(s.i0) &&
             rope_tables_[k].pairs == static_cast<size_t>(s.i1))) {
      ++k;
    }
    if (k == rope_tables_.size()) {
      RopeTable table;
      table.theta = s.f0;
      table.head_dim = static_cast<size_t>(s.i0);
      table.pairs = static_cast<size_t>(s.i1);
      const uint64_t n = table.pairs * static_cast<uint64_t>(batch_size_);
      CORTIQ_ASSIGN_OR_RETURN(table.batch_cos, AllocateFloats(n, "a RoPE table"));
      CORTIQ_ASSIGN_OR_RETURN(table.batch_sin, AllocateFloats(n, "a RoPE table"));
      rope_tables_.push_back(std::move(table));
    }
    rope_index[i] = k;
  }

  // f32 gains of rms_norm and residual_rms_norm steps: f32 weights are used in
  // place (4-byte aligned: weight offsets are multiples of 64), bf16 ones are
  // widened once into a copy.
  std::vector<const float*> gain_of(plan.weights.size(), nullptr);
  for (const Step& s : plan.steps) {
    const bool has_gain =
        s.kind == StepKind::kRmsNorm || s.kind == StepKind::kResidualRmsNorm;
    if (!has_gain || s.weight < 0 || gain_of[s.weight] != nullptr) continue;
    const WeightEntry& w = plan.weights[s.weight];
    const uint8_t* data = weights_ + w.offset;
    if (w.format == WeightFormat::kF32) {
      gain_of[s.weight] = reinterpret_cast<const float*>(data);
      continue;
    }
    const size_t n = static_cast<size_t>(w.num_elements());
    CORTIQ_ASSIGN_OR_RETURN(FloatArray copy,
                            AllocateFloats(n, "an rms_norm gain"));
    for (size_t i = 0; i < n; ++i) copy[i] = WeightElement(data, w.format, i);
    gain_of[s.weight] = copy.get();
    gains_.push_back(std::move(copy));
  }

  steps_.resize(plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    Prepared& p = steps_[i];
    p.kind = s.kind;
    p.logits_only = s.logits_only;
    p.n = s.out >= 0 ? size(s.out) : size(s.in0);
    if (s.weight >= 0) {
      const WeightEntry& w = plan.weights[s.weight];
      p.weight = weights_ + w.offset;
      p.format = w.format;
      if (w.shape.size() == 2) {
        p.rows = static_cast<size_t>(w.shape[0]);
        p.cols = static_cast<size_t>(w.shape[1]);
      }
    }
    if (s.cache >= 0) {
      p.cache = &caches_[s.cache];
      p.num_kv_heads = static_cast<size_t>(plan.caches[s.cache].num_kv_heads);
      p.head_dim = static_cast<size_t>(plan.caches[s.cache].head_dim);
    }
    p.i0 = static_cast<size_t>(std::max<int64_t>(s.i0, 0));
    p.i1 = static_cast<size_t>(std::max<int64_t>(s.i1, 0));
    p.f0 = static_cast<float>(s.f0);
    switch (s.kind) {
      case StepKind::kRmsNorm:
        if (s.weight >= 0) p.gain = gain_of[s.weight];
        break;
      case StepKind::kResidualRmsNorm:
        if (s.weight >= 0) p.gain = gain_of[s.weight];
        if (s.weight2 >= 0) {  // read once here, never per token
          const WeightEntry& w2 = plan.weights[s.weight2];
          p.scalar = WeightElement(weights_ + w2.offset, w2.format, 0);
        }
        break;
      case StepKind::kRope:
        p.rope = &rope_tables_[rope_index[i]];
        break;
      case StepKind::kLayerScalar:
        p.f0 = WeightElement(p.weight, p.format, 0);
        break;
      case StepKind::kLinear:
      case StepKind::kLmHead:
        p.parallel =
            pool_ != nullptr && p.rows >= 8 &&
            static_cast<uint64_t>(p.rows) * p.cols >= kParallelMinElements;
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status Session::CheckTokens(absl::Span<const int32_t> tokens) const {
  // The room first: a count past the context is rejected without reading the ids.
  const uint64_t room = static_cast<uint64_t>(ctx_size_ - length_);
  if (tokens.size() > room) {
    return absl::ResourceExhaustedError(
        absl::StrCat("context full: ", tokens.size(), " tokens at position ", length_,
                     " exceed the context size ", ctx_size_, " (", room, " positions left)"));
  }
  const int64_t vocab = plan_->model.vocab_size;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat("tokens[", i, "] = ", tokens[i],
                                                     " is out of range [0, ", vocab, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status Session::Eval(int32_t token, bool want_logits) {
  CORTIQ_RETURN_IF_ERROR(CheckTokens(absl::MakeConstSpan(&token, 1)));
  return EvalToken(token, want_logits);
}

absl::Status Session::EvalToken(int32_t token, bool want_logits) {
  const int64_t position = length_;
  last_rows_ = 1;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].logits_only && !want_logits) continue;
    RunBatchStep(steps_[i], plan_->steps[i], &token, 1, 0, 1, position);
  }
  // A NaN or Inf logit would make greedy decoding silently pick token 0: report it instead.
  if (want_logits && !AllFinite(logits())) {
    // Roll back: the position's KV rows lie at or beyond length(), so no later query reads them
    // before they are rewritten (a sliding ring's overwritten row held a position the next query
    // at this position no longer sees), and the session stays usable, e.g. with another token.
    return absl::DataLossError(absl::StrCat("non-finite logits at position ", position,
                                            " (NaN/Inf in the weights, or an overflow)"));
  }
  ++length_;
  return absl::OkStatus();
}

float* Session::BatchRow(int32_t index, size_t rows, size_t row) const {
  const BufferEntry& b = plan_->buffers[index];
  const BufferEntry& root = b.view_of >= 0 ? plan_->buffers[b.view_of] : b;
  const uint64_t bytes = root.offset * rows + (b.offset - root.offset);
  return arena_.get() + bytes / 4 + row * static_cast<size_t>(root.num_elements);
}

size_t Session::BatchStride(int32_t index) const {
  const BufferEntry& b = plan_->buffers[index];
  return static_cast<size_t>(
      (b.view_of >= 0 ? plan_->buffers[b.view_of] : b).num_elements);
}

absl::Span<const float> Session::logits() const {
  return absl::Span<const float>(BatchRow(plan_->logits_buffer, last_rows_, last_rows_ - 1),
                                 plan_->buffers[plan_->logits_buffer].num_elements);
}

absl::Span<const float> Session::batch_logits(size_t t) const {
  return absl::Span<const float>(BatchRow(plan_->logits_buffer, last_rows_, t),
                                 plan_->buffers[plan_->logits_buffer].num_elements);
}

absl::Span<const float> Session::tap(size_t i) const { return batch_tap(i, last_rows_ - 1); }

absl::Span<const float> Session::batch_tap(size_t i, size_t t) const {
  const int32_t buffer = plan_->taps[i].buffer;
  return absl::Span<const float>(BatchRow(buffer, last_rows_, t),
                                 plan_->buffers[buffer].num_elements);
}

template <class F>
void Session::ParallelFor(size_t n, const F& f) {
  if (pool_ == nullptr || n < 2) {
    if (n > 0) f(size_t{0}, n, 0);
    return;
  }
  struct Context {
    const F* f;
    size_t n;
    int threads;
  } context{&f, n, pool_->num_threads()};
  pool_->Run(
      [](void* c, int t) {
        const Context& x = *static_cast<const Context*>(c);
        const size_t begin = x.n * static_cast<size_t>(t) / static_cast<size_t>(x.threads);
        const size_t end = x.n * static_cast<size_t>(t + 1) / static_cast<size_t>(x.threads);
        if (begin < end) (*x.f)(begin, end, t);
      },
      &context);
}

namespace {

// Rows [begin, end) of y = W x for one row x (the matrix-vector kernels of decode), by weight
// format.
void LinearRows(const uint8_t* weight, WeightFormat format, const float* x, float* y, size_t rows,
                size_t cols, size_t begin, size_t end) {
  switch (format) {
    case WeightFormat::kBF16:
      ops::LinearBF16(reinterpret_cast<const hwy::bfloat16_t*>(weight), x, y, rows, cols, begin,
                      end);
      return;
    case WeightFormat::kQ8_0:
      ops::LinearQ8_0(weight, x, y, rows, cols, begin, end);
      return;
    case WeightFormat::kQ4_0:
      ops::LinearQ4_0(weight, x, y, rows, cols, begin, end);
      return;
    case WeightFormat::kF32:
      ops::LinearF32(reinterpret_cast<const float*>(weight), x, y, rows, cols, begin, end);
      return;
  }
}

// Rows [begin, end) of y = W x for `batch` rows of x, by weight format.
void MatMulRows(const uint8_t* weight, WeightFormat format, const float* x, size_t x_stride,
                float* y, size_t y_stride, size_t batch, size_t rows, size_t cols, size_t begin,
                size_t end) {
  switch (format) {
    case WeightFormat::kBF16:
      ops::MatMulBF16(reinterpret_cast<const hwy::bfloat16_t*>(weight), x, x_stride, y,
                      y_stride, batch, rows, cols, begin, end);
      return;
    case WeightFormat::kQ8_0:
      ops::MatMulQ8_0(weight, x, x_stride, y, y_stride, batch, rows, cols, begin, end);
      return;
    case WeightFormat::kQ4_0:
      ops::MatMulQ4_0(weight, x, x_stride, y, y_stride, batch, rows, cols, begin, end);
      return;
    case WeightFormat::kF32:
      ops::MatMulF32(reinterpret_cast<const float*>(weight), x, x_stride, y, y_stride, batch,
                     rows, cols, begin, end);
      return;
  }
}

}  // namespace

void Session::RunBatchStep(const Prepared& p, const Step& s, const int32_t* tokens,
                           size_t rows, size_t first, size_t count, int64_t position) {
  const auto out = [&](size_t t) { return BatchRow(s.out, rows, t); };
  const auto in0 = [&](size_t t) { return BatchRow(s.in0, rows, t); };
  const auto in1 = [&](size_t t) { return BatchRow(s.in1, rows, t); };
  // Row-wise steps: rows split over the pool when there is enough work to pay for waking it
  // (every row is computed the same way, so the result does not depend on the split).
  const bool split = count > 1 && count * std::max<size_t>(p.n, 1) >= (size_t{1} << 11);
  const auto for_rows = [&](const auto& row_fn) {
    if (!split) {
      for (size_t t = first; t < first + count; ++t) row_fn(t);
      return;
    }
    ParallelFor(count, [&](size_t b0, size_t b1, int) {
      for (size_t t = first + b0; t < first + b1; ++t) row_fn(t);
    });
  };
  switch (p.kind) {
    case StepKind::kEmbedding:
      for_rows([&](size_t t) {
        GatherTokenRow(p.weight, p.format, p.rows, p.cols, tokens[t], p.f0, out(t));
      });
      return;
    case StepKind::kLinear:
    case StepKind::kLmHead: {
      const float* x = in0(first);
      float* y = out(first);
      if (count == 1) {
        // Decode: the matrix-vector kernels, rows split in the pool's SplitRow shares.
        if (!p.parallel) {
          LinearRows(p.weight, p.format, x, y, p.rows, p.cols, 0, p.rows);
          return;
        }
        const int threads = pool_->num_threads();
        ParallelFor(static_cast<size_t>(threads), [&](size_t t0, size_t t1, int) {
          for (size_t t = t0; t < t1; ++t) {
            const size_t begin = SplitRow(p.rows, threads, static_cast<int>(t));
            const size_t end = SplitRow(p.rows, threads, static_cast<int>(t) + 1);
            if (begin < end) LinearRows(p.weight, p.format, x, y, p.rows, p.cols, begin, end);
          }
        });
        return;
      }
      const size_t x_stride = BatchStride(s.in0), y_stride = BatchStride(s.out);
      // Split when the whole product (all rows of the batch) is worth waking the workers.
      const bool parallel = pool_ != nullptr && p.rows >= 32 &&
                            static_cast<uint64_t>(count) * p.rows * p.cols >= kParallelMinElements;
      if (!parallel) {
        MatMulRows(p.weight, p.format, x, x_stride, y, y_stride, count, p.rows, p.cols, 0,
                   p.rows);
        return;
      }
      // Output rows split in blocks of 16: whole register tiles per thread.
      const size_t blocks = (p.rows + 15) / 16;
      ParallelFor(blocks, [&](size_t b0, size_t b1, int) {
        MatMulRows(p.weight, p.format, x, x_stride, y, y_stride, count, p.rows, p.cols, b0 * 16,
                   std::min(p.rows, b1 * 16));
      });
      return;
    }
    case StepKind::kRmsNorm:
      for_rows([&](size_t t) { ops::RmsNorm(in0(t), p.gain, out(t), p.n, p.i0, p.f0); });
      return;
    case StepKind::kRope: {
      RopeTable& table = *p.rope;
      if (table.batch_position != position || table.batch_count != rows) {
        for (size_t t = 0; t < rows; ++t) {
          ops::RopeCosSin(position + static_cast<int64_t>(t), table.theta, table.head_dim,
                          table.pairs, table.batch_cos.get() + t * table.pairs,
                          table.batch_sin.get() + t * table.pairs);
        }
        table.batch_position = position;
        table.batch_count = rows;
      }
      for_rows([&](size_t t) {
        if (out(t) != in0(t)) std::memcpy(out(t), in0(t), p.n * sizeof(float));
        ops::ApplyRope(out(t), p.n / p.i0, p.i0, p.i1, table.batch_cos.get() + t * table.pairs,
                       table.batch_sin.get() + t * table.pairs);
      });
      return;
    }
    case StepKind::kKvAppend:
      for_rows([&](size_t t) { p.cache->Append(position + static_cast<int64_t>(t), in0(t), in1(t)); });
      return;
    case StepKind::kAttention:
      ParallelFor(count, [&](size_t b0, size_t b1, int thread) {
        float* scratch = scratch_.get() + static_cast<size_t>(thread) * ctx_size_;
        for (size_t t = first + b0; t < first + b1; ++t) {
          const int64_t at = position + static_cast<int64_t>(t);
          ops::AttentionRing(in0(t), p.cache->keys(), p.cache->values(),
                             static_cast<size_t>(p.cache->rows()),
                             static_cast<size_t>(p.cache->FirstVisibleRow(at)),
                             static_cast<size_t>(p.cache->VisibleRows(at)), p.i0,
                             p.num_kv_heads, p.head_dim, p.f0, scratch, out(t));
        }
      });
      return;
    case StepKind::kGeluTanh:
      for_rows([&](size_t t) { ops::GeluTanh(in0(t), out(t), p.n); });
      return;
    case StepKind::kGeluTanhMul:
      for_rows([&](size_t t) { ops::GeluTanhMul(in0(t), in1(t), out(t), p.n); });
      return;
    case StepKind::kResidualRmsNorm:
      for_rows([&](size_t t) {
        ops::ResidualRmsNorm(in0(t), in1(t), p.gain, p.scalar, out(t), p.n, p.i0, p.f0);
      });
      return;
    case StepKind::kMul:
      for_rows([&](size_t t) { ops::Mul(in0(t), in1(t), out(t), p.n); });
      return;
    case StepKind::kAdd:
      for_rows([&](size_t t) { ops::Add(in0(t), in1(t), out(t), p.n); });
      return;
    case StepKind::kScale:
    case StepKind::kLayerScalar:
      for_rows([&](size_t t) { ops::Scale(in0(t), p.f0, out(t), p.n); });
      return;
    case StepKind::kSoftcap:
      for_rows([&](size_t t) { ops::Softcap(in0(t), p.f0, out(t), p.n); });
      return;
  }
}

absl::Status Session::EvalBatch(absl::Span<const int32_t> tokens, BatchLogits logits) {
  const size_t rows = tokens.size();
  if (rows == 0) return absl::InvalidArgumentError("EvalBatch: empty batch");
  if (rows > static_cast<size_t>(batch_size_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EvalBatch: ", rows, " tokens exceed the batch size ", batch_size_));
  }
  CORTIQ_RETURN_IF_ERROR(CheckTokens(tokens));
  return Run(tokens, logits);
}

absl::Status Session::Run(absl::Span<const int32_t> tokens, BatchLogits logits) {
  const size_t rows = tokens.size();
  // One token: the per-token plan (matrix-vector kernels), so a batch of one is bit-identical
  // to Eval.
  if (rows == 1) return EvalToken(tokens[0], logits != BatchLogits::kNone);
  const int64_t position = length_;
  last_rows_ = rows;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Prepared& p = steps_[i];
    if (p.logits_only) {
      if (logits == BatchLogits::kNone) continue;
      if (logits == BatchLogits::kLast) {
        RunBatchStep(p, plan_->steps[i], tokens.data(), rows, rows - 1, 1, position);
        continue;
      }
    }
    RunBatchStep(p, plan_->steps[i], tokens.data(), rows, 0, rows, position);
  }
  if (logits != BatchLogits::kNone) {
    for (size_t t = logits == BatchLogits::kAll ? 0 : rows - 1; t < rows; ++t) {
      if (!AllFinite(batch_logits(t))) {
        // Rolled back as in Eval to the failing row: rows before it are evaluated (causal
        // attention: they do not depend on it), the KV rows from it on lie at or beyond
        // length(), and the ring rows the batch overwrote held positions no later query reads
        // (window - 1 + batch rows).
        length_ = position + static_cast<int64_t>(t);
        return absl::DataLossError(absl::StrCat("non-finite logits at position ",
                                                position + static_cast<int64_t>(t),
                                                " (NaN/Inf in the weights, or an overflow)"));
      }
    }
  }
  length_ += static_cast<int64_t>(rows);
  return absl::OkStatus();
}

}  // namespace cortiq
