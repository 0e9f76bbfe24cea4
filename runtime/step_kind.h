// The kinds of plan steps and the one table that describes each kind: its name, the roles of
// the operands it uses, its parameters, how its result may alias its operands, which weight
// formats it reads, its cost per token and its own shape rules. ValidatePlan (plan.cc), the
// Session (session.cc), the plan's field description (plan_fields.h) and cortiq-dump's cost
// model read it, so a new kind is its table entry (step_kind.cc), its lowering
// (compiler/lower/plan_lowering.cc) and its kernel binding (Session::Prepare, ops/).
#ifndef CORTIQ_RUNTIME_STEP_KIND_H_
#define CORTIQ_RUNTIME_STEP_KIND_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace cortiq {

struct Plan;
struct Step;
struct WeightEntry;
struct CacheEntry;

// Kernel kinds. Values are part of the file format. "position" is the absolute position of the
// token being evaluated, "token" its id; the formulas use the Step fields of that name.
enum class StepKind : uint32_t {
  kEmbedding = 1,    // out[c] = weight[token, c] * scale          (weight: table [rows, cols];
                     //   a token >= rows reads row 0, HF's per-layer-input rule)
  kLinear = 2,       // out[r] = sum_c weight[r, c] * in0[c]        (weight [out, in])
  kRmsNorm = 3,      // out = RMS norm of in0 in groups of group_size, eps, gain = weight [group_size]
                     //   or none (-1)
  kRope = 4,         // out = RoPE(in0) at position: head_dim, rotated_pairs, theta
  kKvAppend = 5,     // cache[position] = (in0 = key, in1 = value)
  kAttention = 6,    // out = attention(in0 = query over cache): num_heads, window (0 = full),
                     //   scale (of q·k)
  kGeluTanh = 7,     // out = gelu_tanh(in0)
  kMul = 8,          // out = in0 * in1
  kAdd = 9,          // out = in0 + in1
  kScale = 10,       // out = in0 * factor
  kLayerScalar = 11, // out = in0 * weight[0]  (weight of one element)
  kSoftcap = 12,     // out = cap * tanh(in0 / cap)
  kLmHead = 13,      // out[v] = sum_c weight[v, c] * in0[c]   (runs only when logits are wanted)
  // Fused steps (emitted by the fuse-elementwise pass):
  kGeluTanhMul = 14,      // out = gelu_tanh(in0 = gate) * (in1 = up)   (MLP, PLE gate)
  kResidualRmsNorm = 15,  // out = (in0 + RMS norm of in1 in groups of group_size, eps, gain =
                          //   weight or none) * (scalar[0] if scalar >= 0 else 1)
                          //   (sandwich norm + residual add [+ layer_scalar], spec §3.3 5-8)
};

// The fields of a Step (plan.h), in the order of the artifact's step record (plan_fields.h).
// Values index the bits of StepKindInfo::params and are not stored in files.
enum class StepField : uint32_t {
  kKind,
  kOut,
  kIn0,
  kIn1,
  kWeight,
  kScalar,
  kCache,
  kGroupSize,
  kEps,
  kHeadDim,
  kRotatedPairs,
  kTheta,
  kNumHeads,
  kWindow,
  kScale,
  kFactor,
  kCap,
  kLogitsOnly,
  kRows,
};

// Bit of `field` in a StepKindInfo::params set.
constexpr uint32_t FieldBit(StepField field) { return 1u << static_cast<uint32_t>(field); }

// How a kind's result may share bytes with its operands.
enum class StepAliasing : uint8_t {
  kInPlaceOrDisjoint,  // element-wise: exactly an operand's bytes (in place) or disjoint
  kDisjoint,           // written in a separate pass over the operand (products, attention)
};

// How cortiq-dump's model (tools/cortiq-dump/plan_analysis.h) costs a kind per token
// (n = result elements) and which weight bytes it reads.
enum class StepCost : uint8_t {
  kElementwise,  // flops_per_element * n; its weights read whole (a scalar)
  kMatrix,       // 2 * rows * cols; the whole matrix read (linear, lm_head)
  kTableRow,     // flops_per_element * n; one row of the table read (embedding)
  kRmsNorm,      // (4 with a gain, else 3) + 1 per operand added + 1 with a scalar, times n;
                 // gain and scalar read whole
  kRope,         // 6 per rotated pair: 6 * (n / head_dim) * rotated_pairs
  kAttention,    // num_heads * L * (4 * head_dim + 4), L = the positions attended
  kCacheWrite,   // 0 (copies one key and one value row)
};

// What a kind's own rules (StepKindInfo::check) see: a step whose kind is known and whose
// operands, weights and cache are in range and used as its entry says (absent ones null).
struct StepCheck {
  const Plan& plan;
  const Step& step;
  size_t index;                // of the step in plan.steps
  uint64_t out_elements;       // 0 without a result
  uint64_t in0_elements, in1_elements;
  const WeightEntry* weight;   // null if the step has none
  const WeightEntry* scalar;
  const CacheEntry* cache;

  // InvalidArgument "step <index> (<kind>): <message>".
  absl::Status Error(absl::string_view message) const;
};

// One kind's entry in the table.
struct StepKindInfo {
  StepKind kind;
  const char* name;  // "rms_norm": errors, dumps, JSON
  // The operands it uses, named by their role (as the dialect's operands), or nullptr for a
  // slot it does not use (which must then be -1).
  const char* in0;
  const char* in1;
  const char* out;     // "result"; nullptr for kv_append
  const char* weight;  // "table", "weight", "gain", "scalar"
  bool weight_optional;  // weight may be -1 (an RMS norm without gain)
  bool scalar;           // uses the optional `scalar` weight (residual_rms_norm)
  bool cache;            // reads or writes `cache`
  // FieldBit set of the parameters it carries; the others must be 0.
  uint32_t params;
  StepAliasing aliasing;
  bool same_size;         // every operand buffer has the result's element count
  bool reads_blocks;      // its weight may use a block format (Q8_0, Q4_0)
  bool may_be_logits_only;  // false: the caches must not depend on whether logits are wanted
                            // (neither logits_only nor rows = kLogits)
  StepCost cost;
  uint32_t flops_per_element;  // kElementwise, kTableRow
  // Rules on its shapes and parameters beyond the generic ones; nullptr if none.
  absl::Status (*check)(const StepCheck& c);
};

// The entry of `kind`; nullptr for a value that is no kind (e.g. from a newer or corrupt file).
const StepKindInfo* FindStepKind(StepKind kind);
// Every kind's entry, in value order.
absl::Span<const StepKindInfo> StepKinds();
// Name of a step kind ("linear", "rms_norm", ...), "unknown" for a value that is no kind.
const char* StepKindName(StepKind kind);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_STEP_KIND_H_
