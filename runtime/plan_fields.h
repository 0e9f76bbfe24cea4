// The field-by-field description of a Plan's records. Each Visit function calls a visitor once
// per field of one record, in the order of the artifact's encoding, with the field's name and a
// reference to it; the artifact's SerializePlan and ParsePlan (artifact.cc) and cortiq-dump's
// JSON are visitors over them, so a field is described once, here (for a step parameter also
// its StepField and its kinds' table bits, runtime/step_kind.h).
//
// A visitor is called as v(name, field) for the records but Step, and as v(id, name, field) for
// Step (id: the StepField), where `field` is a reference (const for a const record) to one of:
// std::string, bool, int32_t, int64_t, uint64_t, double, WeightFormat, StepKind,
// std::vector<int64_t> (a weight's shape), std::vector<uint64_t> (a weight's chunk hashes),
// StepRows.
//
// Appending a field at the end of a record is how a minor artifact version grows (runtime/
// artifact.h): its default value must mean what files without it meant (or ParsePlan derives
// it from the older fields, as for Step::rows).
#ifndef CORTIQ_RUNTIME_PLAN_FIELDS_H_
#define CORTIQ_RUNTIME_PLAN_FIELDS_H_

#include "runtime/plan.h"
#include "runtime/step_kind.h"

namespace cortiq {

template <class M, class V>
void VisitModelInfo(M& m, V&& v) {
  v("source", m.source);
  v("vocab_size", m.vocab_size);
  v("hidden_size", m.hidden_size);
  v("num_hidden_layers", m.num_hidden_layers);
  v("max_position_embeddings", m.max_position_embeddings);
}

template <class W, class V>
void VisitWeightEntry(W& w, V&& v) {
  v("name", w.name);
  v("format", w.format);
  v("shape", w.shape);
  v("offset", w.offset);
  v("size_bytes", w.size_bytes);
  v("xxh3_64", w.xxh3_64);  // 3.1
}

template <class B, class V>
void VisitBufferEntry(B& b, V&& v) {
  v("offset", b.offset);
  v("num_elements", b.num_elements);
  v("view_of", b.view_of);
}

template <class C, class V>
void VisitCacheEntry(C& c, V&& v) {
  v("layer", c.layer);
  v("sliding", c.sliding);
  v("window", c.window);
  v("num_kv_heads", c.num_kv_heads);
  v("head_dim", c.head_dim);
}

// In StepField order.
template <class S, class V>
void VisitStep(S& s, V&& v) {
  v(StepField::kKind, "kind", s.kind);
  v(StepField::kOut, "out", s.out);
  v(StepField::kIn0, "in0", s.in0);
  v(StepField::kIn1, "in1", s.in1);
  v(StepField::kWeight, "weight", s.weight);
  v(StepField::kScalar, "scalar", s.scalar);
  v(StepField::kCache, "cache", s.cache);
  v(StepField::kGroupSize, "group_size", s.group_size);
  v(StepField::kEps, "eps", s.eps);
  v(StepField::kHeadDim, "head_dim", s.head_dim);
  v(StepField::kRotatedPairs, "rotated_pairs", s.rotated_pairs);
  v(StepField::kTheta, "theta", s.theta);
  v(StepField::kNumHeads, "num_heads", s.num_heads);
  v(StepField::kWindow, "window", s.window);
  v(StepField::kScale, "scale", s.scale);
  v(StepField::kFactor, "factor", s.factor);
  v(StepField::kCap, "cap", s.cap);
  v(StepField::kLogitsOnly, "logits_only", s.logits_only);
  v(StepField::kRows, "rows", s.rows);  // format 3.1
}

template <class T, class V>
void VisitTap(T& t, V&& v) {
  v("name", t.name);
  v("buffer", t.buffer);
}

// The plan's fields that are not lists of records.
template <class P, class V>
void VisitPlanScalars(P& p, V&& v) {
  v("logits_buffer", p.logits_buffer);
  v("arena_bytes", p.arena_bytes);
  v("max_batch", p.max_batch);
  v("weight_hash_chunk_bytes", p.weight_hash_chunk_bytes);  // 3.1
}

// A section entry of the metadata (format 3.1, plan_encoding.h: SectionEntry).
template <class S, class V>
void VisitSectionEntry(S& s, V&& v) {
  v("name", s.name);
  v("offset", s.offset);
  v("size", s.size);
}

// True if a step of kind `info` uses field `id`: its kind, logits_only and rows always, an operand if
// the kind gives it a role, a parameter if it is in the kind's set.
inline bool StepUsesField(const StepKindInfo& info, StepField id) {
  switch (id) {
    case StepField::kKind:
    case StepField::kLogitsOnly:
    case StepField::kRows:
      return true;
    case StepField::kOut:
      return info.out != nullptr;
    case StepField::kIn0:
      return info.in0 != nullptr;
    case StepField::kIn1:
      return info.in1 != nullptr;
    case StepField::kWeight:
      return info.weight != nullptr;
    case StepField::kScalar:
      return info.scalar;
    case StepField::kCache:
      return info.cache;
    default:
      return (info.params & FieldBit(id)) != 0;
  }
}

// True for the parameter fields (group_size .. cap), false for kind, operands, logits_only and
// rows.
inline bool IsStepParameter(StepField id) {
  return id >= StepField::kGroupSize && id <= StepField::kCap;
}

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_PLAN_FIELDS_H_
