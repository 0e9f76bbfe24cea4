// Plan helpers (format/kind names, weight sizes) and ValidatePlan, the check
// that makes an untrusted plan (from a hostile file or a buggy compiler) safe
// for the executor to run.
#include "runtime/plan.h"

#include <optional>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace cortiq {

size_t WeightFormatElementSize(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
      return 4;
    case WeightFormat::kBF16:
      return 2;
    case WeightFormat::kQ8_0:
    case WeightFormat::kQ4_0:
      return 0;
  }
  return 0;
}

const char* WeightFormatName(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBF16:
      return "bf16";
    case WeightFormat::kQ8_0:
      return "q8_0";
    case WeightFormat::kQ4_0:
      return "q4_0";
  }
  return "unknown";
}

std::optional<WeightFormat> WeightFormatFromName(absl::string_view name) {
  for (WeightFormat format :
       {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kQ8_0, WeightFormat::kQ4_0}) {
    if (name == WeightFormatName(format)) return format;
  }
  return std::nullopt;
}

bool IsBlockFormat(WeightFormat format) {
  return format == WeightFormat::kQ8_0 || format == WeightFormat::kQ4_0;
}

uint64_t WeightFormatBytes(WeightFormat format, const std::vector<int64_t>& shape) {
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  uint64_t elements = 1;
  for (int64_t d : shape) {
    if (d <= 0 || static_cast<uint64_t>(d) > kLimit / elements) return 0;
    elements *= static_cast<uint64_t>(d);
  }
  switch (format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
      return elements <= kLimit / 4 ? elements * WeightFormatElementSize(format) : 0;
    case WeightFormat::kQ8_0:
    case WeightFormat::kQ4_0: {
      if (shape.empty() || shape.back() % 32 != 0) return 0;
      return elements / 32 * (format == WeightFormat::kQ8_0 ? 34 : 18);
    }
  }
  return 0;
}

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kEmbedding:
      return "embedding";
    case StepKind::kLinear:
      return "linear";
    case StepKind::kRmsNorm:
      return "rms_norm";
    case StepKind::kRope:
      return "rope";
    case StepKind::kKvAppend:
      return "kv_append";
    case StepKind::kAttention:
      return "attention";
    case StepKind::kGeluTanh:
      return "gelu_tanh";
    case StepKind::kMul:
      return "mul";
    case StepKind::kAdd:
      return "add";
    case StepKind::kScale:
      return "scale";
    case StepKind::kLayerScalar:
      return "layer_scalar";
    case StepKind::kSoftcap:
      return "softcap";
    case StepKind::kLmHead:
      return "lm_head";
    case StepKind::kGeluTanhMul:
      return "gelu_tanh_mul";
    case StepKind::kResidualRmsNorm:
      return "residual_rms_norm";
  }
  return "unknown";
}

int64_t WeightEntry::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

// Largest element count a weight or buffer may have: keeps every byte size
// (elements * 4) and every sum of two byte sizes below 2^63, so the checks
// below cannot overflow.
constexpr uint64_t kMaxElements = uint64_t{1} << 58;
// Largest number of dimensions of a weight (the decoder uses 1 and 2).
constexpr size_t kMaxRank = 8;

// True if [offset, offset + size) lies inside [0, limit); overflow-safe.
bool InRange(uint64_t offset, uint64_t size, uint64_t limit) {
  return size <= limit && offset <= limit - size;
}

// Validates the steps of a plan whose weights, buffers and caches are already
// valid.
class StepValidator {
 public:
  StepValidator(const Plan& plan, size_t index)
      : plan_(plan), index_(index), step_(plan.steps[index]) {}

  absl::Status Validate();

