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
#include "runtime/step_kind.h"

namespace cortiq {

// Storage format of a weight in the artifact. Values are part of the file format (3.2 added
// kF16 and the formats after it).
enum class WeightFormat : uint32_t {
  kF32 = 0,   // little-endian IEEE binary32
  kBF16 = 1,  // bfloat16 (top half of an f32)
  // llama.cpp's block formats (ggml-common.h), so GGUF tensors are used in place. A row of
  // `cols` weights (a multiple of the block size, 32 or 256) is cols / block size consecutive
  // blocks; only matrices read by linear, lm_head and embedding steps may use them. Layouts and
  // dequantization: ops/quantize.h, quantize_legacy.h, quantize_k.h, quantize_iq4.h.
  kQ8_0 = 2,  // block_q8_0: f16 scale d + 32 int8 q (34 bytes); w = d * q
  kQ4_0 = 3,  // block_q4_0: f16 scale d + 16 bytes of nibbles (18 bytes); w = d * (q - 8),
              // element j < 16 the low nibble of byte j, element j + 16 its high nibble
  kF16 = 4,   // IEEE binary16 (GGML_TYPE_F16), an element format like bf16
  kQ4_1 = 5,  // block_q4_1: 32 weights, f16 d and m + 16 nibble bytes (20); w = d q + m
  kQ5_0 = 6,  // block_q5_0: 32 weights, f16 d, 4 bytes of fifth bits, 16 nibble bytes (22)
  kQ5_1 = 7,  // block_q5_1: 32 weights, f16 d and m, fifth bits, nibbles (24)
  kQ2_K = 8,  // block_q2_K: 256 weights in 16 sub-blocks of 16, 4-bit scales and mins (84)
  kQ3_K = 9,  // block_q3_K: 256 weights, 3-bit quants, 6-bit sub-block scales (110)
  kQ4_K = 10,  // block_q4_K: 256 weights in 8 sub-blocks of 32, 6-bit scales and mins (144)
  kQ5_K = 11,  // block_q5_K: as Q4_K with a fifth bit per weight (176)
  kQ6_K = 12,  // block_q6_K: 256 weights, 6-bit quants, 16 int8 sub-block scales (210)
  kIQ4_NL = 13,  // block_iq4_nl: 32 weights, f16 d + 16 nibble bytes indexing a 16-level table (18)
  kIQ4_XS = 14,  // block_iq4_xs: 256 weights, 6-bit sub-block scales, table levels (136)
  // cortiq's own layout, not a GGUF type: 16 consecutive Q4_0 blocks of a row regrouped so a
  // 64-byte load holds 4 quant bytes of each (512 weights, 288 bytes; ops/quantize_q4_0x16.h).
  // The same weights as the Q4_0 blocks, for a faster matrix-vector product.
  kQ4_0x16 = 15,
  // The same for Q8_0: 16 Q8_0 blocks regrouped, 512 weights in 544 bytes
  // (ops/quantize_q8_0x16.h).
  kQ8_0x16 = 16,
  // The same for Q4_K: 2 super-blocks of a row, one 32-weight sub-block per 32-bit lane, the
  // 6-bit scales and mins unpacked to bytes (512 weights, 296 bytes; ops/quantize_q4_kx16.h).
  kQ4_Kx16 = 17,
  // The same for Q5_K, each quant's fifth bit in 64-bit masks (512 weights, 360 bytes;
  // ops/quantize_q5_kx16.h).
  kQ5_Kx16 = 18,
};

// Every WeightFormat, in value order.
inline constexpr WeightFormat kAllWeightFormats[] = {
    WeightFormat::kF32,  WeightFormat::kBF16, WeightFormat::kQ8_0,  WeightFormat::kQ4_0,
    WeightFormat::kF16,  WeightFormat::kQ4_1, WeightFormat::kQ5_0,  WeightFormat::kQ5_1,
    WeightFormat::kQ2_K, WeightFormat::kQ3_K, WeightFormat::kQ4_K,  WeightFormat::kQ5_K,
    WeightFormat::kQ6_K, WeightFormat::kIQ4_NL, WeightFormat::kIQ4_XS, WeightFormat::kQ4_0x16,
    WeightFormat::kQ8_0x16, WeightFormat::kQ4_Kx16, WeightFormat::kQ5_Kx16,
};

// True for llama.cpp's block formats (every format but f32, bf16 and f16).
bool IsBlockFormat(WeightFormat format);

// Weights per block: 1 for f32 / bf16 / f16, 32 for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, 256
// for the K-quants and IQ4_XS (QK_K), 512 for Q4_0x16, Q8_0x16, Q4_Kx16 and Q5_Kx16; 0 for a value outside the enum.
size_t WeightFormatBlockElements(WeightFormat format);
// Bytes per block (per element for f32 / bf16 / f16), ggml's type_size; 0 outside the enum.
size_t WeightFormatBlockBytes(WeightFormat format);

// Bytes of a weight of `shape` stored as `format`: product(shape) / block elements × block
// bytes (for the block formats rank ≥ 1 and the last dimension a multiple of the block size).
// Returns 0 for an unknown format, a non-positive dimension, a block format whose last
// dimension is not whole blocks, or a size past 2^62.
uint64_t WeightFormatBytes(WeightFormat format, const std::vector<int64_t>& shape);

// Bytes per element of `format` (f32 4, bf16 and f16 2); 0 for the block formats, whose sizes
// come from WeightFormatBytes.
size_t WeightFormatElementSize(WeightFormat format);
// The format's name: "f32", "bf16", "f16", and llama.cpp's type names in lower case ("q8_0",
// "q4_k", "iq4_xs"); "unknown" outside the enum.
const char* WeightFormatName(WeightFormat format);
// The format WeightFormatName gives `name`, nullopt for any other string.
std::optional<WeightFormat> WeightFormatFromName(absl::string_view name);

// A weight tensor stored in the artifact's weight section.
struct WeightEntry {
  std::string name;            // checkpoint tensor name
  WeightFormat format = WeightFormat::kF32;
  std::vector<int64_t> shape;  // HF order: [out, in] for linears, [rows, cols] for tables
  uint64_t offset = 0;         // bytes from the start of the weight section; a multiple of
                               // kWeightAlignment
  uint64_t size_bytes = 0;     // WeightFormatBytes(format, shape): product(shape) * element
                               // size, or the blocks * block bytes (block formats)
  // Format 3.1: the XXH3-64 of each Plan::weight_hash_chunk_bytes chunk of the weight's bytes,
  // in order (runtime/weight_hash.h); empty when the plan has no hashes (chunk bytes 0).
  std::vector<uint64_t> xxh3_64;

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

// The rows of an evaluation a step runs on (the `cortiq.rows` the mark-rows pass sets on its op,
// passes/Passes.td). Values are part of the file format (artifact format 3.1).
enum class StepRows : uint32_t {
  kAll = 0,     // every row: its result reaches a KV-cache append
  kLogits = 1,  // the logits rows only: the rows whose logits are wanted (the last row of a
                // prompt, every row when all logits are wanted), none when no logits are
                // wanted; its results feed only logits and taps
};
// "all" / "logits"; "unknown" for another value.
const char* StepRowsName(StepRows rows);

// One kernel call of the plan. Which operands and parameters a kind uses, and what they mean,
// is its entry in the step-kind table (runtime/step_kind.h); every field a kind does not use is
// -1 (operands) or 0 (parameters), which ValidatePlan checks. The parameter names are the
// `cortiq` dialect's attribute names (compiler/dialect/CortiqOps.td).
struct Step {
  StepKind kind = StepKind::kLinear;
  // Operands.
  int32_t out = -1;            // result buffer (-1 for kv_append)
  int32_t in0 = -1, in1 = -1;  // operand buffers, in the kind's order (e.g. residual, update)
  int32_t weight = -1;         // the kind's weight: table, matrix, gain or scalar
  int32_t scalar = -1;         // residual_rms_norm's optional scalar weight (one element)
  int32_t cache = -1;          // the KV cache read or written
  // Parameters.
  int64_t group_size = 0;      // RMS norms: elements normalized together
  double eps = 0.0;            // RMS norms: added to the mean square
  int64_t head_dim = 0;        // rope: elements per head
  int64_t rotated_pairs = 0;   // rope: leading pairs of each head that rotate (the rest pass)
  double theta = 0.0;          // rope: base of the frequencies
  int64_t num_heads = 0;       // attention: query heads
  int64_t window = 0;          // attention: sliding_window, 0 for full attention
  double scale = 0.0;          // embedding: row multiplier; attention: multiplier of q·k
  double factor = 0.0;         // scale: the multiplier
  double cap = 0.0;            // softcap: cap * tanh(x / cap)
  bool logits_only = false;    // part of the head: reaches neither a KV append nor a tap
                               // (always rows = kLogits)
  StepRows rows = StepRows::kAll;  // the rows it runs on (format 3.1; files before it: kLogits
                                   // for the logits_only steps, kAll for the others)
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

// Alignment of every weight in the weight section (WeightEntry::offset) and of the compiler's
// activation buffers in the arena: one cache line, which is also the widest Highway vector
// (AVX-512), so no weight row or buffer starts mid-line. The runtime needs only 4 (f32) of
// buffers; weights are checked against this by ValidatePlan.
inline constexpr uint64_t kWeightAlignment = 64;
inline constexpr uint64_t kBufferAlignment = 64;

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
// steps of rows = kLogits run on the last row only, on every row when every position's logits
// are wanted, and not at all when none are (then their buffers, taps included, keep whatever
// they held); the executor may also run them on every row (Session::set_every_tap).

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
  // Format 3.1: bytes per hashed chunk of each weight (WeightEntry::xxh3_64), a power of two in
  // [kMinWeightHashChunkBytes, kMaxWeightHashChunkBytes] (runtime/weight_hash.h); 0 = the weights
  // carry no hashes (files written before 3.1).
  uint64_t weight_hash_chunk_bytes = 0;
};

// Checks every index, size and shape of `plan` so the executor can run it without further
// checks: arena_bytes <= kMaxArenaBytes (and <= SIZE_MAX), buffers inside the arena, weights
// inside a section of `weight_section_bytes`, caches with positive head counts, and for each
// step, by its kind's entry in the step-kind table (runtime/step_kind.h): the operands it uses in
// range and the others -1, the parameters it does not carry 0, operand sizes, aliasing (results
// of kDisjoint kinds disjoint from their operands; the others exactly an operand's bytes, in
// place, or disjoint from it), block-format weights only where the kind reads them, and the
// kind's own shape and parameter rules (e.g. a linear's weight is [out, in]). Rows: a known
// StepRows value, kLogits for every logits_only step, never kLogits for a kind that may not be
// logits-only (kv_append); and for every step of rows = kAll and each buffer it reads, the last
// earlier step whose result overlaps that buffer's bytes (in the batched layout: columns of the
// same root, or overlapping roots) has rows = kAll too, so no all-rows step reads rows that
// were computed for the logits rows only (taps and logits_buffer may). Also: every cache
// is written by a kv_append step before the first attention step reading it; tap names are
// unique, 1-255 of [A-Za-z0-9._-] not starting with '.' (they become file names); logits_buffer
// has vocab_size elements; vocab_size <= INT32_MAX; weight hashes: none with
// weight_hash_chunk_bytes 0, else that a power of two in the allowed range and every weight
// holding WeightHashChunks(size_bytes, chunk bytes) of them (runtime/weight_hash.h).
// Errors: InvalidArgument naming the step (index and kind) or entry at fault.
absl::Status ValidatePlan(const Plan& plan, uint64_t weight_section_bytes);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_PLAN_H_
