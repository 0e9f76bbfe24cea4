// Session: resolves every plan step once (Prepare: pointers, sizes, and its kernel binding by
// kind and weight format), then evaluates a token (Eval) or a batch (EvalBatch) by calling the
// bound kernels in plan order.
#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hwy/base.h"
#include "ops/attention.h"
#include "ops/elementwise.h"
#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/matmul.h"
#include "ops/matmul_bf16_activations.h"
#include "ops/matmul_q8_activations.h"
#include "ops/quantize.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "base/status_macros.h"
#include "runtime/weight_codec.h"

namespace cortiq {
namespace {

// Largest thread count a session accepts (far above any core count this
// targets).
constexpr int kMaxThreads = 256;
// A linear step is split across threads only from this many weight elements on:
// below it (64K elements = 128-256 KiB of weights, some tens of microseconds)
// waking the workers costs about as much as the product itself.
constexpr uint64_t kParallelMinElements = uint64_t{1} << 16;
// EvalAcross batches of up to this many rows (one decode row per sequence) go through the
// few-rows kernels (ops/linear_rows.h), whose rows get the decode kernel's bits, so a sequence
// decoded with others gets the logits it gets alone; larger ones through MatMul. Measured at the
// E2B shapes (bench/linear_rows_benchmark.cc, bench/README.md): LinearRows beats MatMul at 1-8
// rows (3-5x at 1-2 rows), the two are about even at 16. Prompt batches (EvalBatch) keep MatMul
// at every size, so their logits do not depend on how a prompt is split into batches of two or
// more (tests/e2e/prefill_rounding_test.cc); LinearRows would be faster for prompt chunks of a
// few tokens but would tie their bits to the chunk size.
constexpr size_t kLinearRowsMaxBatch = 8;
// RopeTable::batch_position of a table made for rows at positions of their own (EvalAcross).
constexpr int64_t kPerRowPositions = -2;

// The row at index i of the order 0, n-1, 1, n-2, 2, ... of n rows (a permutation of [0, n)):
// contiguous ranges of it hold about as many early rows as late ones, which balances work that
// grows with the row (causal attention over a batch) across threads.
size_t BalancedRow(size_t i, size_t n) { return i % 2 == 0 ? i / 2 : n - 1 - i / 2; }

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
  if (format == WeightFormat::kF16) {
    uint16_t bits;
    std::memcpy(&bits, data + 2 * i, sizeof(bits));
    return ops::F16BitsToF32(bits);
  }
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

namespace {

// The kernels of the weight-reading steps with one signature over the weight's bytes, one
// instance per storage format; Prepare picks a step's by its weight's format.

// Rows [begin, end) of y = W x for one row x (decode).
using LinearKernel = void (*)(const void* weight, const float* x, float* y, size_t rows,
                              size_t cols, size_t begin, size_t end);
// Rows [begin, end) of y = W x for `batch` rows of x (prefill).
using MatMulKernel = void (*)(const void* weight, const float* x, size_t x_stride, float* y,
                              size_t y_stride, size_t batch, size_t rows, size_t cols,
                              size_t begin, size_t end);
// Row `row` of a [rows, cols] table times `scale` into out[0, cols).
using GatherKernel = void (*)(const void* table, size_t cols, size_t row, float scale,
                              float* out);

void LinearF32(const void* w, const float* x, float* y, size_t rows, size_t cols,
               size_t begin, size_t end) {
  ops::LinearF32(reinterpret_cast<const float*>(w), x, y, rows, cols, begin, end);
}
void LinearBF16(const void* w, const float* x, float* y, size_t rows, size_t cols,
                size_t begin, size_t end) {
  ops::LinearBF16(reinterpret_cast<const hwy::bfloat16_t*>(w), x, y, rows, cols, begin, end);
}

void LinearRowsF32(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                   size_t batch, size_t rows, size_t cols, size_t begin, size_t end) {
  ops::LinearRowsF32(reinterpret_cast<const float*>(w), x, x_stride, y, y_stride, batch, rows,
                     cols, begin, end);
}
void LinearRowsBF16(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                    size_t batch, size_t rows, size_t cols, size_t begin, size_t end) {
  ops::LinearRowsBF16(reinterpret_cast<const hwy::bfloat16_t*>(w), x, x_stride, y, y_stride,
                      batch, rows, cols, begin, end);
}

void MatMulF32(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
               size_t batch, size_t rows, size_t cols, size_t begin, size_t end) {
  ops::MatMulF32(reinterpret_cast<const float*>(w), x, x_stride, y, y_stride, batch, rows, cols,
                 begin, end);
}
void MatMulBF16(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                size_t batch, size_t rows, size_t cols, size_t begin, size_t end) {
  ops::MatMulBF16(reinterpret_cast<const hwy::bfloat16_t*>(w), x, x_stride, y, y_stride, batch,
                  rows, cols, begin, end);
}

void GatherF32(const void* table, size_t cols, size_t row, float scale, float* out) {
  ops::GatherRowF32(reinterpret_cast<const float*>(table), cols, row, 0, cols, scale, out);
}
void GatherBF16(const void* table, size_t cols, size_t row, float scale, float* out) {
  ops::GatherRowBF16(reinterpret_cast<const hwy::bfloat16_t*>(table), cols, row, 0, cols, scale,
                     out);
}
void LinearF16(const void* w, const float* x, float* y, size_t rows, size_t cols,
               size_t begin, size_t end) {
  ops::LinearF16(reinterpret_cast<const hwy::float16_t*>(w), x, y, rows, cols, begin, end);
}
void MatMulF16(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
               size_t batch, size_t rows, size_t cols, size_t begin, size_t end) {
  ops::MatMulF16(reinterpret_cast<const hwy::float16_t*>(w), x, x_stride, y, y_stride, batch,
                 rows, cols, begin, end);
}
void GatherF16(const void* table, size_t cols, size_t row, float scale, float* out) {
  ops::GatherRowF16(reinterpret_cast<const hwy::float16_t*>(table), cols, row, 0, cols, scale,
                    out);
}

// The few-rows kernel of a format that has no LinearRows of its own in ops/linear_rows.h (F16,
// Q4_1, Q5_x, the K-quants, IQ4_x): `kLinear`, the decode kernel, for each activation row over
// blocks of kRowsPerBlock output rows, so that a block's weights (16 rows: 2-11 KiB each at the
// E2B/E4B widths) come from memory once and from the cache for the other rows. Each row gets the
// bits kLinear gives it alone, because the decode kernels compute each output row the same way
// whatever row range it is in (tests/ops/kernels_<format>_test.cc): a sequence decoded with others
// in EvalAcross gets the logits it gets alone, as with the dedicated kernels, which also share
// the decoding of each weight block between rows (these decode it once per row).
template <LinearKernel kLinear>
void LinearRowsByBlocks(const void* w, const float* x, size_t x_stride, float* y,
                        size_t y_stride, size_t batch, size_t rows, size_t cols, size_t begin,
                        size_t end) {
  constexpr size_t kRowsPerBlock = 16;
  for (size_t block = begin; block < end; block += kRowsPerBlock) {
    const size_t block_end = std::min(end, block + kRowsPerBlock);
    for (size_t t = 0; t < batch; ++t) {
      kLinear(w, x + t * x_stride, y + t * y_stride, rows, cols, block, block_end);
    }
  }
}

// A whole row of a block-format table: ops::GatherRow<Format> over [0, cols).
template <void (*kGather)(const void*, size_t, size_t, size_t, size_t, float, float*)>
void GatherBlocks(const void* table, size_t cols, size_t row, float scale, float* out) {
  kGather(table, cols, row, 0, cols, scale, out);
}

// The exact AMX product (ops::MatMulSplitAmx) of a format whose values have at most 16
// significant bits, two bf16 terms: Q4_0's d * (q - 8) (11 + 3 bits), Q5_0's d * (q - 16)
// (11 + 4), F16 (11). Rows decoded by the format's gather at scale 1 (exact).
template <void (*kGather)(const void*, size_t, size_t, size_t, size_t, float, float*)>
void MatMulSplitAmxTwoTerms(const void* w, const float* x, size_t x_stride, float* y,
                            size_t y_stride, size_t batch, size_t rows, size_t cols, size_t begin,
                            size_t end) {
  ops::MatMulSplitAmx(
      [](const void* table, size_t table_cols, size_t row, size_t col_begin, size_t count,
         float* out) { kGather(table, table_cols, row, col_begin, count, 1.0f, out); },
      2, w, x, x_stride, y, y_stride, batch, rows, cols, begin, end);
}

void GatherRowF16Bytes(const void* table, size_t cols, size_t row, size_t col_begin, size_t count,
                       float scale, float* out) {
  ops::GatherRowF16(static_cast<const hwy::float16_t*>(table), cols, row, col_begin, count, scale,
                    out);
}

// The kernels of one weight format (ops/linear.h, ops/matmul.h, ops/gather.h, ops/linear_rows.h).
struct FormatKernels {
  WeightFormat format;
  LinearKernel linear;
  MatMulKernel matmul;
  GatherKernel gather;
  // The few-rows kernel (MatMul's signature; each row's result has the bits of `linear` on that
  // row): ops/linear_rows.h's, or LinearRowsByBlocks over `linear`.
  MatMulKernel linear_rows = nullptr;
};

constexpr FormatKernels kFormatKernels[] = {
    {WeightFormat::kF32, LinearF32, MatMulF32, GatherF32, LinearRowsF32},
    {WeightFormat::kBF16, LinearBF16, MatMulBF16, GatherBF16, LinearRowsBF16},
    {WeightFormat::kF16, LinearF16, MatMulF16, GatherF16, LinearRowsByBlocks<LinearF16>},
    {WeightFormat::kQ8_0, ops::LinearQ8_0, ops::MatMulQ8_0, GatherBlocks<ops::GatherRowQ8_0>,
     ops::LinearRowsQ8_0},
    {WeightFormat::kQ4_0, ops::LinearQ4_0, ops::MatMulQ4_0, GatherBlocks<ops::GatherRowQ4_0>,
     ops::LinearRowsQ4_0},
    {WeightFormat::kQ4_1, ops::LinearQ4_1, ops::MatMulQ4_1, GatherBlocks<ops::GatherRowQ4_1>,
     LinearRowsByBlocks<ops::LinearQ4_1>},
    {WeightFormat::kQ5_0, ops::LinearQ5_0, ops::MatMulQ5_0, GatherBlocks<ops::GatherRowQ5_0>,
     LinearRowsByBlocks<ops::LinearQ5_0>},
    {WeightFormat::kQ5_1, ops::LinearQ5_1, ops::MatMulQ5_1, GatherBlocks<ops::GatherRowQ5_1>,
     LinearRowsByBlocks<ops::LinearQ5_1>},
    {WeightFormat::kQ2_K, ops::LinearQ2_K, ops::MatMulQ2_K, GatherBlocks<ops::GatherRowQ2_K>,
     LinearRowsByBlocks<ops::LinearQ2_K>},
    {WeightFormat::kQ3_K, ops::LinearQ3_K, ops::MatMulQ3_K, GatherBlocks<ops::GatherRowQ3_K>,
     LinearRowsByBlocks<ops::LinearQ3_K>},
    {WeightFormat::kQ4_K, ops::LinearQ4_K, ops::MatMulQ4_K, GatherBlocks<ops::GatherRowQ4_K>,
     LinearRowsByBlocks<ops::LinearQ4_K>},
    {WeightFormat::kQ5_K, ops::LinearQ5_K, ops::MatMulQ5_K, GatherBlocks<ops::GatherRowQ5_K>,
     LinearRowsByBlocks<ops::LinearQ5_K>},
    {WeightFormat::kQ6_K, ops::LinearQ6_K, ops::MatMulQ6_K, GatherBlocks<ops::GatherRowQ6_K>,
     LinearRowsByBlocks<ops::LinearQ6_K>},
    {WeightFormat::kIQ4_NL, ops::LinearIQ4_NL, ops::MatMulIQ4_NL,
     GatherBlocks<ops::GatherRowIQ4_NL>, LinearRowsByBlocks<ops::LinearIQ4_NL>},
    {WeightFormat::kIQ4_XS, ops::LinearIQ4_XS, ops::MatMulIQ4_XS,
     GatherBlocks<ops::GatherRowIQ4_XS>, LinearRowsByBlocks<ops::LinearIQ4_XS>},
    {WeightFormat::kQ4_0x16, ops::LinearQ4_0x16, ops::MatMulQ4_0x16,
     GatherBlocks<ops::GatherRowQ4_0x16>, ops::LinearRowsQ4_0x16},
    {WeightFormat::kQ8_0x16, ops::LinearQ8_0x16, ops::MatMulQ8_0x16,
     GatherBlocks<ops::GatherRowQ8_0x16>, ops::LinearRowsQ8_0x16},
    {WeightFormat::kQ4_Kx16, ops::LinearQ4_Kx16, ops::MatMulQ4_Kx16,
     GatherBlocks<ops::GatherRowQ4_Kx16>, ops::LinearRowsQ4_Kx16},
    {WeightFormat::kQ5_Kx16, ops::LinearQ5_Kx16, ops::MatMulQ5_Kx16,
     GatherBlocks<ops::GatherRowQ5_Kx16>, ops::LinearRowsQ5_Kx16},
};
static_assert(std::size(kFormatKernels) == std::size(kAllWeightFormats),
              "every weight format has its kernels");

// The kernels of `format`; ValidatePlan admits only formats of the enum.
const FormatKernels& KernelsFor(WeightFormat format) {
  for (const FormatKernels& k : kFormatKernels) {
    if (k.format == format) return k;
  }
  return kFormatKernels[0];
}

}  // namespace

// The rows of one evaluation a step runs over: rows [first, first + count) of a batch of `rows`
// rows (1 for Eval) whose first position is `position`, row t holding tokens[t].
// EvalAcross sets `sessions` and `positions`: row t then belongs to sessions[t] (its caches) at
// positions[t]; otherwise every row is this session's, row t at position + t.
struct Session::Rows {
  const int32_t* tokens;
  size_t rows, first, count;
  int64_t position;
  Session* const* sessions = nullptr;
  const int64_t* positions = nullptr;