 private:
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "step ", index_, " (", StepKindName(step_.kind), "): ", message));
  }

  // `index` names a buffer (field `field`); stores its element count in *n.
  absl::Status Buffer(int32_t index, const char* field, uint64_t* n) const {
    if (index < 0 || static_cast<size_t>(index) >= plan_.buffers.size()) {
      return Error(absl::StrCat(field, " buffer ", index, " out of range [0, ",
                                plan_.buffers.size(), ")"));
    }
    *n = plan_.buffers[index].num_elements;
    return absl::OkStatus();
  }

  // `index` must be -1 because the kind does not use field `field`.
  absl::Status Unused(int32_t index, const char* field) const {
    if (index != -1) {
      return Error(
          absl::StrCat("does not use ", field, " (must be -1), got ", index));
    }
    return absl::OkStatus();
  }

  // `index` names a weight; stores it in *w.
  absl::Status Weight(const WeightEntry** w) const {
    if (step_.weight < 0 ||
        static_cast<size_t>(step_.weight) >= plan_.weights.size()) {
      return Error(absl::StrCat("weight ", step_.weight, " out of range [0, ",
                                plan_.weights.size(), ")"));
    }
    *w = &plan_.weights[step_.weight];
    return absl::OkStatus();
  }

  // weight2 names a weight; stores it in *w.
  absl::Status Weight2(const WeightEntry** w) const {
    if (step_.weight2 < 0 ||
        static_cast<size_t>(step_.weight2) >= plan_.weights.size()) {
      return Error(absl::StrCat("weight2 ", step_.weight2, " out of range [0, ",
                                plan_.weights.size(), ")"));
    }
    *w = &plan_.weights[step_.weight2];
    return absl::OkStatus();
  }

  // `index` names a cache; stores it in *c.
  absl::Status Cache(const CacheEntry** c) const {
    if (step_.cache < 0 ||
        static_cast<size_t>(step_.cache) >= plan_.caches.size()) {
      return Error(absl::StrCat("cache ", step_.cache, " out of range [0, ",
                                plan_.caches.size(), ")"));
    }
    *c = &plan_.caches[step_.cache];
    return absl::OkStatus();
  }

  // Kernels that produce their result in a separate pass (Linear, Attention)
  // need the result disjoint from the operand.
  absl::Status Disjoint(int32_t out, int32_t in, const char* field) const {
    if (Overlap(out, in)) {
      return Error(absl::StrCat("out buffer ", out, " overlaps ", field,
                                " buffer ", in));
    }
    return absl::OkStatus();
  }

  // Element-wise kernels allow exact in-place use (same bytes) or disjoint
  // buffers only.
  absl::Status InPlaceOrDisjoint(int32_t out, int32_t in,
                                 const char* field) const {
    const BufferEntry& a = plan_.buffers[out];
    const BufferEntry& b = plan_.buffers[in];
    // Same bytes, and the same rows in the batched layout: both roots, or views of one root.
    const bool both_roots = a.view_of < 0 && b.view_of < 0;
    if (a.offset == b.offset && a.num_elements == b.num_elements &&
        (both_roots || Root(out) == Root(in)))
      return absl::OkStatus();
    if (Overlap(out, in)) {
      return Error(absl::StrCat("out buffer ", out, " partially overlaps ",
                                field, " buffer ", in));
    }
    return absl::OkStatus();
  }

  int32_t Root(int32_t x) const {
    return plan_.buffers[x].view_of >= 0 ? plan_.buffers[x].view_of : x;
  }

  // Overlap in the per-token arena or, for buffers of different roots, of their roots (in the
  // batched layout a view's rows are spread over its root's whole range).
  bool Overlap(int32_t x, int32_t y) const {
    return BytesOverlap(x, y) || (Root(x) != Root(y) && BytesOverlap(Root(x), Root(y)));
  }

  bool BytesOverlap(int32_t x, int32_t y) const {
    const BufferEntry& a = plan_.buffers[x];
    const BufferEntry& b = plan_.buffers[y];
    if (a.num_elements == 0 || b.num_elements == 0) return false;
    const uint64_t a_end = a.offset + 4 * a.num_elements;
    const uint64_t b_end = b.offset + 4 * b.num_elements;
    return a.offset < b_end && b.offset < a_end;
  }

  absl::Status Finite(double value, const char* what) const {
    if (!std::isfinite(value))
      return Error(absl::StrCat(what, " f0 = ", value, " is not finite"));
    return absl::OkStatus();
  }

  absl::Status ValidateUnary(bool in_place_ok, bool same_size = true,
                             bool uses_cache = false);
  absl::Status ValidateBinary();
  absl::Status ValidateMatVec();
  absl::Status ValidateNorm(int32_t operand, const char* field);
  absl::Status ValidateKind();

  const Plan& plan_;
  size_t index_;
  const Step& step_;
};

