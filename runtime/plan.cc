// Plan helpers (format/kind names, weight sizes) and ValidatePlan, the check
// that makes an untrusted plan (from a hostile file or a buggy compiler) safe
// for the executor to run.
#include "runtime/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "runtime/plan_fields.h"
#include "runtime/weight_hash.h"

namespace cortiq {

namespace {

// ggml-common.h's block sizes (QK4_0 = QK8_0 = ... = 32, QK_K = 256) and type sizes.
struct WeightFormatInfo {
  const char* name;
  size_t block_elements;
  size_t block_bytes;
};

const WeightFormatInfo* FindWeightFormat(WeightFormat format) {
  static constexpr WeightFormatInfo kInfo[] = {
      {"f32", 1, 4},     {"bf16", 1, 2},    {"q8_0", 32, 34},   {"q4_0", 32, 18},
      {"f16", 1, 2},     {"q4_1", 32, 20},  {"q5_0", 32, 22},   {"q5_1", 32, 24},
      {"q2_k", 256, 84}, {"q3_k", 256, 110}, {"q4_k", 256, 144}, {"q5_k", 256, 176},
      {"q6_k", 256, 210}, {"iq4_nl", 32, 18}, {"iq4_xs", 256, 136}, {"q4_0x16", 512, 288},
      {"q8_0x16", 512, 544}, {"q4_kx16", 512, 296}, {"q5_kx16", 512, 360},
  };
  static_assert(std::size(kInfo) == std::size(kAllWeightFormats));
  const auto index = static_cast<uint32_t>(format);
  return index < std::size(kInfo) ? &kInfo[index] : nullptr;
}

}  // namespace

size_t WeightFormatElementSize(WeightFormat format) {
  const WeightFormatInfo* info = FindWeightFormat(format);
  return info != nullptr && info->block_elements == 1 ? info->block_bytes : 0;
}

size_t WeightFormatBlockElements(WeightFormat format) {
  const WeightFormatInfo* info = FindWeightFormat(format);
  return info != nullptr ? info->block_elements : 0;
}

size_t WeightFormatBlockBytes(WeightFormat format) {
  const WeightFormatInfo* info = FindWeightFormat(format);
  return info != nullptr ? info->block_bytes : 0;
}

const char* StepRowsName(StepRows rows) {
  switch (rows) {
    case StepRows::kAll:
      return "all";
    case StepRows::kLogits:
      return "logits";
  }
  return "unknown";
}

const char* WeightFormatName(WeightFormat format) {
  const WeightFormatInfo* info = FindWeightFormat(format);
  return info != nullptr ? info->name : "unknown";
}

std::optional<WeightFormat> WeightFormatFromName(absl::string_view name) {
  for (WeightFormat format : kAllWeightFormats) {
    if (name == WeightFormatName(format)) return format;
  }
  return std::nullopt;
}

bool IsBlockFormat(WeightFormat format) { return WeightFormatBlockElements(format) > 1; }

uint64_t WeightFormatBytes(WeightFormat format, const std::vector<int64_t>& shape) {
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  const WeightFormatInfo* info = FindWeightFormat(format);
  if (info == nullptr) return 0;
  uint64_t elements = 1;
  for (int64_t d : shape) {
    if (d <= 0 || static_cast<uint64_t>(d) > kLimit / elements) return 0;
    elements *= static_cast<uint64_t>(d);
  }
  if (info->block_elements > 1 &&
      (shape.empty() || static_cast<uint64_t>(shape.back()) % info->block_elements != 0)) {
    return 0;
  }
  // block_bytes / block_elements <= 4: no overflow below 2^62 * 4.
  const uint64_t blocks = elements / info->block_elements;
  return blocks <= kLimit / info->block_bytes ? blocks * info->block_bytes : 0;
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

// The root of buffer `x`: itself, or the buffer it is a view of.
int32_t RootBuffer(const Plan& plan, int32_t x) {
  return plan.buffers[x].view_of >= 0 ? plan.buffers[x].view_of : x;
}

bool BytesOverlap(const Plan& plan, int32_t x, int32_t y) {
  const BufferEntry& a = plan.buffers[x];
  const BufferEntry& b = plan.buffers[y];
  if (a.num_elements == 0 || b.num_elements == 0) return false;
  const uint64_t a_end = a.offset + 4 * a.num_elements;
  const uint64_t b_end = b.offset + 4 * b.num_elements;
  return a.offset < b_end && b.offset < a_end;
}

// Overlap in the batched layout (plan.h): in the per-token arena or, for buffers of different
// roots, of their roots (a view's rows are spread over its root's whole range).
bool BatchOverlap(const Plan& plan, int32_t x, int32_t y) {
  const int32_t rx = RootBuffer(plan, x), ry = RootBuffer(plan, y);
  return BytesOverlap(plan, x, y) || (rx != ry && BytesOverlap(plan, rx, ry));
}

// Validates one step of a plan whose weights, buffers and caches are already valid, by its
// kind's entry in the step-kind table.
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

  // Buffer slot `field` (in0, in1, out) with role `role` (nullptr: unused, must be -1); stores
  // its element count in *n (0 if unused).
  absl::Status BufferSlot(int32_t index, const char* field, const char* role, uint64_t* n) const {
    *n = 0;
    if (role == nullptr) return Unused(index, field);
    if (index < 0 || static_cast<size_t>(index) >= plan_.buffers.size()) {
      return Error(absl::StrCat(field, " (", role, ") buffer ", index, " out of range [0, ",
                                plan_.buffers.size(), ")"));
    }
    *n = plan_.buffers[index].num_elements;
    return absl::OkStatus();
  }

  // Weight slot `field` with role `role` (nullptr: unused), -1 allowed if `optional`; stores the
  // entry (or null) in *w.
  absl::Status WeightSlot(int32_t index, const char* field, const char* role, bool optional,
                          const WeightEntry** w) const {
    *w = nullptr;
    if (role == nullptr) return Unused(index, field);
    if (optional && index == -1) return absl::OkStatus();
    if (index < 0 || static_cast<size_t>(index) >= plan_.weights.size()) {
      return Error(absl::StrCat(field, " (", role, ") weight ", index, " out of range [0, ",
                                plan_.weights.size(), ")"));
    }
    *w = &plan_.weights[index];
    if (IsBlockFormat((*w)->format) && !info_->reads_blocks) {
      return Error(absl::StrCat(field, " '", (*w)->name, "' is ", WeightFormatName((*w)->format),
                                ", which this step cannot read"));
    }
    return absl::OkStatus();
  }

  // `index` must be -1 because the kind does not use field `field`.
  absl::Status Unused(int32_t index, const char* field) const {
    if (index != -1) {
      return Error(absl::StrCat("does not use ", field, " (must be -1), got ", index));
    }
    return absl::OkStatus();
  }

  // The parameters the kind does not carry must be 0.
  absl::Status UnusedParams() const;

  // Results of kDisjoint kinds are written in a separate pass over the operand: disjoint from it.
  absl::Status Disjoint(int32_t out, int32_t in, const char* field) const {
    if (Overlap(out, in)) {
      return Error(absl::StrCat("out buffer ", out, " overlaps ", field, " buffer ", in));
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

  int32_t Root(int32_t x) const { return RootBuffer(plan_, x); }
  bool Overlap(int32_t x, int32_t y) const { return BatchOverlap(plan_, x, y); }

  const Plan& plan_;
  size_t index_;
  const Step& step_;
  const StepKindInfo* info_ = nullptr;
};

absl::Status StepValidator::UnusedParams() const {
  absl::Status status;
  VisitStep(step_, [&](StepField id, const char* name, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
      if (status.ok() && IsStepParameter(id) && !StepUsesField(*info_, id) && value != 0) {
        status = Error(absl::StrCat("does not use ", name, " (must be 0), got ", value));
      }
    }
  });
  return status;
}

absl::Status StepValidator::Validate() {
  info_ = FindStepKind(step_.kind);
  if (info_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "step ", index_, ": unknown kind ", static_cast<uint32_t>(step_.kind)));
  }
  const StepKindInfo& k = *info_;
  uint64_t n_in0 = 0, n_in1 = 0, n_out = 0;
  CORTIQ_RETURN_IF_ERROR(BufferSlot(step_.in0, "in0", k.in0, &n_in0));
  CORTIQ_RETURN_IF_ERROR(BufferSlot(step_.in1, "in1", k.in1, &n_in1));
  CORTIQ_RETURN_IF_ERROR(BufferSlot(step_.out, "out", k.out, &n_out));
  const WeightEntry* weight = nullptr;
  const WeightEntry* scalar = nullptr;
  CORTIQ_RETURN_IF_ERROR(WeightSlot(step_.weight, "weight", k.weight, k.weight_optional, &weight));
  CORTIQ_RETURN_IF_ERROR(
      WeightSlot(step_.scalar, "scalar", k.scalar ? "scalar" : nullptr, true, &scalar));
  const CacheEntry* cache = nullptr;
  if (!k.cache) {
    CORTIQ_RETURN_IF_ERROR(Unused(step_.cache, "cache"));
  } else if (step_.cache < 0 || static_cast<size_t>(step_.cache) >= plan_.caches.size()) {
    return Error(absl::StrCat("cache ", step_.cache, " out of range [0, ", plan_.caches.size(),
                              ")"));
  } else {
    cache = &plan_.caches[step_.cache];
  }
  CORTIQ_RETURN_IF_ERROR(UnusedParams());
  if (k.same_size && ((k.in0 != nullptr && n_in0 != n_out) || (k.in1 != nullptr && n_in1 != n_out))) {
    return Error(k.in1 != nullptr
                     ? absl::StrCat("in0/in1/out have ", n_in0, "/", n_in1, "/", n_out,
                                    " elements; they must be equal")
                     : absl::StrCat("in0 has ", n_in0, " elements but out has ", n_out));
  }
  if (k.out != nullptr) {
    for (const auto& [in, field, role] : {std::make_tuple(step_.in0, "in0", k.in0),
                                          std::make_tuple(step_.in1, "in1", k.in1)}) {
      if (role == nullptr) continue;
      CORTIQ_RETURN_IF_ERROR(k.aliasing == StepAliasing::kDisjoint
                                 ? Disjoint(step_.out, in, field)
                                 : InPlaceOrDisjoint(step_.out, in, field));
    }
  }
  if (step_.rows != StepRows::kAll && step_.rows != StepRows::kLogits) {
    return Error(absl::StrCat("unknown rows ", static_cast<uint32_t>(step_.rows)));
  }
  if ((step_.logits_only || step_.rows == StepRows::kLogits) && !k.may_be_logits_only) {
    return Error(absl::StrCat("a ", k.name, " step cannot be logits_only or run on the logits "
                              "rows only (the caches must not depend on whether logits are "
                              "wanted)"));
  }
  if (step_.logits_only && step_.rows != StepRows::kLogits) {
    return Error("a logits_only step must have rows = logits");
  }
  if (k.check == nullptr) return absl::OkStatus();
  return k.check(StepCheck{plan_, step_, index_, n_out, n_in0, n_in1, weight, scalar, cache});
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
  const bool known = WeightFormatBlockElements(w.format) != 0;
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
  const int64_t block = static_cast<int64_t>(WeightFormatBlockElements(w.format));
  if (IsBlockFormat(w.format) && (w.shape.size() != 2 || w.shape[1] % block != 0)) {
    return error(absl::StrCat(WeightFormatName(w.format),
                              " needs a matrix whose rows are multiples of ", block, " weights"));
  }
  const uint64_t expected = WeightFormatBytes(w.format, w.shape);
  if (w.size_bytes != expected) {
    return error(absl::StrCat("size_bytes ", w.size_bytes, " != ", expected, " for ",
                              elements, " ", WeightFormatName(w.format), " weights"));
  }
  if (w.offset % kWeightAlignment != 0) {
    return error(
        absl::StrCat("offset ", w.offset, " is not a multiple of ", kWeightAlignment));
  }
  if (!InRange(w.offset, w.size_bytes, section_bytes)) {
    return error(absl::StrCat("bytes [", w.offset, ", +", w.size_bytes,
                              ") exceed the weight section of ", section_bytes,
                              " bytes"));
  }
  return absl::OkStatus();
}

