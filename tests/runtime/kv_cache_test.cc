// Tests of runtime/kv_cache.cc: ring and full row mapping, visible rows, the
// ctx-size clamp of sliding rings, appends, allocation failures, and the binary16 conversions of
// f16 caches against an independent computation in double.
#include "runtime/kv_cache.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

CacheEntry Entry(bool sliding, int64_t window) {
  CacheEntry e;
  e.layer = 3;
  e.sliding = sliding;
  e.window = window;
  e.num_kv_heads = 2;
  e.head_dim = 4;
  return e;
}

TEST(KvCacheTest, FullCacheHasOneRowPerPosition) {
  absl::StatusOr<KvCache> cache = KvCache::Create(Entry(false, 0), 10);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->rows(), 10);
  EXPECT_EQ(cache->row_width(), 8);
  for (int64_t p = 0; p < 10; ++p) {
    EXPECT_EQ(cache->RowOf(p), p);
    EXPECT_EQ(cache->VisibleRows(p), p + 1);
  }
}

TEST(KvCacheTest, SlidingCacheIsARingOfWindowRows) {
  absl::StatusOr<KvCache> cache = KvCache::Create(Entry(true, 3), 100);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->rows(), 3);
  const int64_t expected_rows[] = {0, 1, 2, 0, 1, 2, 0};
  const int64_t expected_visible[] = {1, 2, 3, 3, 3, 3, 3};
  for (int64_t p = 0; p < 7; ++p) {
    EXPECT_EQ(cache->RowOf(p), expected_rows[p]) << p;
    EXPECT_EQ(cache->VisibleRows(p), expected_visible[p]) << p;
  }
}

// With batches of 4: a ring of 3 + 4 - 1 = 6 rows. When a batch of positions 6..9 has been
// appended (rows 0..3), position 6 still finds positions 4 and 5 (rows 4, 5) before it.
TEST(KvCacheTest, BatchedSlidingRingKeepsTheWindowBeforeTheBatch) {
  absl::StatusOr<KvCache> cache = KvCache::Create(Entry(true, 3), 100, /*max_batch=*/4);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->rows(), 6);
  for (int p = 0; p < 10; ++p) {
    std::vector<float> k(8, static_cast<float>(p)), v(8, static_cast<float>(-p));
    cache->Append(p, k.data(), v.data());
  }
  for (int64_t p = 6; p < 10; ++p) {
    EXPECT_EQ(cache->VisibleRows(p), 3);
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t row = (cache->FirstVisibleRow(p) + i) % cache->rows();
      EXPECT_EQ(cache->keys()[row * 8], static_cast<float>(p - 2 + i)) << p << " " << i;
    }
  }
  EXPECT_EQ(cache->FirstVisibleRow(1), 0);  // positions 0, 1
  EXPECT_EQ(cache->VisibleRows(1), 2);
}

TEST(KvCacheTest, SlidingRingIsClampedToTheContext) {
  absl::StatusOr<KvCache> cache = KvCache::Create(Entry(true, 512), 5);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->rows(), 5);
  for (int64_t p = 0; p < 5; ++p) {
    EXPECT_EQ(cache->RowOf(p), p);
    EXPECT_EQ(cache->VisibleRows(p), p + 1);
    EXPECT_LE(cache->VisibleRows(p), cache->rows());
  }
}

TEST(KvCacheTest, AppendOverwritesTheRingRowOfThePosition) {
  absl::StatusOr<KvCache> cache = KvCache::Create(Entry(true, 2), 10);
  ASSERT_TRUE(cache.ok());
  for (int p = 0; p < 5; ++p) {
    std::vector<float> k(8, static_cast<float>(p)),
        v(8, static_cast<float>(-p));
    cache->Append(p, k.data(), v.data());
  }
  // Positions 3 (row 1) and 4 (row 0) are what is left.
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(cache->keys()[i], 4.0f);
    EXPECT_EQ(cache->values()[i], -4.0f);
    EXPECT_EQ(cache->keys()[8 + i], 3.0f);
    EXPECT_EQ(cache->values()[8 + i], -3.0f);
  }
}

TEST(KvCacheTest, HugeCacheFailsCleanly) {
  CacheEntry e = Entry(false, 0);
  e.num_kv_heads = 1 << 20;
  e.head_dim = 1 << 20;
  absl::StatusOr<KvCache> cache = KvCache::Create(e, int64_t{1} << 40);
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(cache.status().message()),
              HasSubstr("cannot allocate the KV cache of layer 3"));
}