// in0 -> out (of equal sizes if `same_size`); no in1 (and no cache unless
// `uses_cache`).
absl::Status StepValidator::ValidateUnary(bool in_place_ok, bool same_size,
                                          bool uses_cache) {
  uint64_t n_in = 0, n_out = 0;
  CORTIQ_RETURN_IF_ERROR(Buffer(step_.in0, "in0", &n_in));
  CORTIQ_RETURN_IF_ERROR(Buffer(step_.out, "out", &n_out));
  CORTIQ_RETURN_IF_ERROR(Unused(step_.in1, "in1"));
  if (!uses_cache) CORTIQ_RETURN_IF_ERROR(Unused(step_.cache, "cache"));
  if (same_size && n_in != n_out) {
    return Error(
        absl::StrCat("in0 has ", n_in, " elements but out has ", n_out));
  }
  return in_place_ok ? InPlaceOrDisjoint(step_.out, step_.in0, "in0")
                     : Disjoint(step_.out, step_.in0, "in0");
}

// (in0, in1) -> out, all of one size, each input either exactly the result's
// bytes or disjoint from them; no weight and no cache.
absl::Status StepValidator::ValidateBinary() {
  uint64_t n0 = 0, n1 = 0, n_out = 0;
  CORTIQ_RETURN_IF_ERROR(Buffer(step_.in0, "in0", &n0));
  CORTIQ_RETURN_IF_ERROR(Buffer(step_.in1, "in1", &n1));
  CORTIQ_RETURN_IF_ERROR(Buffer(step_.out, "out", &n_out));
  CORTIQ_RETURN_IF_ERROR(Unused(step_.cache, "cache"));
  if (n0 != n1 || n0 != n_out) {
    return Error(absl::StrCat("in0/in1/out have ", n0, "/", n1, "/", n_out,
                              " elements; they must be equal"));
  }
  CORTIQ_RETURN_IF_ERROR(InPlaceOrDisjoint(step_.out, step_.in0, "in0"));
  return InPlaceOrDisjoint(step_.out, step_.in1, "in1");
}

// The RMS norm parameters of rms_norm and residual_rms_norm over the
// normalized operand `field` (a valid buffer): group size i0 > 0 dividing its
// size, gain (weight) -1 or of i0 elements, eps f0 finite and >= 0.
absl::Status StepValidator::ValidateNorm(int32_t operand, const char* field) {
  const uint64_t n = plan_.buffers[operand].num_elements;
  if (step_.i0 <= 0 || n % static_cast<uint64_t>(step_.i0) != 0) {
    return Error(absl::StrCat("group size i0 = ", step_.i0,
                              " must be positive and divide ", field, "'s ", n,
                              " elements"));
  }
  if (step_.weight != -1) {
    const WeightEntry* w = nullptr;
    CORTIQ_RETURN_IF_ERROR(Weight(&w));
    if (w->num_elements() != step_.i0) {
      return Error(absl::StrCat("gain '", w->name, "' has ", w->num_elements(),
                                " elements, expected the group size ",
                                step_.i0));
    }
  }
  if (!std::isfinite(step_.f0) || step_.f0 < 0) {
    return Error(
        absl::StrCat("eps f0 = ", step_.f0, " must be finite and >= 0"));
  }
  return absl::OkStatus();
}

// out = W in0 with W [out.n, in0.n].
absl::Status StepValidator::ValidateMatVec() {
  CORTIQ_RETURN_IF_ERROR(
      ValidateUnary(/*in_place_ok=*/false, /*same_size=*/false));
  const WeightEntry* w = nullptr;
  CORTIQ_RETURN_IF_ERROR(Weight(&w));
  const uint64_t n_in = plan_.buffers[step_.in0].num_elements;
  const uint64_t n_out = plan_.buffers[step_.out].num_elements;
  if (w->shape.size() != 2 || static_cast<uint64_t>(w->shape[0]) != n_out ||
      static_cast<uint64_t>(w->shape[1]) != n_in) {
    return Error(absl::StrCat("weight '", w->name, "' has shape [",
                              absl::StrJoin(w->shape, ", "), "], expected [",
                              n_out, ", ", n_in, "] (out, in)"));
  }
  return absl::OkStatus();
}