// The chunk hashes (runtime/weight_hash.h): none without a chunk size, else exactly one per
// chunk of every weight (the weights' sizes are validated already).
absl::Status ValidateWeightHashes(const Plan& plan) {
  const uint64_t chunk = plan.weight_hash_chunk_bytes;
  if (chunk != 0 && (chunk < kMinWeightHashChunkBytes || chunk > kMaxWeightHashChunkBytes ||
                     (chunk & (chunk - 1)) != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "weight_hash_chunk_bytes = ", chunk, " is not a power of two in [",
        kMinWeightHashChunkBytes, ", ", kMaxWeightHashChunkBytes, "] (or 0: no hashes)"));
  }
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const WeightEntry& w = plan.weights[i];
    const uint64_t expected = chunk == 0 ? 0 : WeightHashChunks(w.size_bytes, chunk);
    if (w.xxh3_64.size() != expected) {
      return absl::InvalidArgumentError(absl::StrCat(
          "weight ", i, " '", w.name, "': ", w.xxh3_64.size(), " chunk hashes, expected ",
          expected, chunk == 0 ? " (weight_hash_chunk_bytes is 0)"
                               : absl::StrCat(" for ", w.size_bytes, " bytes in chunks of ",
                                              chunk)));
    }
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
  CORTIQ_RETURN_IF_ERROR(ValidateWeightHashes(plan));
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
  // No all-rows step reads rows computed for the logits rows only: the last step writing bytes
  // of each buffer it reads must run on all rows too.
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i];
    if (step.rows != StepRows::kAll) continue;
    for (const auto& [in, field] : {std::make_pair(step.in0, "in0"), std::make_pair(step.in1, "in1")}) {
      if (in < 0) continue;
      for (size_t j = i; j-- > 0;) {
        const Step& writer = plan.steps[j];
        if (writer.out < 0 || !BatchOverlap(plan, writer.out, in)) continue;
        if (writer.rows != StepRows::kAll) {
          return absl::InvalidArgumentError(absl::StrCat(
              "step ", i, " (", StepKindName(step.kind), "): runs on all rows but its ", field,
              " buffer ", in, " was last written by step ", j, " (", StepKindName(writer.kind),
              "), which runs on the logits rows only"));
        }
        break;
      }
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
