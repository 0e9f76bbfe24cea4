// Hand-built plans for the cortiq-dump tests (see dump_test_plans.h).
#include "tests/tools/dump_test_plans.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cortiq {
namespace dump {
namespace testing {

int32_t AddWeight(Plan* plan, std::string name, std::vector<int64_t> shape) {
  WeightEntry w;
  w.name = std::move(name);
  w.shape = std::move(shape);
  w.size_bytes = 4 * static_cast<uint64_t>(w.num_elements());
  w.offset = plan->weights.empty()
                 ? 0
                 : (plan->weights.back().offset + plan->weights.back().size_bytes +
                    kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
  plan->weights.push_back(w);
  return static_cast<int32_t>(plan->weights.size() - 1);
}

int32_t AddBuffer(Plan* plan, uint64_t offset, uint64_t n) {
  plan->buffers.push_back(BufferEntry{offset, n});
  return static_cast<int32_t>(plan->buffers.size() - 1);
}

Step MakeStep(StepKind kind, int32_t out, int32_t in0, int32_t in1, int32_t weight) {
  Step s;
  s.kind = kind;
  s.out = out;
  s.in0 = in0;
  s.in1 = in1;
  s.weight = weight;
  return s;
}

Plan TwoLayerPlan() {
  Plan plan;
  plan.model.vocab_size = 10;
  plan.model.hidden_size = 4;
  plan.model.num_hidden_layers = 2;
  plan.model.max_position_embeddings = 64;
  const int32_t embed = AddWeight(&plan, "model.embed_tokens.weight", {10, 4});
  const int32_t gain = AddWeight(&plan, "model.layers.0.input_layernorm.weight", {4});
  const int32_t q0 = AddWeight(&plan, "model.layers.0.q_proj.weight", {4, 4});
  const int32_t q1 = AddWeight(&plan, "model.layers.1.q_proj.weight", {4, 4});
  const int32_t proj = AddWeight(&plan, "model.per_layer_model_projection.weight", {4, 4});
  const int32_t gain1 = AddWeight(&plan, "model.layers.1.post_norm.weight", {4});
  const int32_t scalar1 = AddWeight(&plan, "model.layers.1.layer_scalar", {1});
  std::vector<int32_t> b;
  for (int i = 0; i < 10; ++i) b.push_back(AddBuffer(&plan, 64 * static_cast<uint64_t>(i), 4));
  const int32_t logits = AddBuffer(&plan, 640, 10);
  plan.arena_bytes = 704;
  plan.caches.push_back(CacheEntry{0, true, 2, 1, 4});

  plan.steps.push_back(MakeStep(StepKind::kEmbedding, b[0], -1, -1, embed));
  plan.steps.push_back(MakeStep(StepKind::kLinear, b[1], b[0], -1, proj));
  Step norm = MakeStep(StepKind::kRmsNorm, b[2], b[0], -1, gain);
  norm.group_size = 4;
  plan.steps.push_back(norm);
  plan.steps.push_back(MakeStep(StepKind::kLinear, b[3], b[2], -1, q0));
  Step append = MakeStep(StepKind::kKvAppend, -1, b[3], b[3]);
  append.cache = 0;
  plan.steps.push_back(append);
  Step attention = MakeStep(StepKind::kAttention, b[4], b[3]);
  attention.cache = 0;
  attention.num_heads = 1;
  attention.window = 2;
  plan.steps.push_back(attention);
  plan.steps.push_back(MakeStep(StepKind::kAdd, b[5], b[4], b[1]));
  plan.steps.push_back(MakeStep(StepKind::kLinear, b[6], b[5], -1, q1));
  attention.out = b[7];
  attention.in0 = b[6];
  plan.steps.push_back(attention);
  Step fused = MakeStep(StepKind::kResidualRmsNorm, b[8], b[5], b[7], gain1);
  fused.scalar = scalar1;
  fused.group_size = 4;
  plan.steps.push_back(fused);
  Step head = MakeStep(StepKind::kLmHead, logits, b[8], -1, embed);
  head.logits_only = true;
  head.rows = StepRows::kLogits;
  plan.steps.push_back(head);
  plan.taps = {Tap{"layer.0", b[5]}, Tap{"layer.1", b[8]}};
  plan.logits_buffer = logits;
  return plan;
}

}  // namespace testing
}  // namespace dump
}  // namespace cortiq
