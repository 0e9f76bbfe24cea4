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

const char* KvTypeName(KvType type) {
  switch (type) {
    case KvType::kF32:
      return "f32";
    case KvType::kF16:
      return "f16";
  }
  return "unknown";
}

std::optional<KvType> KvTypeFromName(absl::string_view name) {
  for (KvType type : {KvType::kF32, KvType::kF16}) {
    if (name == KvTypeName(type)) return type;
  }
  return std::nullopt;
}

size_t KvTypeBytes(KvType type) { return type == KvType::kF16 ? 2 : 4; }

uint16_t F16FromF32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf, NaN (quiet, keeping the top payload bits)
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {
    // Below 2^-14: a subnormal f16, m * 2^-24; round abs / 2^-24 to nearest even.
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25: rounds to 0
    const uint32_t exp = abs >> 23;                             // 102 .. 112
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;        // 24 bits
    const uint32_t shift = 126 - exp;                           // 14 .. 24
    uint32_t m = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even (a carry
  // into the exponent is the correct result).
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float F32FromF16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: mant * 2^-24, exact in f32.
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    std::memcpy(&bits, &v, sizeof(bits));
    bits |= sign;
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

absl::StatusOr<KvCache> KvCache::Create(const CacheEntry& entry, int64_t ctx_size,
                                        int64_t max_batch, KvType type) {
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
  cache.type_ = type;
  // f16 elements two to a float (n is a product of positive ints; + 1 covers an odd count).
  const uint64_t floats = type == KvType::kF16 ? n / 2 + 1 : n;
  CORTIQ_ASSIGN_OR_RETURN(cache.keys_, AllocateFloats(floats, what.c_str()));
  CORTIQ_ASSIGN_OR_RETURN(cache.values_, AllocateFloats(floats, what.c_str()));
  return cache;
}

void KvCache::Append(int64_t position, const float* key, const float* value) {
  const size_t row = static_cast<size_t>(RowOf(position));
  if (type_ == KvType::kF32) {
    const size_t offset = row * static_cast<size_t>(row_width_);
    const size_t bytes = static_cast<size_t>(row_width_) * sizeof(float);
    std::memcpy(keys_.get() + offset, key, bytes);
    std::memcpy(values_.get() + offset, value, bytes);
    return;
  }
  uint16_t* k = reinterpret_cast<uint16_t*>(mutable_key_bytes() + row * row_bytes());
  uint16_t* v = reinterpret_cast<uint16_t*>(mutable_value_bytes() + row * row_bytes());
  for (int64_t i = 0; i < row_width_; ++i) {
    k[i] = F16FromF32(key[i]);
    v[i] = F16FromF32(value[i]);
  }
}

}  // namespace cortiq
