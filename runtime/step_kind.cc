// The table of step kinds (step_kind.h) and each kind's own shape and parameter rules.
#include "runtime/step_kind.h"

#include <cmath>
#include <cstdint>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/plan.h"

namespace cortiq {
namespace {

constexpr uint32_t kNoParams = 0;
constexpr uint32_t kNormParams = FieldBit(StepField::kGroupSize) | FieldBit(StepField::kEps);

absl::Status FiniteOrError(const StepCheck& c, double value, const char* name) {
  if (!std::isfinite(value)) return c.Error(absl::StrCat(name, " = ", value, " is not finite"));
  return absl::OkStatus();
}

absl::Status PositiveOrError(const StepCheck& c, double value, const char* name) {
  if (!std::isfinite(value) || value <= 0) {
    return c.Error(absl::StrCat(name, " = ", value, " must be finite and > 0"));
  }
  return absl::OkStatus();
}

absl::Status OneElement(const StepCheck& c, const WeightEntry* w, const char* role) {
  if (w != nullptr && w->num_elements() != 1) {
    return c.Error(absl::StrCat(role, " '", w->name, "' has ", w->num_elements(),
                                " elements, expected 1"));
  }
  return absl::OkStatus();
}

// The RMS norm of an operand of `n` elements (`field`): group_size > 0 dividing it, the gain (if
// any) of group_size elements, eps finite and >= 0.
absl::Status CheckNorm(const StepCheck& c, uint64_t n, const char* field) {
  const Step& s = c.step;
  if (s.group_size <= 0 || n % static_cast<uint64_t>(s.group_size) != 0) {
    return c.Error(absl::StrCat("group_size = ", s.group_size, " must be positive and divide ",
                                field, "'s ", n, " elements"));
  }
  if (c.weight != nullptr && c.weight->num_elements() != s.group_size) {
    return c.Error(absl::StrCat("gain '", c.weight->name, "' has ", c.weight->num_elements(),
                                " elements, expected the group size ", s.group_size));
  }
  if (!std::isfinite(s.eps) || s.eps < 0) {
    return c.Error(absl::StrCat("eps = ", s.eps, " must be finite and >= 0"));
  }
  return absl::OkStatus();
}

absl::Status CheckEmbedding(const StepCheck& c) {
  const WeightEntry& w = *c.weight;
  if (w.shape.size() != 2 || static_cast<uint64_t>(w.shape[1]) != c.out_elements) {
    return c.Error(absl::StrCat("weight '", w.name, "' has shape [", absl::StrJoin(w.shape, ", "),
                                "], expected [rows, ", c.out_elements, "] (out has ",
                                c.out_elements, " elements)"));
  }
  return FiniteOrError(c, c.step.scale, "scale");
}

// out = W in0 with W [out elements, in0 elements].
absl::Status CheckMatrix(const StepCheck& c) {
  const WeightEntry& w = *c.weight;
  if (w.shape.size() != 2 || static_cast<uint64_t>(w.shape[0]) != c.out_elements ||
      static_cast<uint64_t>(w.shape[1]) != c.in0_elements) {
    return c.Error(absl::StrCat("weight '", w.name, "' has shape [", absl::StrJoin(w.shape, ", "),
                                "], expected [", c.out_elements, ", ", c.in0_elements,
                                "] (out, in)"));
  }
  return absl::OkStatus();
}

absl::Status CheckRmsNorm(const StepCheck& c) { return CheckNorm(c, c.in0_elements, "in0"); }

absl::Status CheckRope(const StepCheck& c) {
  const Step& s = c.step;
  const uint64_t n = c.in0_elements;
  if (s.head_dim <= 0 || s.head_dim % 2 != 0 || n % static_cast<uint64_t>(s.head_dim) != 0) {
    return c.Error(absl::StrCat("head_dim = ", s.head_dim,
                                " must be positive, even and divide in0's ", n, " elements"));
  }
  if (s.rotated_pairs < 1 || s.rotated_pairs > s.head_dim / 2) {
    return c.Error(absl::StrCat("rotated_pairs = ", s.rotated_pairs, " must be in [1, ",
                                s.head_dim / 2, "]"));
  }
  return PositiveOrError(c, s.theta, "theta");
}

absl::Status CheckKvAppend(const StepCheck& c) {
  const uint64_t width = static_cast<uint64_t>(c.cache->num_kv_heads * c.cache->head_dim);
  if (c.in0_elements != width || c.in1_elements != width) {
    return c.Error(absl::StrCat("key/value have ", c.in0_elements, "/", c.in1_elements,
                                " elements, cache ", c.step.cache, " rows have ", width,
                                " (num_kv_heads * head_dim)"));
  }
  return absl::OkStatus();
}

absl::Status CheckAttention(const StepCheck& c) {
  const Step& s = c.step;
  const CacheEntry& cache = *c.cache;
  const uint64_t n = c.in0_elements;
  if (s.num_heads <= 0 || s.num_heads % cache.num_kv_heads != 0) {
    return c.Error(absl::StrCat("num_heads = ", s.num_heads,
                                " must be a positive multiple of cache ", s.cache,
                                "'s num_kv_heads ", cache.num_kv_heads));
  }
  // Division, not num_heads * head_dim: num_heads is untrusted and the product could wrap.
  const uint64_t heads = static_cast<uint64_t>(s.num_heads);
  if (heads > n || n % heads != 0 || n / heads != static_cast<uint64_t>(cache.head_dim)) {
    return c.Error(absl::StrCat("query/out have ", n, " elements, expected num_heads ",
                                s.num_heads, " * head_dim ", cache.head_dim));
  }
  const int64_t expected_window = cache.sliding ? cache.window : 0;
  if (s.window != expected_window) {
    return c.Error(absl::StrCat("window = ", s.window, ", expected ", expected_window,
                                " (cache ", s.cache, " is ", cache.sliding ? "sliding" : "full",
                                ")"));
  }
  return FiniteOrError(c, s.scale, "scale");
}

absl::Status CheckScale(const StepCheck& c) { return FiniteOrError(c, c.step.factor, "factor"); }

absl::Status CheckSoftcap(const StepCheck& c) { return PositiveOrError(c, c.step.cap, "cap"); }

absl::Status CheckLayerScalar(const StepCheck& c) { return OneElement(c, c.weight, "weight"); }

absl::Status CheckResidualRmsNorm(const StepCheck& c) {
  if (absl::Status s = CheckNorm(c, c.in1_elements, "in1"); !s.ok()) return s;
  return OneElement(c, c.scalar, "scalar");
}

// The table. Each row: kind, name; roles of in0, in1, out, weight; weight optional, scalar,
// cache; parameters; aliasing, same size, reads blocks, may be logits_only; cost, flops per
// element; own rules.
constexpr StepKindInfo kKinds[] = {
    {StepKind::kEmbedding, "embedding", nullptr, nullptr, "result", "table", false, false, false,
     FieldBit(StepField::kScale), StepAliasing::kDisjoint, false, true, true, StepCost::kTableRow,
     1, CheckEmbedding},
    {StepKind::kLinear, "linear", "input", nullptr, "result", "weight", false, false, false,
     kNoParams, StepAliasing::kDisjoint, false, true, true, StepCost::kMatrix, 0, CheckMatrix},
    {StepKind::kRmsNorm, "rms_norm", "input", nullptr, "result", "gain", true, false, false,
     kNormParams, StepAliasing::kInPlaceOrDisjoint, true, false, true, StepCost::kRmsNorm, 0,
     CheckRmsNorm},
    {StepKind::kRope, "rope", "input", nullptr, "result", nullptr, false, false, false,
     FieldBit(StepField::kHeadDim) | FieldBit(StepField::kRotatedPairs) |
         FieldBit(StepField::kTheta),
     StepAliasing::kInPlaceOrDisjoint, true, false, true, StepCost::kRope, 0, CheckRope},
    {StepKind::kKvAppend, "kv_append", "key", "value", nullptr, nullptr, false, false, true,
     kNoParams, StepAliasing::kDisjoint, false, false, false, StepCost::kCacheWrite, 0,
     CheckKvAppend},
    {StepKind::kAttention, "attention", "query", nullptr, "result", nullptr, false, false, true,
     FieldBit(StepField::kNumHeads) | FieldBit(StepField::kWindow) | FieldBit(StepField::kScale),
     StepAliasing::kDisjoint, true, false, true, StepCost::kAttention, 0, CheckAttention},
    {StepKind::kGeluTanh, "gelu_tanh", "input", nullptr, "result", nullptr, false, false, false,
     kNoParams, StepAliasing::kInPlaceOrDisjoint, true, false, true, StepCost::kElementwise, 8,
     nullptr},
    {StepKind::kMul, "mul", "lhs", "rhs", "result", nullptr, false, false, false, kNoParams,
     StepAliasing::kInPlaceOrDisjoint, true, false, true, StepCost::kElementwise, 1, nullptr},
    {StepKind::kAdd, "add", "lhs", "rhs", "result", nullptr, false, false, false, kNoParams,
     StepAliasing::kInPlaceOrDisjoint, true, false, true, StepCost::kElementwise, 1, nullptr},
    {StepKind::kScale, "scale", "input", nullptr, "result", nullptr, false, false, false,
     FieldBit(StepField::kFactor), StepAliasing::kInPlaceOrDisjoint, true, false, true,
     StepCost::kElementwise, 1, CheckScale},
    {StepKind::kLayerScalar, "layer_scalar", "input", nullptr, "result", "scalar", false, false,
     false, kNoParams, StepAliasing::kInPlaceOrDisjoint, true, false, true,
     StepCost::kElementwise, 1, CheckLayerScalar},
    {StepKind::kSoftcap, "softcap", "input", nullptr, "result", nullptr, false, false, false,
     FieldBit(StepField::kCap), StepAliasing::kInPlaceOrDisjoint, true, false, true,
     StepCost::kElementwise, 3, CheckSoftcap},
    {StepKind::kLmHead, "lm_head", "input", nullptr, "result", "table", false, false, false,
     kNoParams, StepAliasing::kDisjoint, false, true, true, StepCost::kMatrix, 0, CheckMatrix},
    {StepKind::kGeluTanhMul, "gelu_tanh_mul", "gate", "up", "result", nullptr, false, false,
     false, kNoParams, StepAliasing::kInPlaceOrDisjoint, true, false, true,
     StepCost::kElementwise, 9, nullptr},
    {StepKind::kResidualRmsNorm, "residual_rms_norm", "residual", "update", "result", "gain", true,
     true, false, kNormParams, StepAliasing::kInPlaceOrDisjoint, true, false, true,
     StepCost::kRmsNorm, 0, CheckResidualRmsNorm},
};

// Values are 1..N in table order, so a kind is found by index.
constexpr bool KindsInValueOrder() {
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    if (static_cast<uint32_t>(kKinds[i].kind) != i + 1) return false;
  }
  return true;
}
static_assert(KindsInValueOrder(), "kKinds must list the kinds in value order, from 1");

}  // namespace

absl::Status StepCheck::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat("step ", index, " (", StepKindName(step.kind), "): ", message));
}

const StepKindInfo* FindStepKind(StepKind kind) {
  const uint32_t value = static_cast<uint32_t>(kind);
  if (value < 1 || value > std::size(kKinds)) return nullptr;
  return &kKinds[value - 1];
}

absl::Span<const StepKindInfo> StepKinds() { return absl::MakeConstSpan(kKinds); }

const char* StepKindName(StepKind kind) {
  const StepKindInfo* info = FindStepKind(kind);
  return info != nullptr ? info->name : "unknown";
}

}  // namespace cortiq