absl::Status StepValidator::Validate() {
  // Only residual_rms_norm has a second weight (its scalar).
  if (step_.kind != StepKind::kResidualRmsNorm) {
    CORTIQ_RETURN_IF_ERROR(Unused(step_.weight2, "weight2"));
  }
  CORTIQ_RETURN_IF_ERROR(ValidateKind());
  // Block formats are decoded only by the matrix kernels and the row gathers; gains and
  // scalars are read element by element.
  const bool reads_blocks = step_.kind == StepKind::kEmbedding ||
                            step_.kind == StepKind::kLinear || step_.kind == StepKind::kLmHead;
  for (int32_t w : {step_.weight, step_.weight2}) {
    if (w >= 0 && !reads_blocks && IsBlockFormat(plan_.weights[w].format)) {
      return Error(absl::StrCat("weight '", plan_.weights[w].name, "' is ",
                                WeightFormatName(plan_.weights[w].format),
                                ", which this step cannot read"));
    }
  }
  return absl::OkStatus();
}

absl::Status StepValidator::ValidateKind() {
  switch (step_.kind) {
    case StepKind::kEmbedding: {
      uint64_t n_out = 0;
      CORTIQ_RETURN_IF_ERROR(Buffer(step_.out, "out", &n_out));
      CORTIQ_RETURN_IF_ERROR(Unused(step_.in0, "in0"));
      CORTIQ_RETURN_IF_ERROR(Unused(step_.in1, "in1"));
      CORTIQ_RETURN_IF_ERROR(Unused(step_.cache, "cache"));
      const WeightEntry* w = nullptr;
      CORTIQ_RETURN_IF_ERROR(Weight(&w));
      if (w->shape.size() != 2 || static_cast<uint64_t>(w->shape[1]) != n_out) {
        return Error(absl::StrCat(
            "weight '", w->name, "' has shape [", absl::StrJoin(w->shape, ", "),
            "], expected [rows, ", n_out, "] (out has ", n_out, " elements)"));
      }
      return Finite(step_.f0, "scale");
    }
    case StepKind::kLinear:
    case StepKind::kLmHead:
      return ValidateMatVec();
    case StepKind::kRmsNorm:
      CORTIQ_RETURN_IF_ERROR(ValidateUnary(/*in_place_ok=*/true));
      return ValidateNorm(step_.in0, "in0");
    case StepKind::kRope: {
      CORTIQ_RETURN_IF_ERROR(ValidateUnary(/*in_place_ok=*/true));
      CORTIQ_RETURN_IF_ERROR(Unused(step_.weight, "weight"));
      const uint64_t n = plan_.buffers[step_.in0].num_elements;
      if (step_.i0 <= 0 || step_.i0 % 2 != 0 ||
          n % static_cast<uint64_t>(step_.i0) != 0) {
        return Error(absl::StrCat("head_dim i0 = ", step_.i0,
                                  " must be positive, even and divide in0's ",
                                  n, " elements"));
      }
      if (step_.i1 < 1 || step_.i1 > step_.i0 / 2) {
        return Error(absl::StrCat("rotated pairs i1 = ", step_.i1,
                                  " must be in [1, ", step_.i0 / 2, "]"));
      }
      if (!std::isfinite(step_.f0) || step_.f0 <= 0) {
        return Error(
            absl::StrCat("theta f0 = ", step_.f0, " must be finite and > 0"));
      }
      return absl::OkStatus();
    }
    case StepKind::kKvAppend: {
      uint64_t n_key = 0, n_value = 0;
      CORTIQ_RETURN_IF_ERROR(Buffer(step_.in0, "in0", &n_key));
      CORTIQ_RETURN_IF_ERROR(Buffer(step_.in1, "in1", &n_value));
      CORTIQ_RETURN_IF_ERROR(Unused(step_.out, "out"));
      CORTIQ_RETURN_IF_ERROR(Unused(step_.weight, "weight"));
      const CacheEntry* c = nullptr;
      CORTIQ_RETURN_IF_ERROR(Cache(&c));
      const uint64_t width =
          static_cast<uint64_t>(c->num_kv_heads * c->head_dim);
      if (n_key != width || n_value != width) {
        return Error(absl::StrCat(
            "key/value have ", n_key, "/", n_value, " elements, cache ",
            step_.cache, " rows have ", width, " (num_kv_heads * head_dim)"));
      }
      if (step_.logits_only) {
        return Error(
            "a cache append cannot be logits_only (the cache must not depend "
            "on "
            "whether logits are wanted)");
      }
      return absl::OkStatus();
    }
    case StepKind::kAttention: {
      CORTIQ_RETURN_IF_ERROR(ValidateUnary(/*in_place_ok=*/false,
                                           /*same_size=*/true,
                                           /*uses_cache=*/true));
      CORTIQ_RETURN_IF_ERROR(Unused(step_.weight, "weight"));
      const CacheEntry* c = nullptr;
      CORTIQ_RETURN_IF_ERROR(Cache(&c));
      const uint64_t n = plan_.buffers[step_.in0].num_elements;
      if (step_.i0 <= 0 || step_.i0 % c->num_kv_heads != 0) {
        return Error(absl::StrCat("num_heads i0 = ", step_.i0,
                                  " must be a positive multiple of cache ",
                                  step_.cache, "'s num_kv_heads ",
                                  c->num_kv_heads));
      }
      // Division, not num_heads * head_dim: i0 is untrusted and the product could wrap.
      if (static_cast<uint64_t>(step_.i0) > n ||
          n % static_cast<uint64_t>(step_.i0) != 0 ||
          n / static_cast<uint64_t>(step_.i0) !=
              static_cast<uint64_t>(c->head_dim)) {
        return Error(absl::StrCat("q/out have ", n,
                                  " elements, expected num_heads ", step_.i0,
                                  " * head_dim ", c->head_dim));
      }
      const int64_t expected_window = c->sliding ? c->window : 0;
      if (step_.i1 != expected_window) {
        return Error(absl::StrCat("window i1 = ", step_.i1, ", expected ",
                                  expected_window, " (cache ", step_.cache,
                                  " is ", c->sliding ? "sliding" : "full",
                                  ")"));
      }
      return Finite(step_.f0, "scale");
    }
    case StepKind::kGeluTanh:
      CORTIQ_RETURN_IF_ERROR(Unused(step_.weight, "weight"));
      return ValidateUnary(/*in_place_ok=*/true);
    case StepKind::kScale:
      CORTIQ_RETURN_IF_ERROR(Unused(step_.weight, "weight"));
      CORTIQ_RETURN_IF_ERROR(ValidateUnary(/*in_place_ok=*/true));
      return Finite(step_.f0, "scale");
    case StepKind::kSoftcap:
      CORTIQ_RETURN_IF_ERROR(Unused(step_.weight, "weight"));
      CORTIQ_RETURN_IF_ERROR(ValidateUnary(/*in_place_ok=*/true));
      if (!std::isfinite(step_.f0) || step_.f0 <= 0) {
        return Error(
            absl::StrCat("cap f0 = ", step_.f0, " must be finite and > 0"));
      }
      return absl::OkStatus();
    case StepKind::kLayerScalar: {
      CORTIQ_RETURN_IF_ERROR(ValidateUnary(/*in_place_ok=*/true));
      const WeightEntry* w = nullptr;
      CORTIQ_RETURN_IF_ERROR(Weight(&w));
      if (w->num_elements() != 1) {
        return Error(absl::StrCat("weight '", w->name, "' has ",
                                  w->num_elements(), " elements, expected 1"));
      }
      return absl::OkStatus();
    }
    case StepKind::kMul:
    case StepKind::kAdd:
    case StepKind::kGeluTanhMul:
      CORTIQ_RETURN_IF_ERROR(Unused(step_.weight, "weight"));
      return ValidateBinary();
    case StepKind::kResidualRmsNorm: {
      CORTIQ_RETURN_IF_ERROR(ValidateBinary());
      CORTIQ_RETURN_IF_ERROR(ValidateNorm(step_.in1, "in1"));
      if (step_.weight2 != -1) {
        const WeightEntry* w = nullptr;
        CORTIQ_RETURN_IF_ERROR(Weight2(&w));
        if (w->num_elements() != 1) {
          return Error(absl::StrCat("scalar weight2 '", w->name, "' has ",
                                    w->num_elements(),
                                    " elements, expected 1"));
        }
      }
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "step ", index_, ": unknown kind ", static_cast<uint32_t>(step_.kind)));
}

