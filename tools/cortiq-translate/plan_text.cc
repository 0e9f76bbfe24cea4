// The plain-text plan listing (see plan_text.h).
#include "tools/cortiq-translate/plan_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cortiq {
namespace {

std::string F32(double value) { return absl::StrFormat("%.9g", value); }

std::string Buffer(int32_t index) { return absl::StrCat("b", index); }
std::string Weight(int32_t index) { return absl::StrCat("w", index); }

// The operands, result and parameters of `step`, after its kind's name.
std::string StepFields(const Step& s) {
  const std::string out = absl::StrCat(" -> ", Buffer(s.out));
  switch (s.kind) {
    case StepKind::kEmbedding:
      return absl::StrCat(" table ", Weight(s.weight), out, " scale ", F32(s.scale));
    case StepKind::kLinear:
      return absl::StrCat(" input ", Buffer(s.in0), out, " weight ", Weight(s.weight));
    case StepKind::kLmHead:
      return absl::StrCat(" input ", Buffer(s.in0), out, " table ", Weight(s.weight));
    case StepKind::kRmsNorm:
      return absl::StrCat(" input ", Buffer(s.in0), out,
                          s.weight >= 0 ? absl::StrCat(" gain ", Weight(s.weight)) : "",
                          " group_size ", s.group_size, " eps ", F32(s.eps));
    case StepKind::kRope:
      return absl::StrCat(" input ", Buffer(s.in0), out, " head_dim ", s.head_dim,
                          " rotated_pairs ", s.rotated_pairs, " theta ",
                          absl::StrFormat("%.17g", s.theta));
    case StepKind::kKvAppend:
      return absl::StrCat(" key ", Buffer(s.in0), " value ", Buffer(s.in1), " -> c", s.cache);
    case StepKind::kAttention:
      return absl::StrCat(" query ", Buffer(s.in0), " cache c", s.cache, out, " num_heads ",
                          s.num_heads, s.window > 0 ? absl::StrCat(" window ", s.window) : "",
                          " scale ", F32(s.scale));
    case StepKind::kGeluTanh:
    case StepKind::kSoftcap:
    case StepKind::kScale:
    case StepKind::kLayerScalar: {
      std::string fields = absl::StrCat(" input ", Buffer(s.in0), out);
      if (s.kind == StepKind::kSoftcap) absl::StrAppend(&fields, " cap ", F32(s.cap));
      if (s.kind == StepKind::kScale) absl::StrAppend(&fields, " factor ", F32(s.factor));
      if (s.kind == StepKind::kLayerScalar) absl::StrAppend(&fields, " scalar ", Weight(s.weight));
      return fields;
    }
    case StepKind::kMul:
    case StepKind::kAdd:
      return absl::StrCat(" lhs ", Buffer(s.in0), " rhs ", Buffer(s.in1), out);
    case StepKind::kGeluTanhMul:
      return absl::StrCat(" gate ", Buffer(s.in0), " up ", Buffer(s.in1), out);
    case StepKind::kResidualRmsNorm:
      return absl::StrCat(" residual ", Buffer(s.in0), " update ", Buffer(s.in1), out,
                          s.weight >= 0 ? absl::StrCat(" gain ", Weight(s.weight)) : "",
                          s.scalar >= 0 ? absl::StrCat(" scalar ", Weight(s.scalar)) : "",
                          " group_size ", s.group_size, " eps ", F32(s.eps));
  }
  return " (unknown kind)";
}

}  // namespace

std::string PlanToText(const Plan& plan) {
  const ModelInfo& m = plan.model;
  std::string text = absl::StrCat("model \"", m.source, "\" vocab_size ", m.vocab_size,
                                  " hidden_size ", m.hidden_size, " num_hidden_layers ",
                                  m.num_hidden_layers, " max_position_embeddings ",
                                  m.max_position_embeddings, "\n");
  absl::StrAppend(&text, "plan arena_bytes ", plan.arena_bytes, " max_batch ", plan.max_batch,
                  " logits ", Buffer(plan.logits_buffer), "\n");
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const WeightEntry& w = plan.weights[i];
    absl::StrAppend(&text, "weight w", i, " \"", w.name, "\" ", WeightFormatName(w.format), " [",
                    absl::StrJoin(w.shape, ", "), "] ", w.size_bytes, " bytes\n");
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferEntry& b = plan.buffers[i];
    absl::StrAppend(&text, "buffer b", i, " [", b.num_elements, "] at ", b.offset,
                    b.view_of >= 0 ? absl::StrCat(" in ", Buffer(b.view_of)) : "", "\n");
  }
  for (size_t i = 0; i < plan.caches.size(); ++i) {
    const CacheEntry& c = plan.caches[i];
    absl::StrAppend(&text, "cache c", i, " layer ", c.layer,
                    c.sliding ? absl::StrCat(" sliding window ", c.window) : " full",
                    " kv_heads ", c.num_kv_heads, " head_dim ", c.head_dim, "\n");
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    absl::StrAppend(&text, "step ", i, " ", StepKindName(s.kind), StepFields(s),
                    s.logits_only                   ? " logits_only"
                    : s.rows == StepRows::kLogits ? " rows logits"
                                                  : "",
                    "\n");
  }
  for (const Tap& tap : plan.taps) {
    absl::StrAppend(&text, "tap \"", tap.name, "\" ", Buffer(tap.buffer), "\n");
  }
  return text;
}

}  // namespace cortiq