  int64_t PositionOf(size_t t) const {
    return positions != nullptr ? positions[t] : position + static_cast<int64_t>(t);
  }
};

// One step with everything resolved but its operands' rows (BatchRow places them for the
// evaluation's row count): its kernel binding, buffer indices, the weight pointer into the mapping
// and the weight kernels for its format, the cache, sizes as size_t and the parameters in the
// kernels' types, each field meaning what the Step field of its name means (runtime/plan.h).
struct Session::Prepared {
  StepFn run = nullptr;  // Session::Run<Kind>, bound by Prepare
  bool logits_only = false;
  bool logits_rows = false;  // rows = kLogits: runs on the logits rows only
  int32_t out = -1, in0 = -1, in1 = -1;
  size_t n = 0;  // elements of out (of in0 for kv_append)
  // The weight of embedding, linear and lm_head steps: [rows, cols], and its kernels.
  const uint8_t* weight = nullptr;
  size_t rows = 0, cols = 0;
  size_t row_bytes = 0;  // bytes of one row of `weight` (embedding: what a token's gather reads)
  LinearKernel linear = nullptr;
  MatMulKernel linear_rows = nullptr;  // batches of up to kLinearRowsMaxBatch rows
  MatMulKernel matmul = nullptr;        // prompt batches (EvalBatch): may be an opt-in
  MatMulKernel matmul_exact = nullptr;  // decode rows past linear_rows (EvalAcross): exact
  GatherKernel gather = nullptr;
  bool parallel = false;        // decode: linear / lm_head rows split over the pool
  const float* gain = nullptr;  // norms: the f32 gain (in place or a widened copy), or null
  float scalar = 1.0f;          // layer_scalar's weight; residual_rms_norm's scalar (1 if none)
  size_t group_size = 0;
  float eps = 0.0f;
  float scale = 0.0f;   // embedding, attention
  float factor = 0.0f;  // scale
  float cap = 0.0f;     // softcap
  size_t num_heads = 0, num_kv_heads = 0, head_dim = 0;  // attention (head_dim: rope too)
  size_t rotated_pairs = 0;                             // rope
  KvCache* cache = nullptr;
  int32_t cache_index = -1;  // plan().caches index of `cache` (EvalAcross: the row's session's)
  RopeTable* rope = nullptr;

