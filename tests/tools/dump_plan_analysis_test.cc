// Tests of tools/cortiq-dump/plan_analysis.cc over hand-built plans: layer mapping (taps, the
// prologue, the head, and the weight-name fallback), KV sharing, per-step cost, liveness with
// views and reused bytes, and totals.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/plan.h"
#include "tests/tools/dump_test_plans.h"
#include "tools/cortiq-dump/plan_analysis.h"

namespace cortiq {
namespace dump {
namespace {

using ::cortiq::dump::testing::AddBuffer;
using ::cortiq::dump::testing::AddWeight;
using ::cortiq::dump::testing::MakeStep;
using ::cortiq::dump::testing::TwoLayerPlan;
using ::testing::ElementsAre;

std::vector<int64_t> Layers(const Analysis& a) {
  std::vector<int64_t> layers;
  for (const StepInfo& s : a.steps) layers.push_back(s.layer);
  return layers;
}

TEST(DumpPlanAnalysisTest, NamesAndAttendedPositions) {
  EXPECT_EQ(KindName(StepKind::kLinear), "linear");
  EXPECT_EQ(KindName(StepKind::kGeluTanhMul), "gelu_tanh_mul");
  EXPECT_EQ(KindName(StepKind::kResidualRmsNorm), "residual_rms_norm");
  EXPECT_EQ(KindName(static_cast<StepKind>(99)), "kind99");
  EXPECT_EQ(LayerName(kPrologue), "pre");
  EXPECT_EQ(LayerName(kHead), "head");
  EXPECT_EQ(LayerName(12), "12");
  EXPECT_EQ(AttendedPositions(0, 8), 1);
  EXPECT_EQ(AttendedPositions(7, 8), 8);
  EXPECT_EQ(AttendedPositions(100, 8), 8);
  EXPECT_EQ(AttendedPositions(100, 0), 101);
}

TEST(DumpPlanAnalysisTest, LayersFromTapsWithPrologueAndHead) {
  const Plan plan = TwoLayerPlan();
  ASSERT_TRUE(ValidatePlan(plan, 1 << 20).ok()) << ValidatePlan(plan, 1 << 20);
  const Analysis a = Analyze(plan, 8);
  EXPECT_EQ(a.layer_mapping, "taps");
  EXPECT_THAT(Layers(a), ElementsAre(kPrologue, kPrologue, 0, 0, 0, 0, 0, 1, 1, 1, kHead));
  ASSERT_EQ(a.layers.size(), 2u);
  EXPECT_EQ(a.layers[0].first_step, 2);
  EXPECT_EQ(a.layers[0].last_step, 6);
  EXPECT_EQ(a.layers[0].own_cache, 0);
  EXPECT_FALSE(a.layers[0].kv_shared);
  EXPECT_EQ(a.layers[1].first_step, 7);
  EXPECT_EQ(a.layers[1].attention_step, 8);
  EXPECT_TRUE(a.layers[1].kv_shared);
  EXPECT_EQ(a.layers[1].cache_layer, 0);
  EXPECT_EQ(a.layers[1].own_cache, -1);
  ASSERT_EQ(a.caches.size(), 1u);
  EXPECT_EQ(a.caches[0].append_step, 4);
  EXPECT_THAT(a.caches[0].attention_steps, ElementsAre(5, 8));
  EXPECT_THAT(a.caches[0].reader_layers, ElementsAre(0, 1));
  EXPECT_EQ(a.caches[0].rows, 2u);                   // the ring, not ctx_size
  EXPECT_EQ(a.caches[0].bytes, 2u * 4 * 2 * 1 * 4);  // K and V, 2 rows of 1 head x 4
}

TEST(DumpPlanAnalysisTest, FirstLayerStartsAtItsInputNormEvenWithoutWeight) {
  // With the norm gain folded into the next linear, the input norm reads no layers.0 weight; it
  // still feeds layer 0's KV, while the prologue's linear does not.
  Plan plan = TwoLayerPlan();
  plan.steps[2].weight = -1;
  const Analysis a = Analyze(plan, 8);
  EXPECT_EQ(a.layer_mapping, "taps");
  EXPECT_THAT(Layers(a), ElementsAre(kPrologue, kPrologue, 0, 0, 0, 0, 0, 1, 1, 1, kHead));
}

TEST(DumpPlanAnalysisTest, LayersFromWeightNamesWithoutTaps) {
  Plan plan = TwoLayerPlan();
  plan.taps.clear();
  const Analysis a = Analyze(plan, 8);
  EXPECT_EQ(a.layer_mapping, "weight names");
  // Steps take the layer of their layers.N weight or of the step before; logits_only: head.
  EXPECT_THAT(Layers(a), ElementsAre(kPrologue, kPrologue, 0, 0, 0, 0, 0, 1, 1, 1, kHead));
  EXPECT_TRUE(a.layers[1].kv_shared);
}

TEST(DumpPlanAnalysisTest, TapsOutOfOrderFallBackToWeightNames) {
  Plan plan = TwoLayerPlan();
  std::swap(plan.taps[0].buffer, plan.taps[1].buffer);  // layer.0 would end after layer.1
  EXPECT_EQ(Analyze(plan, 8).layer_mapping, "weight names");
}

TEST(DumpPlanAnalysisTest, CostsAndTotals) {
  const Plan plan = TwoLayerPlan();
  const Analysis a = Analyze(plan, 8);  // position 7: the ring of 2 is full
  EXPECT_EQ(a.position, 7);
  // Embedding: one row of 4 f32; linear 4x4: 64 B, 2*4*4 FLOPs.
  EXPECT_EQ(a.steps[0].weight_bytes, 16u);
  EXPECT_EQ(a.steps[1].weight_bytes, 64u);
  EXPECT_EQ(a.steps[1].flops, 32u);
  EXPECT_EQ(a.steps[1].flops_formula, "2*4*4");
  EXPECT_EQ(a.steps[2].flops, 16u);  // rms_norm with gain: 4n
  // Attention: H*L*(4*D+4) with H=1, L=2, D=4; K and V of 2 rows read.
  EXPECT_EQ(a.steps[5].flops, 40u);
  EXPECT_EQ(a.steps[5].kv_bytes_read, 2u * 4 * 2 * 4);
  EXPECT_EQ(a.steps[4].kv_bytes_written, 2u * 4 * 4);
  EXPECT_THAT(a.steps[5].shape, ElementsAre(1, 4));
  // residual_rms_norm with gain and scalar: (4 + 1 + 1) n; reads both weights.
  EXPECT_EQ(a.steps[9].flops, 24u);
  EXPECT_EQ(a.steps[9].weight_bytes, 16u + 4u);
  // lm_head reads the whole tied table.
  EXPECT_EQ(a.steps[10].weight_bytes, 160u);
  EXPECT_EQ(a.steps[10].flops, 80u);

  const Totals& t = a.totals;
  EXPECT_EQ(t.steps, 11u);
  EXPECT_EQ(t.steps_without_logits, 10u);
  EXPECT_EQ(t.weight_bytes_matvec, 64u * 3 + 160u);
  EXPECT_EQ(t.weight_bytes_embedding, 16u);
  EXPECT_EQ(t.weight_bytes_other, 16u + 20u);
  EXPECT_EQ(t.weight_bytes,
            t.weight_bytes_matvec + t.weight_bytes_embedding + t.weight_bytes_other);
  EXPECT_EQ(t.weight_bytes_without_logits, t.weight_bytes - 160u);
  EXPECT_EQ(t.flops_attention, 80u);
  EXPECT_EQ(t.flops_matvec, 3u * 32 + 80u);
  EXPECT_EQ(t.flops, t.flops_matvec + t.flops_attention + t.flops_other);
  EXPECT_EQ(t.kv_bytes_read, 2u * 64);
  EXPECT_EQ(t.kv_cache_bytes, 64u);
  EXPECT_THAT(a.weight_users[0], ElementsAre(0, 10));  // tied embedding / LM head

  // Buffer 9 is neither written nor inside a result.
  EXPECT_EQ(a.buffer_stats.unused, 1u);
  EXPECT_EQ(a.buffer_stats.views, 0u);
  EXPECT_TRUE(a.buffers[9].unused);

  // At position 0 only one key is visible.
  EXPECT_EQ(Analyze(plan, 1).steps[5].flops, 20u);
}

TEST(DumpPlanAnalysisTest, LivenessWithViewsAndReusedBytes) {
  // b0 [8] at 0 has a view b1 = its elements 4..7 (bytes 16..32) read at step 3 after b0's last
  // direct read (step 1); b5 reuses b2's bytes in place at step 4.
  Plan plan;
  plan.model.vocab_size = 4;
  const int32_t table = AddWeight(&plan, "embed", {4, 8});
  const int32_t b0 = AddBuffer(&plan, 0, 8);
  const int32_t b1 = AddBuffer(&plan, 16, 4);  // view
  const int32_t b2 = AddBuffer(&plan, 64, 8);
  const int32_t b3 = AddBuffer(&plan, 128, 8);
  const int32_t b4 = AddBuffer(&plan, 256, 4);
  const int32_t b5 = AddBuffer(&plan, 64, 8);  // b2's bytes
  plan.arena_bytes = 320;
  plan.steps.push_back(MakeStep(StepKind::kEmbedding, b0, -1, -1, table));
  plan.steps.push_back(MakeStep(StepKind::kScale, b2, b0));
  plan.steps.push_back(MakeStep(StepKind::kScale, b3, b2));
  plan.steps.push_back(MakeStep(StepKind::kScale, b4, b1));
  plan.steps.push_back(MakeStep(StepKind::kScale, b5, b3));
  plan.logits_buffer = b5;

  const Analysis a = Analyze(plan, 4);
  EXPECT_TRUE(a.buffers[b1].view);
  EXPECT_FALSE(a.buffers[b0].view);
  EXPECT_TRUE(a.buffers[b5].pinned);
  EXPECT_EQ(a.steps[3].producer0, 0);  // the view's bytes were written by step 0
  EXPECT_EQ(a.steps[4].producer0, 2);
  const BufferStats& s = a.buffer_stats;
  EXPECT_EQ(s.buffers, 6u);
  EXPECT_EQ(s.results, 5u);
  EXPECT_EQ(s.views, 1u);
  EXPECT_EQ(s.unused, 0u);
  EXPECT_EQ(s.sharing, 4u);         // b0/b1 and b2/b5
  EXPECT_EQ(s.reused_results, 2u);  // b2/b5
  EXPECT_EQ(s.distinct_offsets, 5u);
  EXPECT_EQ(s.result_bytes, 32u + 32 + 32 + 16 + 32);
  // Live bytes per step: 0: b0 (32); 1: b0 + b2 (64); 2: view (16) + b2 + b3 (80);
  // 3: view + b3 + b4 (64); 4: b3 + b5 (64).
  EXPECT_EQ(s.peak_live_bytes, 80u);
  EXPECT_EQ(s.peak_step, 2);
}

}  // namespace
}  // namespace dump
}  // namespace cortiq
