// KvCache: the key/value storage of one plan cache (CacheEntry) for one
// session, either a ring of `window` rows (sliding attention) or one row per
// context position (full attention).
#ifndef CORTIQ_RUNTIME_KV_CACHE_H_
#define CORTIQ_RUNTIME_KV_CACHE_H_

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/plan.h"

namespace cortiq {

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
  static absl::StatusOr<KvCache> Create(const CacheEntry& entry, int64_t ctx_size,
                                        int64_t max_batch = 1);

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
  // Copies row_width() floats of `key` and `value` into the row of `position`.
  void Append(int64_t position, const float* key, const float* value);

  // [rows, row_width] f32 keys / values.
  const float* keys() const { return keys_.get(); }
  const float* values() const { return values_.get(); }
  // Writable views of the same storage (inspection and tests).
  float* mutable_keys() { return keys_.get(); }
  float* mutable_values() { return values_.get(); }

 private:
  bool sliding_ = false;
  int64_t window_ = 0;
  int64_t rows_ = 0;
  int64_t row_width_ = 0;
  FloatArray keys_;
  FloatArray values_;
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_KV_CACHE_H_
