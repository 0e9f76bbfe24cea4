// Lowering of a `cortiq` decode-step module to the runtime's flat per-token plan.
#ifndef CORTIQ_COMPILER_LOWER_PLAN_LOWERING_H_
#define CORTIQ_COMPILER_LOWER_PLAN_LOWERING_H_

#include <optional>

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/plan.h"

namespace cortiq {

// Which format each weight is stored in (cortiq-compile --weights). The policy:
// - 1-D weights (norm gains, layer scalars) are always f32: tiny, and exact.
// - Matrices take `weight_format` (unset: each tensor's own dtype — f16 becomes f32 — and
//   GGUF Q8_0/Q4_0 blocks stay as they are).
// - With a block format (Q8_0/Q4_0), a matrix whose rows are not a multiple of 32 weights
//   stays bf16; and the tables read by embedding / LM-head steps (the tied token embedding
//   and the PLE table) take `table_format` when it is set — cortiq-compile sets Q8_0 for
//   them under --weights q4_0, because the tied table is also the LM head, whose error goes
//   straight into the logits (measured in the note of issue 5).
struct LoweringOptions {
  std::optional<WeightFormat> weight_format;
  std::optional<WeightFormat> table_format;
  // Plan::max_batch: the largest prefill batch (cortiq-compile --max-batch), in [1, kMaxBatch].
  int64_t max_batch = 512;
};

// Lowers the `decode_step` function of `module` to a Plan: one step per op in program order
// (slices and layer_output are views/taps, not steps), one arena buffer per value (at the
// offsets plan-buffers assigned, or 64-byte aligned without reuse when it did not run), one
// weight entry per referenced cortiq.weight in the format recorded on it (kStoredFormatAttr), or
// else the one `options` gives by the policy above (offsets are assigned by
// the artifact writer), one cache per cortiq.kv_cache. Steps that feed neither a KV append nor
// a layer output (the final norm, LM head and softcap) are marked `logits_only`.
// Errors: InvalidArgument if the module has no decode_step function or holds an op the
// runtime has no kernel for (the op is named).
absl::StatusOr<Plan> LowerToPlan(mlir::ModuleOp module, const LoweringOptions& options);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_LOWER_PLAN_LOWERING_H_
