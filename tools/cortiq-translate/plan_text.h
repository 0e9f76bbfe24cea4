// A plain-text listing of a runtime Plan (runtime/plan.h), one line per record, for reading and
// FileCheck-testing what lowering produced (cortiq-translate --cortiq-to-plan).
#ifndef CORTIQ_TOOLS_CORTIQ_TRANSLATE_PLAN_TEXT_H_
#define CORTIQ_TOOLS_CORTIQ_TRANSLATE_PLAN_TEXT_H_

#include <string>

#include "runtime/plan.h"

namespace cortiq {

// The lines, in this order (indices are the plan's: w = weights, b = buffers, c = caches):
//   model "tiny-a" vocab_size 512 hidden_size 64 num_hidden_layers 8 max_position_embeddings 512
//   plan arena_bytes 704 max_batch 512 logits b9
//   weight w0 "embed" bf16 [512, 64] 65536 bytes
//   buffer b0 [64] at 0                 (bytes from the arena start)
//   buffer b3 [16] at 576 in b2         (a view inside root buffer b2)
//   cache c0 layer 2 sliding window 8 kv_heads 2 head_dim 16
//   step 2 rms_norm input b1 -> b2 gain w2 group_size 64 eps 9.99999997e-07
//   tap "layer.0" b5
// A step names its operands and parameters as the op it was lowered from (CortiqOps.td: input,
// lhs/rhs, gate/up, residual/update, key/value, query; gain, group_size, eps, ...), omits the
// fields its kind does not use, and ends with `logits_only` when it has that flag. Float
// parameters are printed with 9 significant digits (every f32 exactly), RoPE's f64 theta with 17.
std::string PlanToText(const Plan& plan);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_TRANSLATE_PLAN_TEXT_H_
