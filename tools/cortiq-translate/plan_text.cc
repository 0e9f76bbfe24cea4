// The plain-text plan listing (see plan_text.h).
#include "tools/cortiq-translate/plan_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/plan_fields.h"
#include "runtime/step_kind.h"

namespace cortiq {
namespace {

std::string F32(double value) { return absl::StrFormat("%.9g", value); }

std::string Buffer(int32_t index) { return absl::StrCat("b", index); }
std::string Weight(int32_t index) { return absl::StrCat("w", index); }

// Formats one parameter of a step: integers as they are, f32 parameters with 9 significant
// digits (every f32 exactly), the f64 RoPE theta with 17.
struct ParamText {
  std::string& text;
  void operator()(StepField, const char* name, int32_t v) { absl::StrAppend(&text, " ", name, " ", v); }
  void operator()(StepField, const char* name, int64_t v) { absl::StrAppend(&text, " ", name, " ", v); }
  void operator()(StepField id, const char* name, double v) {
    absl::StrAppend(&text, " ", name, " ",
                    id == StepField::kTheta ? absl::StrFormat("%.17g", v) : F32(v));
  }
  template <class T>
  void operator()(StepField, const char*, const T&) {}  // kind, rows, logits_only: not parameters
};

// The operands, result and parameters of `step`, after its kind's name, as the step-kind table
// (runtime/step_kind.h) names them: the operand buffers by role, a kind's cache, "-> result"
// (a kind without a result writes its cache: "-> cN"), its weights by role (a kind without
// operand buffers reads its weight first: "table wN -> bM"), then the parameters the kind
// carries, in the order of the step record (plan_fields.h) — so a new kind needs no code here.
std::string StepFields(const Step& s) {
  const StepKindInfo* info = FindStepKind(s.kind);
  if (info == nullptr) return " (unknown kind)";
  std::string text;
  const auto weight = [&](const char* role, int32_t index) {
    if (role != nullptr && index >= 0) absl::StrAppend(&text, " ", role, " ", Weight(index));
  };
  if (info->in0 != nullptr) absl::StrAppend(&text, " ", info->in0, " ", Buffer(s.in0));
  if (info->in1 != nullptr) absl::StrAppend(&text, " ", info->in1, " ", Buffer(s.in1));
  if (info->in0 == nullptr) weight(info->weight, s.weight);
  if (info->cache) {
    absl::StrAppend(&text, info->out != nullptr ? " cache c" : " -> c", s.cache);
  }
  if (info->out != nullptr) absl::StrAppend(&text, " -> ", Buffer(s.out));
  if (info->in0 != nullptr) weight(info->weight, s.weight);
  if (info->scalar) weight("scalar", s.scalar);
  ParamText params{text};
  VisitStep(s, [&](StepField id, const char* name, const auto& value) {
    if ((info->params & FieldBit(id)) != 0) params(id, name, value);
  });
  return text;
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
