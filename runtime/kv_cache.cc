// KvCache storage: allocation and row appends (layout in runtime/kv_cache.h).
#include "runtime/kv_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/status_macros.h"

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

absl::StatusOr<KvCache> KvCache::Create(const CacheEntry& entry,
                                        int64_t ctx_size) {
  KvCache cache;
  cache.sliding_ = entry.sliding;
  cache.window_ = entry.window;
  cache.rows_ = entry.sliding ? std::min(entry.window, ctx_size) : ctx_size;
  cache.row_width_ = entry.num_kv_heads * entry.head_dim;
  const uint64_t rows = static_cast<uint64_t>(cache.rows_);
  const uint64_t width = static_cast<uint64_t>(cache.row_width_);
  const uint64_t n = width != 0 && rows > (uint64_t{1} << 58) / width
                         ? ~uint64_t{0}
                         : rows * width;
  const std::string what = absl::StrCat("the KV cache of layer ", entry.layer);
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