  // The cache row t of `r` appends to and reads.
  KvCache* CacheOf(const Rows& r, size_t t) const {
    return r.sessions != nullptr ? &r.sessions[t]->caches_[static_cast<size_t>(cache_index)]
                                 : cache;
  }
};

// cos/sin of one (theta, head_dim, rotated_pairs) RoPE configuration for the
// positions being evaluated, recomputed only when they change (q and k of a
// layer, and all layers of one type, share it).
struct Session::RopeTable {
  double theta = 0.0;
  size_t head_dim = 0;
  size_t pairs = 0;
  // cos / sin of the positions of the current evaluation: [batch_size, pairs] each.
  int64_t batch_position = -1;  // first position they hold, -1 = none yet, kPerRow: EvalAcross's
  uint64_t evaluation = 0;      // kPerRow: the Session::evaluations_ count they were made for
  size_t batch_count = 0;
  FloatArray batch_cos, batch_sin;
};

Session::~Session() = default;

const char* PrefillActivationsName(PrefillActivations activations) {
  switch (activations) {
    case PrefillActivations::kF32:
      return "f32";
    case PrefillActivations::kQ8_0:
      return "q8_0";
    case PrefillActivations::kBF16:
      return "bf16";
  }
  return "unknown";
}

bool PrefillActivationsApply(PrefillActivations activations, WeightFormat format) {
  switch (activations) {
    case PrefillActivations::kF32:
      return true;
    case PrefillActivations::kQ8_0:
      return format == WeightFormat::kQ8_0 || format == WeightFormat::kQ4_0 ||
             format == WeightFormat::kQ8_0x16 || format == WeightFormat::kQ4_0x16;
    case PrefillActivations::kBF16:
      return format == WeightFormat::kBF16;
  }
  return false;
}

std::optional<PrefillActivations> PrefillActivationsFromName(absl::string_view name) {
  for (PrefillActivations activations :
       {PrefillActivations::kF32, PrefillActivations::kQ8_0, PrefillActivations::kBF16}) {
    if (name == PrefillActivationsName(activations)) return activations;
  }
  return std::nullopt;
}

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
  if (!PrefillActivationsFromName(PrefillActivationsName(options.prefill_activations))) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefill_activations must be f32, q8_0 or bf16, got ",
                     static_cast<uint32_t>(options.prefill_activations)));
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
  // Attention scratch, sized by the plan's attention steps: per thread one softmax block's scores
  // of the most heads plus every block's partial results (ops::AttentionScratchFloats), and the
  // partials shared by the threads. Products checked: num_heads and ctx_size come from the file
  // and the caller (an overflow asks for an impossible size, which AllocateFloats refuses).
  uint64_t heads = 0, record_floats = 0;
  for (const Step& step : plan.steps) {
    if (step.kind != StepKind::kAttention) continue;
    // ValidatePlan: num_heads * the cache's head_dim = the query's elements (bounded by the
    // arena).
    const uint64_t head_dim = static_cast<uint64_t>(plan.caches[step.cache].head_dim);
    heads = std::max(heads, static_cast<uint64_t>(step.num_heads));
    record_floats =
        std::max(record_floats, static_cast<uint64_t>(step.num_heads) * (head_dim + 2));
  }
  const uint64_t block_rows = std::min<uint64_t>(ops::kAttentionRowBlock, ctx_size_);
  const uint64_t blocks = ops::AttentionRowBlockCount(static_cast<size_t>(ctx_size_));
  uint64_t partial_floats = 0, scratch_floats = 0, all_scratch_floats = 0;
  if (__builtin_mul_overflow(blocks, record_floats, &partial_floats) ||
      __builtin_add_overflow(partial_floats, heads * block_rows + 1, &scratch_floats) ||
      __builtin_mul_overflow(scratch_floats, static_cast<uint64_t>(options.threads),
                             &all_scratch_floats)) {
    all_scratch_floats = std::numeric_limits<uint64_t>::max();
  }
  attention_scratch_floats_ = static_cast<size_t>(scratch_floats);
  CORTIQ_ASSIGN_OR_RETURN(scratch_, AllocateFloats(all_scratch_floats, "the attention scratch"));
  if (options.threads > 1 && heads > 0) {
    CORTIQ_ASSIGN_OR_RETURN(shared_partials_,
                            AllocateFloats(partial_floats, "the shared attention partials"));
  }
  caches_.reserve(plan.caches.size());
  for (const CacheEntry& entry : plan.caches) {
    if (options.kv_type != KvType::kF32 && options.kv_type != KvType::kF16) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kv_type must be f32 or f16, got ", static_cast<uint32_t>(options.kv_type)));
    }
    CORTIQ_ASSIGN_OR_RETURN(KvCache cache,
                            KvCache::Create(entry, ctx_size_, batch_size_, options.kv_type));
    caches_.push_back(std::move(cache));
  }
  if (options.threads > 1)
    pool_ = std::make_unique<ThreadPool>(options.threads);
  across_positions_.assign(static_cast<size_t>(batch_size_), 0);

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
           !(rope_tables_[k].theta == s.theta &&
             rope_tables_[k].head_dim == static_cast<size_t>(s.head_dim) &&
             rope_tables_[k].pairs == static_cast<size_t>(s.rotated_pairs))) {
      ++k;
    }
    if (k == rope_tables_.size()) {
      RopeTable table;
      table.theta = s.theta;
      table.head_dim = static_cast<size_t>(s.head_dim);
      table.pairs = static_cast<size_t>(s.rotated_pairs);
      const uint64_t n = table.pairs * static_cast<uint64_t>(batch_size_);
      CORTIQ_ASSIGN_OR_RETURN(table.batch_cos, AllocateFloats(n, "a RoPE table"));
      CORTIQ_ASSIGN_OR_RETURN(table.batch_sin, AllocateFloats(n, "a RoPE table"));
      rope_tables_.push_back(std::move(table));
    }
    rope_index[i] = k;
  }

  // f32 gains of the norm steps: f32 weights are used in place (4-byte aligned: weight offsets
  // are multiples of kWeightAlignment), bf16 ones are widened once into a copy.
  std::vector<const float*> gain_of(plan.weights.size(), nullptr);
  const auto gain = [&](int32_t index) -> absl::StatusOr<const float*> {
    if (index < 0) return nullptr;
    if (gain_of[index] != nullptr) return gain_of[index];
    const WeightEntry& w = plan.weights[index];
    const uint8_t* data = weights_ + w.offset;
    if (w.format == WeightFormat::kF32) {
      gain_of[index] = reinterpret_cast<const float*>(data);
      return gain_of[index];
    }
    const size_t n = static_cast<size_t>(w.num_elements());
    CORTIQ_ASSIGN_OR_RETURN(FloatArray copy, AllocateFloats(n, "an rms_norm gain"));
    for (size_t i = 0; i < n; ++i) copy[i] = WeightElement(data, w.format, i);
    gain_of[index] = copy.get();
    gains_.push_back(std::move(copy));
    return gain_of[index];
  };
  // Scalar weights are read once here, never per token.
  const auto scalar = [&](int32_t index) {
    if (index < 0) return 1.0f;
    const WeightEntry& w = plan.weights[index];
    return WeightElement(weights_ + w.offset, w.format, 0);
  };

  steps_.resize(plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    const StepKindInfo& info = *FindStepKind(s.kind);  // ValidatePlan checked the kind
    Prepared& p = steps_[i];
    p.logits_only = s.logits_only;
    p.logits_rows = s.rows == StepRows::kLogits;
    p.out = s.out;
    p.in0 = s.in0;
    p.in1 = s.in1;
    p.n = s.out >= 0 ? size(s.out) : size(s.in0);
    if (info.reads_blocks) {  // a table or matrix, in any format: its kernels by format
      const WeightEntry& w = plan.weights[s.weight];
      p.weight = weights_ + w.offset;
      p.rows = static_cast<size_t>(w.shape[0]);
      p.cols = static_cast<size_t>(w.shape[1]);
      p.row_bytes = WeightRowBytes(w.format, p.cols);
      const FormatKernels& kernels = KernelsFor(w.format);
      p.linear = kernels.linear;
      p.linear_rows = kernels.linear_rows;
      p.matmul = kernels.matmul;
      // BF16, Q4_0 (and Q4_0x16), Q5_0 and F16 matrices' exact products on AMX where the CPU has it (the
      // same precision, ops/matmul_bf16_activations.h: 3 and 5 tile products per weight,
      // 2.6-3.4x and 1.2-1.75x the FMA kernels at E4B shapes); the other formats' would take
      // 6, no faster (Q8_0 measured).
      if (ops::BF16x3Available()) {
        if (w.format == WeightFormat::kBF16) p.matmul = ops::MatMulBF16x3;
        if (w.format == WeightFormat::kQ4_0) {
          p.matmul = MatMulSplitAmxTwoTerms<ops::GatherRowQ4_0>;
        }
        if (w.format == WeightFormat::kQ4_0x16) {
          p.matmul = MatMulSplitAmxTwoTerms<ops::GatherRowQ4_0x16>;
        }
        if (w.format == WeightFormat::kQ5_0) {
          p.matmul = MatMulSplitAmxTwoTerms<ops::GatherRowQ5_0>;
        }
        if (w.format == WeightFormat::kF16) p.matmul = MatMulSplitAmxTwoTerms<GatherRowF16Bytes>;
      }
      // Decoding stays exact whatever prefill_activations says.
      p.matmul_exact = p.matmul;
      if (options.prefill_activations != PrefillActivations::kF32 &&
          PrefillActivationsApply(options.prefill_activations, w.format)) {
        switch (w.format) {
          case WeightFormat::kQ8_0:
            p.matmul = ops::MatMulQ8_0Q8Activations;
            break;
          case WeightFormat::kQ4_0:
            p.matmul = ops::MatMulQ4_0Q8Activations;
            break;
          case WeightFormat::kQ8_0x16:
            p.matmul = ops::MatMulQ8_0x16Q8Activations;
            break;
          case WeightFormat::kQ4_0x16:
            p.matmul = ops::MatMulQ4_0x16Q8Activations;
            break;
          default:  // kBF16, the only other (PrefillActivationsApply)
            p.matmul = ops::MatMulBF16BF16Activations;
            break;
        }
      }
      p.gather = kernels.gather;
      p.parallel = pool_ != nullptr && p.rows >= 8 &&
                   static_cast<uint64_t>(p.rows) * p.cols >= kParallelMinElements;
    }
    if (s.cache >= 0) {
      p.cache = &caches_[s.cache];
      p.cache_index = s.cache;
      p.num_kv_heads = static_cast<size_t>(plan.caches[s.cache].num_kv_heads);
      p.head_dim = static_cast<size_t>(plan.caches[s.cache].head_dim);
    }
    p.group_size = static_cast<size_t>(s.group_size);
    p.eps = static_cast<float>(s.eps);
    p.scale = static_cast<float>(s.scale);
    p.factor = static_cast<float>(s.factor);
    p.cap = static_cast<float>(s.cap);
    p.num_heads = static_cast<size_t>(s.num_heads);
    // The kernel binding of each kind.
    switch (s.kind) {
      case StepKind::kEmbedding:
        p.run = &Session::RunEmbedding;
        break;
      case StepKind::kLinear:
      case StepKind::kLmHead:
        p.run = &Session::RunMatrix;
        break;
      case StepKind::kRmsNorm: {
        p.run = &Session::RunRmsNorm;
        CORTIQ_ASSIGN_OR_RETURN(p.gain, gain(s.weight));
        break;
      }
      case StepKind::kResidualRmsNorm: {
        p.run = &Session::RunResidualRmsNorm;
        CORTIQ_ASSIGN_OR_RETURN(p.gain, gain(s.weight));
        p.scalar = scalar(s.scalar);
        break;
      }
      case StepKind::kRope:
        p.run = &Session::RunRope;
        p.rope = &rope_tables_[rope_index[i]];
        p.head_dim = static_cast<size_t>(s.head_dim);
        p.rotated_pairs = static_cast<size_t>(s.rotated_pairs);
        break;
      case StepKind::kKvAppend:
        p.run = &Session::RunKvAppend;
        break;
      case StepKind::kAttention:
        p.run = &Session::RunAttention;
        break;
      case StepKind::kGeluTanh:
        p.run = &Session::RunGeluTanh;
        break;
      case StepKind::kGeluTanhMul:
        p.run = &Session::RunGeluTanhMul;
        break;
      case StepKind::kMul:
        p.run = &Session::RunMul;
        break;
      case StepKind::kAdd:
        p.run = &Session::RunAdd;
        break;
      case StepKind::kScale:
        p.run = &Session::RunScale;
        break;
      case StepKind::kLayerScalar:
        p.run = &Session::RunLayerScalar;
        p.scalar = scalar(s.weight);
        break;
      case StepKind::kSoftcap:
        p.run = &Session::RunSoftcap;
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
    const Prepared& p = steps_[i];
    if (p.logits_rows && !want_logits && (p.logits_only || !every_tap_)) continue;
    RunStep(i, Rows{&token, 1, 0, 1, position});
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

void Session::set_step_profile(std::vector<double>* seconds) {
  profile_ = seconds;
  if (profile_ != nullptr) profile_->resize(steps_.size(), 0.0);
}

void Session::RunStep(size_t i, const Rows& rows) {
  const Prepared& p = steps_[i];
  if (profile_ == nullptr) {
    (this->*p.run)(p, rows);
    return;
  }
  const auto begin = std::chrono::steady_clock::now();
  (this->*p.run)(p, rows);
  (*profile_)[i] +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
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

template <class F>
void Session::ForRows(const Prepared& p, const Rows& r, const F& row_fn) {
  // Rows split over the pool when there is enough work to pay for waking it (every row is
  // computed the same way, so the result does not depend on the split).
  const bool split = r.count > 1 && r.count * std::max<size_t>(p.n, 1) >= (size_t{1} << 11);
  if (!split) {
    for (size_t t = r.first; t < r.first + r.count; ++t) row_fn(t);
    return;
  }
  ParallelFor(r.count, [&](size_t b0, size_t b1, int) {
    for (size_t t = r.first + b0; t < r.first + b1; ++t) row_fn(t);
  });
}

void Session::RunEmbedding(const Prepared& p, const Rows& r) {
  // The tables stay mapped (ArtifactLoad::kReadMatrices reads only the matrices), so a token's
  // row can be a page of the file not in the page cache: one synchronous read per row, and a
  // prompt's rows are random. Asking for all of the batch's rows first lets the kernel have
  // their reads in flight together (E4B Q4_0, per-layer table 1.6 GB, file dropped from the page
  // cache: pp512's embedding steps 3.0 -> 0.10 ms per token, 8% -> 0.4% of the prompt). Advice
  // only: a row already present costs one syscall.
  if (r.count > 1 && p.row_bytes > 0) {
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    for (size_t t = r.first; t < r.first + r.count; ++t) {
      const size_t token = static_cast<size_t>(r.tokens[t]);
      const uintptr_t begin = reinterpret_cast<uintptr_t>(
          p.weight + (token < p.rows ? token : 0) * p.row_bytes);
      const uintptr_t first = begin / page * page;
      madvise(reinterpret_cast<void*>(first), begin + p.row_bytes - first, MADV_WILLNEED);
    }
  }
  ForRows(p, r, [&](size_t t) {
    // HF's per-layer-input rule: ids past the table read row 0 (Gemma-4 tables have vocab_size
    // rows, so this never triggers there).
    const size_t token = static_cast<size_t>(r.tokens[t]);
    p.gather(p.weight, p.cols, token < p.rows ? token : 0, p.scale,
             BatchRow(p.out, r.rows, t));
  });
}

void Session::RunMatrix(const Prepared& p, const Rows& r) {
  const float* x = BatchRow(p.in0, r.rows, r.first);
  float* y = BatchRow(p.out, r.rows, r.first);
  if (r.count == 1) {
    // Decode: the matrix-vector kernels, rows split in the pool's SplitRow shares.
    if (!p.parallel) {
      p.linear(p.weight, x, y, p.rows, p.cols, 0, p.rows);
      return;
    }
    const int threads = pool_->num_threads();
    ParallelFor(static_cast<size_t>(threads), [&](size_t t0, size_t t1, int) {
      for (size_t t = t0; t < t1; ++t) {
        const size_t begin = SplitRow(p.rows, threads, static_cast<int>(t));
        const size_t end = SplitRow(p.rows, threads, static_cast<int>(t) + 1);
        if (begin < end) p.linear(p.weight, x, y, p.rows, p.cols, begin, end);
      }
    });
    return;
  }
  const size_t x_stride = BatchStride(p.in0), y_stride = BatchStride(p.out);
  if (r.sessions != nullptr && r.count <= kLinearRowsMaxBatch && p.linear_rows != nullptr) {
    // EvalAcross: the weights stream once for all rows, each row getting the bits the decode
    // kernel gives it alone, split as decode splits.
    if (!p.parallel) {
      p.linear_rows(p.weight, x, x_stride, y, y_stride, r.count, p.rows, p.cols, 0, p.rows);
      return;
    }
    const int threads = pool_->num_threads();
    ParallelFor(static_cast<size_t>(threads), [&](size_t t0, size_t t1, int) {
      for (size_t t = t0; t < t1; ++t) {
        const size_t begin = SplitRow(p.rows, threads, static_cast<int>(t));
        const size_t end = SplitRow(p.rows, threads, static_cast<int>(t) + 1);
        if (begin < end) {
          p.linear_rows(p.weight, x, x_stride, y, y_stride, r.count, p.rows, p.cols, begin, end);
        }
      }
    });
    return;
  }
  // Split when the whole product (all rows of the batch) is worth waking the workers. Decode
  // rows (EvalAcross) take the exact kernel even when the prompt's is an opt-in.
  const MatMulKernel matmul = r.sessions != nullptr ? p.matmul_exact : p.matmul;
  const bool parallel = pool_ != nullptr && p.rows >= 32 &&
                        static_cast<uint64_t>(r.count) * p.rows * p.cols >= kParallelMinElements;
  if (!parallel) {
    matmul(p.weight, x, x_stride, y, y_stride, r.count, p.rows, p.cols, 0, p.rows);
    return;
  }
  // Output rows split in blocks of 16: whole register tiles per thread.
  const size_t blocks = (p.rows + 15) / 16;
  ParallelFor(blocks, [&](size_t b0, size_t b1, int) {
    matmul(p.weight, x, x_stride, y, y_stride, r.count, p.rows, p.cols, b0 * 16,
           std::min(p.rows, b1 * 16));
  });
}

void Session::RunRmsNorm(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::RmsNorm(BatchRow(p.in0, r.rows, t), p.gain, BatchRow(p.out, r.rows, t), p.n,
                 p.group_size, p.eps);
  });
}

void Session::RunResidualRmsNorm(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::ResidualRmsNorm(BatchRow(p.in0, r.rows, t), BatchRow(p.in1, r.rows, t), p.gain,
                         p.scalar, BatchRow(p.out, r.rows, t), p.n, p.group_size, p.eps);
  });
}

