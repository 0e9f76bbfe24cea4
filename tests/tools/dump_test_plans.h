// Hand-built plans for the cortiq-dump tests (tests/tools): a two-layer plan with a KV-shared
// layer, a prologue, a fused step and a tied LM head, and the helpers that build plans.
#ifndef CORTIQ_TESTS_TOOLS_DUMP_TEST_PLANS_H_
#define CORTIQ_TESTS_TOOLS_DUMP_TEST_PLANS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/plan.h"

namespace cortiq {
namespace dump {
namespace testing {

// Appends an f32 weight (64-byte aligned after the previous one); returns its index.
int32_t AddWeight(Plan* plan, std::string name, std::vector<int64_t> shape);
// Appends a buffer of `n` f32 at byte `offset`; returns its index.
int32_t AddBuffer(Plan* plan, uint64_t offset, uint64_t n);
// A step with the given operands and weight; every other field at its default.
Step MakeStep(StepKind kind, int32_t out, int32_t in0 = -1, int32_t in1 = -1, int32_t weight = -1);

// Two layers of width 4 (one head of 4), layer 1 KV-shared with layer 0's sliding cache (W=2);
// passes ValidatePlan:
//   0 embedding  1 linear (prologue)  | 2 rms_norm 3 linear(q) 4 kv_append 5 attention 6 add |
//   7 linear(q) 8 attention 9 residual_rms_norm (fused, with scalar) | 10 lm_head (logits_only)
// Taps layer.0 / layer.1 on the results of steps 6 and 9.
Plan TwoLayerPlan();

}  // namespace testing
}  // namespace dump
}  // namespace cortiq

#endif  // CORTIQ_TESTS_TOOLS_DUMP_TEST_PLANS_H_