// A tap name becomes a file name (cortiq-run --dump-layers DIR/<name>.f32):
// letters, digits,
// '.', '_', '-' only, not starting with '.', so it can never leave DIR.
bool IsSafeTapName(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status ValidateModel(const ModelInfo& m) {
  const std::pair<const char*, int64_t> fields[] = {
      {"vocab_size", m.vocab_size},
      {"hidden_size", m.hidden_size},
      {"num_hidden_layers", m.num_hidden_layers},
      {"max_position_embeddings", m.max_position_embeddings}};
  for (const auto& [name, value] : fields) {
    if (value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("model ", name, " = ", value, " must be positive"));
    }
  }
  if (static_cast<uint64_t>(m.vocab_size) > kMaxElements ||
      m.vocab_size > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model vocab_size = ", m.vocab_size, " is too large"));
  }
  return absl::OkStatus();
}

absl::Status ValidateWeight(size_t i, const WeightEntry& w,
                            uint64_t section_bytes) {
  const auto error = [&](absl::string_view message) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight ", i, " '", w.name, "': ", message));
  };
  const bool known = w.format == WeightFormat::kF32 || w.format == WeightFormat::kBF16 ||
                     IsBlockFormat(w.format);
  if (!known) {
    return error(
        absl::StrCat("unknown format ", static_cast<uint32_t>(w.format)));
  }
  if (w.shape.size() > kMaxRank) {
    return error(absl::StrCat("rank ", w.shape.size(), " exceeds ", kMaxRank));
  }
  uint64_t elements = 1;
  for (int64_t d : w.shape) {
    if (d <= 0) return error(absl::StrCat("dimension ", d, " is not positive"));
    if (static_cast<uint64_t>(d) > kMaxElements / elements) {
      return error("too many elements");
    }
    elements *= static_cast<uint64_t>(d);
  }
  if (IsBlockFormat(w.format) && (w.shape.size() != 2 || w.shape[1] % 32 != 0)) {
    return error(absl::StrCat(WeightFormatName(w.format),
                              " needs a matrix whose rows are multiples of 32 weights"));
  }
  const uint64_t expected = WeightFormatBytes(w.format, w.shape);
  if (w.size_bytes != expected) {
    return error(absl::StrCat("size_bytes ", w.size_bytes, " != ", expected, " for ",
                              elements, " ", WeightFormatName(w.format), " weights"));
  }
  if (w.offset % 64 != 0) {
    return error(absl::StrCat("offset ", w.offset, " is not a multiple of 64"));
  }
  if (!InRange(w.offset, w.size_bytes, section_bytes)) {
    return error(absl::StrCat("bytes [", w.offset, ", +", w.size_bytes,
                              ") exceed the weight section of ", section_bytes,
                              " bytes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateBuffer(size_t i, const BufferEntry& b,
                            uint64_t arena_bytes) {
  if (b.offset % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer ", i, ": offset ", b.offset, " is not a multiple of 4"));
  }
  if (b.num_elements > kMaxElements ||
      !InRange(b.offset, 4 * b.num_elements, arena_bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer ", i, ": ", b.num_elements, " floats at byte ",
                     b.offset, " exceed the arena of ", arena_bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateCache(size_t i, const CacheEntry& c, int64_t num_layers) {
  const auto error = [&](absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("cache ", i, ": ", message));
  };
  // 2^20 heads or head_dim: far above any decoder (Gemma-4: 8 heads, head_dim
  // 512), and keeps num_kv_heads * head_dim * 4 bytes far from overflowing.
  constexpr int64_t kMaxDim = int64_t{1} << 20;
  if (c.num_kv_heads <= 0 || c.num_kv_heads > kMaxDim || c.head_dim <= 0 ||
      c.head_dim > kMaxDim) {
    return error(absl::StrCat("num_kv_heads ", c.num_kv_heads, " and head_dim ",
                              c.head_dim, " must be in [1, ", kMaxDim, "]"));
  }
  if (c.sliding ? c.window <= 0 : c.window != 0) {
    return error(absl::StrCat(c.sliding ? "sliding" : "full",
                              " cache has window ", c.window,
                              c.sliding ? " (must be > 0)" : " (must be 0)"));
  }
  if (c.layer < 0 || c.layer >= num_layers) {
    return error(
        absl::StrCat("layer ", c.layer, " out of range [0, ", num_layers, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePlan(const Plan& plan, uint64_t weight_section_bytes) {
  CORTIQ_RETURN_IF_ERROR(ValidateModel(plan.model));
  // Indices are int32 in steps and taps.
  constexpr size_t kMaxEntries = std::numeric_limits<int32_t>::max();
  if (plan.weights.size() > kMaxEntries || plan.buffers.size() > kMaxEntries ||
      plan.caches.size() > kMaxEntries) {
    return absl::InvalidArgumentError("too many weights, buffers or caches");
  }
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    CORTIQ_RETURN_IF_ERROR(
        ValidateWeight(i, plan.weights[i], weight_section_bytes));
  }
  // The session allocates the arena in one piece: bound it before any buffer is checked against
  // it (a huge arena_bytes would make every buffer "fit" and the allocation size wrap).
  const uint64_t arena_limit = std::min<uint64_t>(
      kMaxArenaBytes, std::numeric_limits<size_t>::max());
  if (plan.arena_bytes > arena_limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("arena_bytes = ", plan.arena_bytes, " exceeds the limit of ", arena_limit,
                     " bytes"));
  }
  if (plan.max_batch < 1 || plan.max_batch > kMaxBatch ||
      plan.arena_bytes > arena_limit / static_cast<uint64_t>(plan.max_batch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_batch = ", plan.max_batch, " must be in [1, ", kMaxBatch,
        "] with max_batch * arena_bytes (", plan.arena_bytes, ") <= ", arena_limit));
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferEntry& b = plan.buffers[i];
    CORTIQ_RETURN_IF_ERROR(ValidateBuffer(i, b, plan.arena_bytes));
    if (b.view_of == -1) continue;
    if (b.view_of < 0 || static_cast<size_t>(b.view_of) >= i ||
        plan.buffers[b.view_of].view_of != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer ", i, ": view_of ", b.view_of, " is not an earlier root buffer"));
    }
    const BufferEntry& root = plan.buffers[b.view_of];
    if (b.offset < root.offset ||
        b.offset + 4 * b.num_elements > root.offset + 4 * root.num_elements) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer ", i, ": bytes [", b.offset, ", +", 4 * b.num_elements,
          ") are not inside those of buffer ", b.view_of, " it is a view of"));
    }
  }
  for (size_t i = 0; i < plan.caches.size(); ++i) {
    CORTIQ_RETURN_IF_ERROR(
        ValidateCache(i, plan.caches[i], plan.model.num_hidden_layers));
  }
  std::vector<bool> appended(plan.caches.size(), false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    CORTIQ_RETURN_IF_ERROR(StepValidator(plan, i).Validate());
    const Step& step = plan.steps[i];
    if (step.kind == StepKind::kKvAppend) appended[step.cache] = true;
    if (step.kind == StepKind::kAttention && !appended[step.cache]) {
      return absl::InvalidArgumentError(
          absl::StrCat("step ", i, " (attention): reads cache ", step.cache,
                       " before any kv_append step writes it"));
    }
  }
  absl::flat_hash_set<std::string> tap_names;
  for (size_t i = 0; i < plan.taps.size(); ++i) {
    const Tap& tap = plan.taps[i];
    if (!IsSafeTapName(tap.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tap ", i, ": name '", tap.name,
          "' must be 1-255 of [A-Za-z0-9._-], not starting with '.'"));
    }
    if (!tap_names.insert(tap.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("tap ", i, ": duplicate name '", tap.name, "'"));
    }
    if (tap.buffer < 0 ||
        static_cast<size_t>(tap.buffer) >= plan.buffers.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tap ", i, " '", tap.name, "': buffer ", tap.buffer,
                       " out of range [0, ", plan.buffers.size(), ")"));
    }
  }
  if (plan.logits_buffer < 0 ||
      static_cast<size_t>(plan.logits_buffer) >= plan.buffers.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits_buffer ", plan.logits_buffer, " out of range [0, ",
                     plan.buffers.size(), ")"));
  }
  const uint64_t logits_n = plan.buffers[plan.logits_buffer].num_elements;
  if (logits_n != static_cast<uint64_t>(plan.model.vocab_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits_buffer ", plan.logits_buffer, " has ", logits_n,
                     " elements, expected vocab_size ", plan.model.vocab_size));
  }
  return absl::OkStatus();
}

}  // namespace cortiq
