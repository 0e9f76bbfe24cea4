// The flat per-token plan that the compiler lowers the `cortiq` IR to and the runtime executes:
// weights, activation buffers in one arena, KV caches, and an ordered list of steps.
// This header is the contract between compiler/lower (writer) and runtime/ (reader); it holds
// no MLIR.
#ifndef CORTIQ_RUNTIME_PLAN_H_
#define CORTIQ_RUNTIME_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cortiq {

// Storage format of a weight in the artifact. Values are part of the file format.
enum class WeightFormat : uint32_t {
  kF32 = 0,   // little-endian IEEE binary32
  kBF16 = 1,  // bfloat16 (top half of an f32)
  // llama.cpp's block formats (ggml-common.h), so GGUF tensors are used in place. A row of
  // `cols` weights (cols % 32 == 0) is cols / 32 consecutive blocks; only matrices read by
  // linear, lm_head and embedding steps may use them.
  kQ8_0 = 2,  // block_q8_0: f16 scale d + 32 int8 q (34 bytes); w = d * q
  kQ4_0 = 3,  // block_q4_0: f16 scale d + 16 bytes of nibbles (18 bytes); w = d * (q - 8),
              // element j < 16 the low nibble of byte j, element j + 16 its high nibble
};

// True for kQ8_0 and kQ4_0.
bool IsBlockFormat(WeightFormat format);

// Bytes of a weight of `shape` stored as `format`: product(shape) × element size for f32/bf16;
// for the block formats (rank ≥ 1, last dimension a multiple of 32) the number of 32-weight
// blocks × 34 (Q8_0) or 18 (Q4_0). Returns 0 for an unknown format, a non-positive dimension,
// a block format whose last dimension is not a multiple of 32, or a size past 2^62.
uint64_t WeightFormatBytes(WeightFormat format, const std::vector<int64_t>& shape);

// Bytes per element of `format` (f32 4, bf16 2); 0 for the block formats, whose sizes come
// from WeightFormatBytes.
size_t WeightFormatElementSize(WeightFormat format);
// "f32" / "bf16" / "q8_0" / "q4_0".
const char* WeightFormatName(WeightFormat format);
// The format WeightFormatName gives `name`, nullopt for any other string.
std::optional<WeightFormat> WeightFormatFromName(absl::string_view name);

// A weight tensor stored in the artifact's weight section.
struct WeightEntry {
  std::string name;            // checkpoint tensor name
  WeightFormat format = WeightFormat::kF32;
  std::vector<int64_t> shape;  // HF order: [out, in] for linears, [rows, cols] for tables
  uint64_t offset = 0;         // bytes from the start of the weight section; multiple of 64
  uint64_t size_bytes = 0;     // product(shape) * element size

  int64_t num_elements() const;
};

// An f32 activation buffer: `num_elements` floats at byte `offset` of the arena. Buffers may
// alias (a slice is a view into its parent's bytes).
struct BufferEntry {
  uint64_t offset = 0;        // bytes from the arena start; multiple of 4
  uint64_t num_elements = 0;  // f32 elements
  int32_t view_of = -1;       // a slice view inside this buffer's bytes (a root buffer, one
                              // that is not a view itself), or -1 for a root buffer
};

// The KV cache of one KV-owning layer. Storage per cache: keys and values, each
// [rows, num_kv_heads * head_dim] f32, with rows = window (a ring) for sliding caches and the
// session's context size for full caches. KV-shared layers own no cache.
struct CacheEntry {
  int64_t layer = 0;       // the layer that appends to it
  bool sliding = false;    // sliding_attention (ring of `window` positions) or full_attention
  int64_t window = 0;      // sliding_window for sliding caches, 0 for full ones
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
};

// Kernel kinds. Values are part of the file format. For each kind: operands (in0, in1), result
// (out), weight, cache and parameters (i0, i1 integers; f0, f1 doubles). "position" is the
// absolute position of the token being evaluated; "token" its id.
enum class StepKind : uint32_t {
  kEmbedding = 1,    // out[c] = weight[token, c] * f0                (weight [rows, cols])
                     //   (a token >= rows reads row 0, HF's per-layer-input rule)
  kLinear = 2,       // out[r] = sum_c weight[r, c] * in0[c]           (weight [out, in])
  kRmsNorm = 3,      // out = RMS norm of in0 in groups of i0, eps f0, gain = weight [i0] or none (-1)
  kRope = 4,         // out = RoPE(in0) at position: head_dim i0, rotated pairs i1, theta f0
  kKvAppend = 5,     // cache[position] = (in0 = key, in1 = value)
  kAttention = 6,    // out = attention(in0 over cache): num_heads i0, window i1 (0 = full), scale f0
  kGeluTanh = 7,     // out = gelu_tanh(in0)
  kMul = 8,          // out = in0 * in1
  kAdd = 9,          // out = in0 + in1
  kScale = 10,       // out = in0 * f0
  kLayerScalar = 11, // out = in0 * weight[0]  (weight of one element)
  kSoftcap = 12,     // out = f0 * tanh(in0 / f0)
  kLmHead = 13,      // out[v] = sum_c weight[v, c] * in0[c]   (runs only when logits are wanted)
  // Fused steps (emitted by the fuse-elementwise pass):
  kGeluTanhMul = 14,  // out = gelu_tanh(in0) * in1   (MLP gate·up, PLE gate·per-layer input)
  kResidualRmsNorm = 15,  // out = (in0 + RMS norm of in1 in groups of i0, eps f0, gain = weight
                          //        or none) * (weight2[0] if weight2 >= 0 else 1)
                          // (sandwich norm + residual add [+ layer_scalar], spec §3.3 steps 5-8)
};