void Session::RunRope(const Prepared& p, const Rows& r) {
  RopeTable& table = *p.rope;
  if (r.positions != nullptr) {
    // Rows at positions of their own (EvalAcross): computed once per evaluation.
    if (table.batch_position != kPerRowPositions || table.evaluation != evaluations_ ||
        table.batch_count != r.rows) {
      for (size_t t = 0; t < r.rows; ++t) {
        ops::RopeCosSin(r.positions[t], table.theta, table.head_dim, table.pairs,
                        table.batch_cos.get() + t * table.pairs,
                        table.batch_sin.get() + t * table.pairs);
      }
      table.batch_position = kPerRowPositions;
      table.evaluation = evaluations_;
      table.batch_count = r.rows;
    }
  } else if (table.batch_position != r.position || table.batch_count != r.rows) {
    for (size_t t = 0; t < r.rows; ++t) {
      ops::RopeCosSin(r.position + static_cast<int64_t>(t), table.theta, table.head_dim,
                      table.pairs, table.batch_cos.get() + t * table.pairs,
                      table.batch_sin.get() + t * table.pairs);
    }
    table.batch_position = r.position;
    table.batch_count = r.rows;
  }
  ForRows(p, r, [&](size_t t) {
    const float* in = BatchRow(p.in0, r.rows, t);
    float* out = BatchRow(p.out, r.rows, t);
    if (out != in) std::memcpy(out, in, p.n * sizeof(float));
    ops::ApplyRope(out, p.n / p.head_dim, p.head_dim, p.rotated_pairs,
                   table.batch_cos.get() + t * table.pairs,
                   table.batch_sin.get() + t * table.pairs);
  });
}

