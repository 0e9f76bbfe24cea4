// Lowering of a `cortiq` decode-step module to the runtime's flat per-token plan.
#ifndef CORTIQ_COMPILER_LOWER_PLAN_LOWERING_H_
#define CORTIQ_COMPILER_LOWER_PLAN_LOWERING_H_

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/plan.h"

namespace cortiq {

// What the IR does not say about the plan.
struct LoweringOptions {
  // Plan::max_batch: the largest prefill batch (cortiq-compile --max-batch), in [1, kMaxBatch].
  int64_t max_batch = 512;
};

// Lowers the `decode_step` function of `module` to a Plan: one step per op in program order
// (slices and layer_output are views/taps, not steps), one arena buffer per value (at the
// offsets plan-buffers assigned, or 64-byte aligned without reuse when it did not run), one
// weight entry per referenced cortiq.weight in its `stored_format` (recorded by
// assign-storage-formats; offsets are assigned by the artifact writer), one cache per
// cortiq.kv_cache. Steps that feed neither a KV append nor
// a layer output (the final norm, LM head and softcap) are marked `logits_only`. Each step's
// `rows` is its op's `cortiq.rows` (mark-rows) when it has one, else all rows for the ops that
// feed a KV append or a layer output and the logits rows for the others; logits_only steps always
// run on the logits rows.
// `module` must verify. Errors: InvalidArgument if the module has no decode_step function,
// holds an op the runtime has no kernel for (the op is named), or a referenced weight has no
// stored_format (named).
absl::StatusOr<Plan> LowerToPlan(mlir::ModuleOp module, const LoweringOptions& options);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_LOWER_PLAN_LOWERING_H_