// Name of a step kind ("linear", "rms_norm", ...), for errors and dumps.
const char* StepKindName(StepKind kind);

struct Step {
  StepKind kind = StepKind::kLinear;
  int32_t out = -1;            // result buffer, -1 for kKvAppend
  int32_t in0 = -1, in1 = -1;  // operand buffers
  int32_t weight = -1;         // weight index or -1
  int32_t weight2 = -1;        // second weight (kResidualRmsNorm's scalar) or -1
  int32_t cache = -1;          // cache index or -1
  int64_t i0 = 0, i1 = 0;
  double f0 = 0.0, f1 = 0.0;
  bool logits_only = false;    // part of the head: skipped when the position's logits are unused
};

// A named buffer to observe after a token is evaluated, e.g. "layer.3" = the hidden state
// after decoder layer 3 (cortiq-run --dump-layers).
struct Tap {
  std::string name;
  int32_t buffer = -1;
};

// Facts about the model the runtime and tools need.
struct ModelInfo {
  std::string source;                  // checkpoint the plan was compiled from
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t max_position_embeddings = 0; // the longest context the model supports
};

// Largest activation arena a plan may ask for: 2^40 bytes (1 TiB), orders of magnitude above any
// decoder's (Gemma-4 E4B needs a few MiB), so ValidatePlan can reject hostile sizes such as
// 2^64 - 1, and every size derived from it (floats, offset + size, rounding up) stays far from
// overflowing 64 bits.
inline constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;

// Largest batch a plan may be compiled for (prefill runs longer prompts in chunks).
inline constexpr int64_t kMaxBatch = 4096;

// The batched (prefill) form of a plan. The same steps run over a batch of T tokens at
// positions p0 .. p0 + T - 1 (1 <= T <= max_batch), every activation buffer holding T rows:
// - a root buffer b (view_of = -1) at byte offset T * b.offset of the batch arena, row t at
//   floats t * b.num_elements after it (T rows, packed);
// - a view v of root r at (batch offset of r) + (v.offset - r.offset), row t at floats
//   t * r.num_elements after it (the view's columns inside each of r's rows);
// - the batch arena holds T * arena_bytes bytes.
// Because a view keeps its whole root alive (passes/buffer_allocator.h), buffers that are
// disjoint while live in the per-token arena are disjoint in the batch arena too; ValidatePlan
// checks the rules on roots so that this holds for any plan it accepts.
// Each step applies its per-token formula to every row t with position p0 + t (embedding:
// token t; rope: position p0 + t; kv_append: cache[p0 + t] = row t; attention: row t attends to
// the positions visible from p0 + t, all of the batch's rows having been appended first). The
// logits_only steps run on the last row only, or on every row when every position's logits
// are wanted.

// A complete per-token plan.
struct Plan {
  ModelInfo model;
  std::vector<WeightEntry> weights;
  std::vector<BufferEntry> buffers;
  std::vector<CacheEntry> caches;
  std::vector<Step> steps;
  std::vector<Tap> taps;
  int32_t logits_buffer = -1;  // [vocab_size] f32 after a token whose logits were wanted
  uint64_t arena_bytes = 0;    // size of the activation arena, <= kMaxArenaBytes
  // Largest batch of the batched form (above), in [1, kMaxBatch], with
  // max_batch * arena_bytes <= kMaxArenaBytes; 1 = token by token only (artifacts v1.0).
  int64_t max_batch = 1;
};

// Checks every index, size and shape of `plan` so the executor can run it without further
// checks: arena_bytes <= kMaxArenaBytes (and <= SIZE_MAX), buffers inside the arena,
// operands/weights/caches in range, each step's operand,
// result and weight shapes consistent with its kind (e.g. a linear's weight is [out, in]),
// caches with positive head counts, weights inside a section of `weight_section_bytes`.
// Also required (runtime/plan.cc): operand fields a kind does not use are -1 (weight2 is used
// only by residual_rms_norm: -1 or a weight of one element); the result of a linear, lm_head
// or attention step is disjoint from its operand, and other results either are exactly their
// operands' bytes (in place) or are disjoint from them; every cache is
// written by a kv_append step (never logits_only) before the first attention step reading
// it; tap names are unique, 1-255 of [A-Za-z0-9._-] not starting with '.' (they become file
// names); logits_buffer has vocab_size elements; vocab_size <= INT32_MAX.
// Errors: InvalidArgument naming the step (index and kind) or entry at fault.
absl::Status ValidatePlan(const Plan& plan, uint64_t weight_section_bytes);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_PLAN_H_