void Session::RunKvAppend(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    p.CacheOf(r, t)->Append(r.PositionOf(t), BatchRow(p.in0, r.rows, t),
                            BatchRow(p.in1, r.rows, t));
  });
}

void Session::RunAttention(const Prepared& p, const Rows& r) {
  const size_t scratch_floats = attention_scratch_floats_;
  const auto heads = [&](size_t t, size_t h0, size_t h1, int thread) {
    const int64_t at = r.PositionOf(t);
    const KvCache& cache = *p.CacheOf(r, t);
    const size_t ring = static_cast<size_t>(cache.rows());
    const size_t first = static_cast<size_t>(cache.FirstVisibleRow(at));
    const size_t visible = static_cast<size_t>(cache.VisibleRows(at));
    float* scratch = scratch_.get() + static_cast<size_t>(thread) * scratch_floats;
    if (cache.type() == KvType::kF16) {
      ops::AttentionRingHeadsF16(
          BatchRow(p.in0, r.rows, t), reinterpret_cast<const uint16_t*>(cache.key_bytes()),
          reinterpret_cast<const uint16_t*>(cache.value_bytes()), ring, first, visible,
          p.num_heads, p.num_kv_heads, p.head_dim, p.scale, h0, h1, scratch,
          BatchRow(p.out, r.rows, t));
      return;
    }
    ops::AttentionRingHeads(BatchRow(p.in0, r.rows, t), cache.keys(), cache.values(),
                            ring, first, visible, p.num_heads, p.num_kv_heads, p.head_dim,
                            p.scale, h0, h1, scratch, BatchRow(p.out, r.rows, t));
  };
  if (r.count == 1) {
    // One query (decode, or the logits row of a prompt): its heads split over the pool when the
    // window is long enough to pay for waking it (each head is computed the same way whatever
    // range it is in: ops/attention.h).
    const size_t t = r.first;
    const size_t visible = static_cast<size_t>(p.CacheOf(r, t)->VisibleRows(r.PositionOf(t)));
    if (pool_ == nullptr || p.num_heads < 2 ||
        visible * p.num_heads * p.head_dim < (size_t{1} << 16)) {
      heads(t, 0, p.num_heads, 0);
      return;
    }
    const int threads = pool_->num_threads();
    const size_t blocks = ops::AttentionRowBlockCount(visible);
    if (blocks >= static_cast<size_t>(threads) && shared_partials_ != nullptr &&
        visible <= static_cast<size_t>(ctx_size_)) {
      // A window of at least a softmax block per thread: the threads share the rows, in two
      // phases (ops/attention.h: each thread every head's partial results over its softmax
      // blocks, whole key and value rows read once; then each head's merge), which give the bits
      // of the one-thread computation whatever the split. Splitting the heads instead would have
      // several threads stream the same keys and values when there are fewer KV heads than
      // threads (E2B: one KV head for 8 query heads), and with one KV head per thread (E4B: 2)
      // each thread read half of every row, 1 KiB of each 2 KiB: 5.1 ms per thread against 4.0
      // for the shared rows (cortiq-attention-benchmark BM_HeadsShare / BM_BlocksShare
      // /16384/2/1/8/threads:2, Zen 4 VM).
      const KvCache& cache = *p.CacheOf(r, t);
      const int64_t at = r.PositionOf(t);
      const size_t ring = static_cast<size_t>(cache.rows());
      const size_t first = static_cast<size_t>(cache.FirstVisibleRow(at));
      const float* q = BatchRow(p.in0, r.rows, t);
      float* out = BatchRow(p.out, r.rows, t);
      float* partials = shared_partials_.get();
      const bool f16 = cache.type() == KvType::kF16;
      ParallelFor(blocks, [&](size_t b0, size_t b1, int thread) {
        float* scores = scratch_.get() + static_cast<size_t>(thread) * scratch_floats;
        if (f16) {
          ops::AttentionBlocksF16(q, reinterpret_cast<const uint16_t*>(cache.key_bytes()),
                                  reinterpret_cast<const uint16_t*>(cache.value_bytes()), ring,
                                  first, visible, p.num_heads, p.num_kv_heads, p.head_dim,
                                  p.scale, 0, p.num_heads, b0, b1, scores, partials);
        } else {
          ops::AttentionBlocks(q, cache.keys(), cache.values(), ring, first, visible,
                               p.num_heads, p.num_kv_heads, p.head_dim, p.scale, 0, p.num_heads,
                               b0, b1, scores, partials);
        }
      });
      ParallelFor(p.num_heads, [&](size_t h0, size_t h1, int) {
        ops::AttentionMergeBlocks(partials, visible, p.num_heads, p.head_dim, h0, h1, out);
      });
      return;
    }
    // Whole blocks of heads per thread where the heads allow it.
    const size_t block = p.num_heads % ops::kAttentionHeadBlock == 0
                             ? ops::kAttentionHeadBlock
                             : 1;
    ParallelFor(p.num_heads / block, [&](size_t b0, size_t b1, int thread) {
      heads(t, b0 * block, b1 * block, thread);
    });
    return;
  }
  // A batch: query row t sees up to position + t + 1 rows (causal), so the later rows cost more;
  // contiguous thirds or halves of the batch would give the last thread most of the work (3/4 of
  // it with 2 threads and a window longer than the batch). The rows are dealt in the order first,
  // last, second, second to last, ..., so each thread's contiguous share mixes cheap and costly
  // rows. Each row is computed the same way whichever thread runs it.
  ParallelFor(r.count, [&](size_t b0, size_t b1, int thread) {
    for (size_t i = b0; i < b1; ++i) {
      heads(r.first + BalancedRow(i, r.count), 0, p.num_heads, thread);
    }
  });
}

