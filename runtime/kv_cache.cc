// KvCache storage: allocation and row appends (layout in runtime/kv_cache.h).
#include "runtime/kv_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace cortiq {

absl::StatusOr<FloatArray> AllocateFloats(uint64_t n, const char* what) {
  // 2^60 bytes: no machine has it, and n * 4 stays far from overflowing size_t.
  constexpr uint64_t kMaxFloats = uint64_t{1} << 58;
  void* p = n <= kMaxFloats
                ? std::calloc(static_cast<size_t>(std::max<uint64_t>(n, 1)),
                              sizeof(float))
                : nullptr;
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", what, ": ", n, " floats (",
                     n * 4.0 / (1 << 20), " MiB)"));
  }
  return FloatArray(static_cast<float*>(p));
}

int64_t KvCache::RowsFor(const CacheEntry& entry, int64_t ctx_size, int64_t max_batch) {
  if (!entry.sliding) return ctx_size;
  int64_t ring = 0;
  if (max_batch < 1 || __builtin_add_overflow(entry.window, max_batch - 1, &ring)) return 0;
  return std::min(ring, ctx_size);
}

absl::StatusOr<KvCache> KvCache::Create(const CacheEntry& entry, int64_t ctx_size,
                                        int64_t max_batch) {
  const std::string what = absl::StrCat("the KV cache of layer ", entry.layer);
  KvCache cache;
  cache.sliding_ = entry.sliding;
  cache.window_ = entry.window;
  cache.rows_ = RowsFor(entry, ctx_size, max_batch);
  // Every factor is checked and every product overflow-checked: a wrapped size would allocate a
  // small block that Append then overruns. ValidatePlan's bounds make these unreachable for
  // validated plans; this function must not rely on them.
  int64_t width = 0;
  uint64_t n = 0;
  if (cache.rows_ < 1 || entry.num_kv_heads < 1 || entry.head_dim < 1 ||
      __builtin_mul_overflow(entry.num_kv_heads, entry.head_dim, &width) ||
      __builtin_mul_overflow(static_cast<uint64_t>(cache.rows_),
                             static_cast<uint64_t>(width), &n)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", what, ": ", cache.rows_, " rows of ", entry.num_kv_heads,
        " heads x ", entry.head_dim, " floats is not a valid size"));
  }
  cache.row_width_ = width;
  CORTIQ_ASSIGN_OR_RETURN(cache.keys_, AllocateFloats(n, what.c_str()));
  CORTIQ_ASSIGN_OR_RETURN(cache.values_, AllocateFloats(n, what.c_str()));
  return cache;
}

void KvCache::Append(int64_t position, const float* key, const float* value) {
  const size_t offset = static_cast<size_t>(RowOf(position) * row_width_);
  const size_t bytes = static_cast<size_t>(row_width_) * sizeof(float);
  std::memcpy(keys_.get() + offset, key, bytes);
  std::memcpy(values_.get() + offset, value, bytes);
}

}  // namespace cortiq
