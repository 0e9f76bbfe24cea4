// KvCache: the key/value storage of one plan cache (CacheEntry) for one
// session, either a ring of `window` rows (sliding attention) or one row per
// context position (full attention).
#ifndef CORTIQ_RUNTIME_KV_CACHE_H_
#define CORTIQ_RUNTIME_KV_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/plan.h"

namespace cortiq {

// Element type of the cached keys and values (SessionOptions::kv_type). Values are part of the
// saved-state format.
enum class KvType : uint32_t {
  kF32 = 0,  // the keys and values as computed (f32): exact
  kF16 = 1,  // IEEE binary16, rounded to nearest even on append: half the bytes attention reads;
             // each stored element within 2^-11 relative of its f32 value (normal range
             // 2^-14 .. 65504; smaller values within 2^-25 absolute, larger ones become inf)
};
// "f32" / "f16" ("unknown" for another value); KvTypeFromName is its inverse.
const char* KvTypeName(KvType type);
std::optional<KvType> KvTypeFromName(absl::string_view name);
// Bytes per element: 4 or 2.
size_t KvTypeBytes(KvType type);
// IEEE binary16 bits of `f`, rounded to nearest even (overflow to +-inf, NaN stays NaN).
uint16_t F16FromF32(float f);
// The f32 value of binary16 bits `h` (exact).
float F32FromF16(uint16_t h);

// Frees memory from std::calloc.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
// f32 array from std::calloc (zeroed; large ones come lazily as zero pages from
// the kernel).
using FloatArray = std::unique_ptr<float[], FreeDeleter>;

// Allocates `n` zeroed floats (n >= 1). Errors: ResourceExhausted naming `what`
// and the size.
absl::StatusOr<FloatArray> AllocateFloats(uint64_t n, const char* what);

// Keys and values, each [rows, row_width] f32,
// row_width = num_kv_heads * head_dim:
//   full cache:    rows = ctx_size; position p lives in row p;
//   sliding cache: rows = min(window + max_batch - 1, ctx_size), a ring; p lives in row
//                  p % rows. A batch of up to max_batch positions is appended before any of
//                  its queries runs, and its first query still needs the window - 1
//                  positions before it: hence window - 1 + max_batch rows.
// A query at position p attends to VisibleRows(p) positions, the last of them p: p + 1 for
// full caches, min(p + 1, window) for sliding ones (spec §3.3 step 4: positions
// max(0, p - W + 1) .. p). They are stored from FirstVisibleRow(p) on, wrapping at rows()
// (ops::AttentionRing reads them in that order, oldest first). Rows beyond what has been
// appended are never visible, so the storage needs no clearing when a session restarts at
// position 0.
class KvCache {
 public:
  // Allocates the storage for `entry` (validated by ValidatePlan), a context
  // of `ctx_size` >= 1 positions and batches of up to `max_batch` >= 1 positions.
  // Errors: ResourceExhausted if a dimension is not positive, the size (rows *
  // num_kv_heads * head_dim floats) overflows, or the allocation fails.
  // `type`: the element type of the storage (KvType).
  static absl::StatusOr<KvCache> Create(const CacheEntry& entry, int64_t ctx_size,
                                        int64_t max_batch = 1, KvType type = KvType::kF32);

  // Rows of storage a cache of `entry` gets for `ctx_size` positions and batches of
  // `max_batch` (the rule in the class comment); 0 if max_batch < 1 or the sum overflows.
  static int64_t RowsFor(const CacheEntry& entry, int64_t ctx_size, int64_t max_batch);

  // Floats per row: num_kv_heads * head_dim.
  int64_t row_width() const { return row_width_; }
  // Rows of storage (see the class comment).
  int64_t rows() const { return rows_; }
  // Storage row of `position` (0 <= position < ctx_size).
  int64_t RowOf(int64_t position) const {
    return sliding_ ? position % rows_ : position;
  }
  // Number of positions a query at `position` attends to (<= rows()).
  int64_t VisibleRows(int64_t position) const {
    return sliding_ && position + 1 > window_ ? window_ : position + 1;
  }
  // Storage row of the oldest of them.
  int64_t FirstVisibleRow(int64_t position) const {
    return RowOf(position + 1 - VisibleRows(position));
  }
  // Stores row_width() floats of `key` and `value` in the row of `position` (rounded to f16
  // for KvType::kF16).
  void Append(int64_t position, const float* key, const float* value);

  KvType type() const { return type_; }
  // Bytes of one row: row_width() * KvTypeBytes(type()).
  size_t row_bytes() const { return static_cast<size_t>(row_width_) * KvTypeBytes(type_); }
  // [rows, row_width] keys / values in type()'s elements.
  const uint8_t* key_bytes() const { return reinterpret_cast<const uint8_t*>(keys_.get()); }
  const uint8_t* value_bytes() const { return reinterpret_cast<const uint8_t*>(values_.get()); }
  uint8_t* mutable_key_bytes() { return reinterpret_cast<uint8_t*>(keys_.get()); }
  uint8_t* mutable_value_bytes() { return reinterpret_cast<uint8_t*>(values_.get()); }
  // The same storage as f32 ([rows, row_width]); for KvType::kF32 caches only (null otherwise).
  const float* keys() const { return type_ == KvType::kF32 ? keys_.get() : nullptr; }
  const float* values() const { return type_ == KvType::kF32 ? values_.get() : nullptr; }
  // Writable views of the same storage (inspection and tests); kF32 only.
  float* mutable_keys() { return type_ == KvType::kF32 ? keys_.get() : nullptr; }
  float* mutable_values() { return type_ == KvType::kF32 ? values_.get() : nullptr; }

 private:
  bool sliding_ = false;
  int64_t window_ = 0;
  int64_t rows_ = 0;
  int64_t row_width_ = 0;
  KvType type_ = KvType::kF32;
  FloatArray keys_;  // f32 storage; for kF16, half as many floats hold the binary16 elements
  FloatArray values_;
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_KV_CACHE_H_