void Session::RunGeluTanh(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::GeluTanh(BatchRow(p.in0, r.rows, t), BatchRow(p.out, r.rows, t), p.n);
  });
}

void Session::RunGeluTanhMul(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::GeluTanhMul(BatchRow(p.in0, r.rows, t), BatchRow(p.in1, r.rows, t),
                     BatchRow(p.out, r.rows, t), p.n);
  });
}

void Session::RunMul(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::Mul(BatchRow(p.in0, r.rows, t), BatchRow(p.in1, r.rows, t), BatchRow(p.out, r.rows, t),
             p.n);
  });
}

void Session::RunAdd(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::Add(BatchRow(p.in0, r.rows, t), BatchRow(p.in1, r.rows, t), BatchRow(p.out, r.rows, t),
             p.n);
  });
}

void Session::RunScale(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::Scale(BatchRow(p.in0, r.rows, t), p.factor, BatchRow(p.out, r.rows, t), p.n);
  });
}

void Session::RunLayerScalar(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::Scale(BatchRow(p.in0, r.rows, t), p.scalar, BatchRow(p.out, r.rows, t), p.n);
  });
}

void Session::RunSoftcap(const Prepared& p, const Rows& r) {
  ForRows(p, r, [&](size_t t) {
    ops::Softcap(BatchRow(p.in0, r.rows, t), p.cap, BatchRow(p.out, r.rows, t), p.n);
  });
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
    if (p.logits_rows && (p.logits_only || !every_tap_)) {
      if (logits == BatchLogits::kNone) continue;
      if (logits == BatchLogits::kLast) {
        RunStep(i, Rows{tokens.data(), rows, rows - 1, 1, position});
        continue;
      }
    }
    RunStep(i, Rows{tokens.data(), rows, 0, rows, position});
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

namespace cortiq {

absl::Status Session::EvalAcross(absl::Span<Session* const> sessions,
                                 absl::Span<const int32_t> tokens) {
  if (sessions.empty()) return absl::InvalidArgumentError("EvalAcross: no sessions");
  if (tokens.size() != sessions.size()) {
    return absl::InvalidArgumentError(absl::StrCat("EvalAcross: ", tokens.size(),
                                                   " tokens for ", sessions.size(),
                                                   " sessions (one token each)"));
  }
  Session* executor = sessions[0];
  if (executor == nullptr) return absl::InvalidArgumentError("EvalAcross: sessions[0] is null");
  const size_t rows = sessions.size();
  if (rows > static_cast<size_t>(executor->batch_size_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("EvalAcross: ", rows, " sessions exceed the batch size ",
                     executor->batch_size_, " of sessions[0]"));
  }
  for (size_t i = 0; i < rows; ++i) {
    const Session* s = sessions[i];
    if (s == nullptr) return absl::InvalidArgumentError(absl::StrCat("sessions[", i, "] is null"));
    for (size_t j = 0; j < i; ++j) {
      if (sessions[j] == s) {
        return absl::InvalidArgumentError(
            absl::StrCat("sessions[", i, "] is sessions[", j, "] (each session once)"));
      }
    }
    // The plan's steps of sessions[0] run for every row: the others must hold the same caches.
    if (s->plan_ != executor->plan_ && (s->weights_ != executor->weights_ ||
                                        s->plan_->steps.size() != executor->plan_->steps.size() ||
                                        s->plan_->caches.size() != executor->plan_->caches.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("sessions[", i, "] runs another plan than sessions[0]"));
    }
    if (s->ctx_size_ > executor->ctx_size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("sessions[", i, "] has a context of ", s->ctx_size_,
                       " positions, more than sessions[0]'s ", executor->ctx_size_));
    }
  }
  for (size_t i = 0; i < rows; ++i) {
    if (absl::Status status = sessions[i]->CheckTokens(tokens.subspan(i, 1)); !status.ok()) {
      return absl::Status(status.code(), absl::StrCat("sessions[", i, "]: ", status.message()));
    }
  }
  if (rows == 1) return executor->EvalToken(tokens[0], true);

  int64_t* positions = executor->across_positions_.data();  // [batch_size], from Prepare
  for (size_t i = 0; i < rows; ++i) positions[i] = sessions[i]->length_;
  ++executor->evaluations_;
  executor->last_rows_ = rows;
  for (size_t i = 0; i < executor->steps_.size(); ++i) {
    // Every row wants its logits: the steps of rows = logits run on all of them too.
    executor->RunStep(i, Rows{tokens.data(), rows, 0, rows, 0, sessions.data(), positions});
  }
  // Each row's logits into its session's own arena (the one-row layout of logits()); the
  // executor's last, since its one-row logits may overlap the batch rows of the others.
  const int32_t logits_buffer = executor->plan_->logits_buffer;
  const size_t vocab = static_cast<size_t>(executor->plan_->buffers[logits_buffer].num_elements);
  size_t failed = rows;
  for (size_t k = 1; k <= rows; ++k) {
    const size_t i = k % rows;  // 1, 2, ..., rows - 1, then 0
    const absl::Span<const float> row = executor->batch_logits(i);
    Session* s = sessions[i];
    if (!AllFinite(row)) {
      if (failed == rows || i < failed) failed = i;
      continue;
    }
    std::memmove(s->BatchRow(logits_buffer, 1, 0), row.data(), vocab * sizeof(float));
    s->last_rows_ = 1;
    ++s->length_;
  }
  executor->last_rows_ = 1;
  if (failed != rows) {
    return absl::DataLossError(absl::StrCat("sessions[", failed, "]: non-finite logits at position ",
                                            positions[failed],
                                            " (NaN/Inf in the weights, or an overflow)"));
  }
  return absl::OkStatus();
}

}  // namespace cortiq
