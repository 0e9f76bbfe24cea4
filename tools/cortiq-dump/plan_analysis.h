// What cortiq-dump derives from a validated Plan without running it: the decoder layer of each
// step, per-step weight bytes and FLOPs, buffer liveness and arena reuse, the KV caches and
// which layers share them, and per-token totals. Runtime-only (no MLIR/LLVM).
#ifndef CORTIQ_TOOLS_CORTIQ_DUMP_PLAN_ANALYSIS_H_
#define CORTIQ_TOOLS_CORTIQ_DUMP_PLAN_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/plan.h"

namespace cortiq {
namespace dump {

// Layer ids of steps that belong to no decoder layer.
inline constexpr int64_t kPrologue = -1;  // token / per-layer-input embeddings before layer 0
inline constexpr int64_t kHead = -2;      // after the last layer: final norm, LM head, softcap

// The kind's name in the step-kind table ("embedding", "linear", ...); "kind<N>" for a value
// that is no kind.
std::string KindName(StepKind kind);
// "pre", "head" or the decimal layer number.
std::string LayerName(int64_t layer);

// Number of keys an attention step attends to at absolute `position` (0-based): min(position +
// 1, window) for a sliding cache (window > 0), position + 1 for a full one.
int64_t AttendedPositions(int64_t position, int64_t window);

struct StepInfo {
  int64_t layer = kPrologue;      // decoder layer, kPrologue or kHead
  std::vector<int64_t> shape;     // logical shape of the result (for kv_append: of the key row)
  uint64_t weight_bytes = 0;      // bytes of weights the step reads once per token
  uint64_t flops = 0;             // floating-point operations at the analysed position
  std::string flops_formula;      // how `flops` is computed, e.g. "2*128*64"
  uint64_t kv_bytes_read = 0;     // attention: K and V bytes read at the analysed position
  uint64_t kv_bytes_written = 0;  // kv_append: one K and one V row
  // Steps whose results this step reads (in0 then in1; the last earlier step that wrote bytes
  // overlapping the operand), -1 where an operand has no earlier writer.
  int32_t producer0 = -1, producer1 = -1;
};

// Live range of an activation buffer's bytes, in step indices (inclusive).
struct LiveRange {
  int32_t buffer = -1;
  int32_t first = 0;  // the step that wrote the bytes (0 if read before any write)
  int32_t last = 0;   // the last step reading them (the final step for pinned outputs)
};

struct BufferInfo {
  std::vector<int32_t> writers;  // steps with out == this buffer
  std::vector<int32_t> readers;  // steps with in0 or in1 == this buffer
  bool view = false;             // no step writes it, but its bytes are written through an
                                 // overlapping result (a slice of its parent)
  bool unused = false;           // no step writes it and it overlaps no result
  bool pinned = false;           // logits or a tap: read after the plan, live to its end
  bool shares_bytes = false;     // overlaps the bytes of another buffer
};

struct CacheInfo {
  int32_t append_step = -1;              // the kv_append writing it
  std::vector<int32_t> attention_steps;  // attention steps reading it
  std::vector<int64_t> reader_layers;    // their layers, in step order, unique
  uint64_t rows = 0;                     // window (sliding) or ctx_size (full)
  uint64_t bytes = 0;                    // K + V f32 storage: 2 * rows * heads * dim * 4
};

// One decoder layer as mapped onto the steps.
struct LayerInfo {
  int64_t layer = 0;
  int32_t first_step = -1, last_step = -1;  // inclusive; -1 if the layer has no step
  int32_t attention_step = -1;              // its (first) attention step
  int32_t cache = -1;                       // the cache its attention reads
  int64_t cache_layer = -1;                 // the layer owning that cache
  bool sliding = false;
  int64_t window = 0;
  bool kv_shared = false;  // cache_layer != layer: appends nothing itself
  int32_t own_cache = -1;  // the cache its kv_append writes, or -1
};

struct Totals {
  uint64_t steps = 0, steps_without_logits = 0;
  // The steps of rows = all (runtime/plan.h): what every prompt row runs, the others running on
  // the logits rows only.
  uint64_t steps_all_rows = 0, weight_bytes_all_rows = 0, flops_all_rows = 0;
  // Weight bytes read per token: matvec = linear + lm_head weights, embedding = one table row
  // per embedding step, other = norm gains and scalars.
  uint64_t weight_bytes_matvec = 0, weight_bytes_embedding = 0, weight_bytes_other = 0;
  uint64_t weight_bytes = 0, weight_bytes_without_logits = 0;
  uint64_t flops_matvec = 0, flops_attention = 0, flops_other = 0;
  uint64_t flops = 0, flops_without_logits = 0;
  uint64_t kv_bytes_read = 0, kv_bytes_written = 0;
  uint64_t kv_cache_bytes = 0;  // storage of all caches at ctx_size
};

struct BufferStats {
  uint64_t arena_bytes = 0;
  size_t buffers = 0, results = 0, views = 0, unused = 0;
  size_t sharing = 0;         // buffers that overlap another buffer's bytes (views included)
  size_t reused_results = 0;  // results that overlap another result (in place / reuse)
  size_t distinct_offsets = 0;
  uint64_t result_bytes = 0;     // sum of 4 * num_elements over the step results
  uint64_t peak_live_bytes = 0;  // largest union of live byte ranges at one step
  int32_t peak_step = -1;
};

struct Analysis {
  int64_t ctx_size = 0;  // rows of the full caches
  int64_t position = 0;  // analysed position: ctx_size - 1
  // How steps were mapped to layers ("taps" or "weight names"), for the reader.
  std::string layer_mapping;
  std::vector<StepInfo> steps;
  std::vector<BufferInfo> buffers;
  std::vector<LiveRange> live;
  std::vector<CacheInfo> caches;
  std::vector<LayerInfo> layers;  // one per decoder layer that has steps, ascending
  std::vector<std::vector<int32_t>> weight_users;  // steps reading each weight
  BufferStats buffer_stats;
  Totals totals;
};

// Analyses a plan that passed ValidatePlan, for a context of `ctx_size` positions (>= 1):
// full caches hold ctx_size rows, and attention costs are those of the last position,
// ctx_size - 1.
//
// Layers: the layer.N taps name the buffer holding the hidden state after layer N; the last
// step writing it ends layer N, so layer N is the steps after the end of layer N-1 through its
// own end. The first layer's range also holds the prologue (embeddings, per-layer inputs): the
// layer starts at its first step that has an operand and feeds (through the dataflow) its first
// kv_append or attention, i.e. its input norm. Steps after the last tap are the head. Without
// usable taps (absent, or ends out of order) a step takes the layer of the `layers.N.` weight it
// reads, or of the step before it, and logits_only steps form the head.
//
// FLOP model (per token; n = result elements, rows x cols = weight shape), by each kind's cost
// class and flops_per_element in the step-kind table (runtime/step_kind.h):
//   linear, lm_head  2*rows*cols           embedding        n (the scale)
//   rms_norm         4n (3n without gain)  rope             6 per rotated pair:
//                                                           6*(n/head_dim)*rotated_pairs
//   attention        H*L*(4*D+4): q.k (2D) + scale + softmax (3) + p.v (2D) per head and key,
//                    L = AttendedPositions(position, window)
//   gelu_tanh        8n                    mul, add, scale, layer_scalar   n
//   softcap          3n                    gelu_tanh_mul    9n
//   residual_rms_norm  rms_norm + n (+ n with the scalar)  kv_append  0 (copies)
Analysis Analyze(const Plan& plan, int64_t ctx_size);

}  // namespace dump
}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_DUMP_PLAN_ANALYSIS_H_
