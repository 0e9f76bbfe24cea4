// Tests of runtime/kv_cache.cc: ring and full row mapping, visible rows, the
// ctx-size clamp of sliding rings, appends, and allocation failures.
#include "runtime/kv_cache.h"

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