TEST(KvCacheTest, OverflowingRowWidthFailsCleanly) {
  // 2^40 * 2^40 wraps int64 to 0: the cache was "allocated" with one float and every Append
  // wrote past it.
  CacheEntry e = Entry(false, 0);
  e.num_kv_heads = int64_t{1} << 40;
  e.head_dim = int64_t{1} << 40;
  absl::StatusOr<KvCache> cache = KvCache::Create(e, 8);
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(cache.status().message()),
              HasSubstr("cannot allocate the KV cache of layer 3"));
  // rows * width past 2^64 (each factor fits).
  e.num_kv_heads = int64_t{1} << 31;
  e.head_dim = int64_t{1} << 31;
  EXPECT_EQ(KvCache::Create(e, int64_t{1} << 40).status().code(),
            absl::StatusCode::kResourceExhausted);
  // Non-positive dimensions (an unvalidated entry).
  e.num_kv_heads = -2;
  e.head_dim = -4;
  EXPECT_EQ(KvCache::Create(e, 8).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(KvCacheTest, AllocateFloatsZeroes) {
  absl::StatusOr<FloatArray> a = AllocateFloats(1000, "test");
  ASSERT_TRUE(a.ok());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ((*a)[i], 0.0f);
  EXPECT_EQ(AllocateFloats(uint64_t{1} << 62, "test").status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace cortiq

namespace cortiq {
namespace {

// The value of binary16 bits h computed in double from the format's definition.
double HalfValue(uint16_t h) {
  const int sign = h >> 15 ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0x1f) {
    return mant ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  }
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(KvCacheTest, F32FromF16IsExactForEveryHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = HalfValue(static_cast<uint16_t>(h));
    const float got = F32FromF16(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << h;
    }
  }
}

// F16FromF32 gives the nearest half (ties to an even mantissa, 65520 and beyond to inf) for every
// half, the midpoints between neighbours and points just off them, and pseudo-random floats.
TEST(KvCacheTest, F16FromF32RoundsToNearestEven) {
  const auto check = [](float f) {
    const uint16_t h = F16FromF32(f);
    const double x = f;
    const double got = HalfValue(h);
    ASSERT_FALSE(std::isnan(got)) << f;
    if (std::fabs(x) >= 65520.0) {
      ASSERT_TRUE(std::isinf(got) && (got > 0) == (x > 0)) << f;
      return;
    }
    // No finite half is nearer; at a tie the mantissa is even.
    const double err = std::fabs(got - x);
    for (int d : {-1, 1}) {
      const uint16_t n = static_cast<uint16_t>(h + d);
      if ((h & 0x7fff) == 0 && d < 0) continue;  // no neighbour below zero in magnitude order
      const double other = HalfValue(n);
      if (std::isnan(other) || std::isinf(other)) continue;
      if (std::signbit(other) != std::signbit(got) && other != 0) continue;
      ASSERT_LE(err, std::fabs(other - x)) << f << " -> " << h << " vs " << n;
      if (err == std::fabs(other - x)) ASSERT_EQ(h & 1, 0) << "tie " << f;
    }
  };
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    for (float sign : {1.0f, -1.0f}) {
      const double v = HalfValue(static_cast<uint16_t>(h)) * sign;
      const double next = HalfValue(static_cast<uint16_t>(h + 1)) * sign;
      check(static_cast<float>(v));
      if (h + 1 < 0x7c00) {
        const float mid = static_cast<float>((v + next) / 2);  // exact in f32
        check(mid);
        check(std::nextafter(mid, 0.0f));
        check(std::nextafter(mid, 2.0f * mid));
      }
    }
  }
  uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1664525u + 1013904223u;
    float f;
    std::memcpy(&f, &x, sizeof(f));
    if (std::isnan(f)) continue;
    check(f);
  }
  EXPECT_EQ(F16FromF32(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(F16FromF32(-65520.0f), 0xfc00);
  EXPECT_EQ(F16FromF32(65519.0f), 0x7bff);
  EXPECT_TRUE(std::isnan(F32FromF16(F16FromF32(std::nanf("")))));
  EXPECT_EQ(F16FromF32(-0.0f), 0x8000);
}

TEST(KvCacheTest, F16CacheStoresRoundedRowsInHalfTheBytes) {
  absl::StatusOr<KvCache> cache = KvCache::Create(Entry(false, 0), 5, 1, KvType::kF16);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->type(), KvType::kF16);
  EXPECT_EQ(cache->row_bytes(), 8u * 2);
  EXPECT_EQ(cache->keys(), nullptr);  // not f32
  std::vector<float> k(8), v(8);
  for (int i = 0; i < 8; ++i) {
    k[i] = 0.1f * static_cast<float>(i) - 0.3f;
    v[i] = 1000.3f * static_cast<float>(i);
  }
  cache->Append(3, k.data(), v.data());
  const uint16_t* keys = reinterpret_cast<const uint16_t*>(cache->key_bytes()) + 3 * 8;
  const uint16_t* values = reinterpret_cast<const uint16_t*>(cache->value_bytes()) + 3 * 8;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(keys[i], F16FromF32(k[i]));
    EXPECT_EQ(values[i], F16FromF32(v[i]));
    EXPECT_LE(std::fabs(F32FromF16(keys[i]) - k[i]), std::ldexp(std::fabs(k[i]), -11));
  }
  EXPECT_EQ(KvTypeName(KvType::kF16), std::string("f16"));
  EXPECT_EQ(KvTypeFromName("f32"), KvType::kF32);
  EXPECT_FALSE(KvTypeFromName("bf16").has_value());
}

}  // namespace
}  // namespace cortiq
