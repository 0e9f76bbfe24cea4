// Tests of the arena allocator and buffer planner on small synthetic graphs with tiny
// alignments (after ggml's tests/test-alloc.cpp): reuse after the last reader, in-place
// takeover, views, pinning, alignment, best fit with merging, and no overlap of live buffers.
#include "passes/buffer_allocator.h"

#include <random>

#include "gtest/gtest.h"

namespace cortiq {
namespace {

TEST(ArenaAllocatorTest, AlignsAndGrows) {
  ArenaAllocator arena(16);
  EXPECT_EQ(arena.Allocate(1), 0u);
  EXPECT_EQ(arena.Allocate(17), 16u);
  EXPECT_EQ(arena.Allocate(16), 48u);
  EXPECT_EQ(arena.size(), 64u);
  EXPECT_EQ(arena.live_bytes(), 64u);
}

TEST(ArenaAllocatorTest, BestFitPrefersTheSmallestBlockThatFits) {
  ArenaAllocator arena(8);
  uint64_t a = arena.Allocate(64);   // [0, 64)
  uint64_t b = arena.Allocate(8);    // [64, 72)
  uint64_t c = arena.Allocate(16);   // [72, 88)
  uint64_t d = arena.Allocate(8);    // [88, 96)
  arena.Free(a, 64);
  arena.Free(c, 16);
  EXPECT_EQ(arena.Allocate(16), c);  // the 16-byte hole, not the 64-byte one
  EXPECT_EQ(arena.Allocate(24), a);  // only the big hole fits
  EXPECT_EQ(arena.size(), 96u);
  (void)b;
  (void)d;
}

TEST(ArenaAllocatorTest, FreeMergesNeighbours) {
  ArenaAllocator arena(8);
  uint64_t a = arena.Allocate(8), b = arena.Allocate(8), c = arena.Allocate(8);
  arena.Allocate(8);
  arena.Free(a, 8);
  arena.Free(c, 8);
  EXPECT_EQ(arena.free_blocks().size(), 2u);
  arena.Free(b, 8);
  ASSERT_EQ(arena.free_blocks().size(), 1u);
  EXPECT_EQ(arena.free_blocks().begin()->first, 0u);
  EXPECT_EQ(arena.free_blocks().begin()->second, 24u);
  EXPECT_EQ(arena.Allocate(24), 0u);
}

TEST(ArenaAllocatorTest, GrowsIntoAFreeBlockAtTheEnd) {
  ArenaAllocator arena(8);
  arena.Allocate(8);
  uint64_t b = arena.Allocate(8);
  arena.Free(b, 8);
  EXPECT_EQ(arena.Allocate(32), 8u);  // extends the trailing hole instead of leaving it
  EXPECT_EQ(arena.size(), 40u);
}

// A chain a -> b -> c -> d of equal sizes, nothing in place: two buffers suffice.
TEST(PlanArenaTest, ChainReusesFreedBuffers) {
  std::vector<BufferRequest> v(4);
  for (int i = 0; i < 4; ++i) {
    v[i].bytes = 10;
    v[i].def = i;
    if (i < 3) v[i].uses = {i + 1};
  }
  v[3].pinned = true;
  BufferPlan plan = PlanArena(v, 16);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 16u);  // a is still read while b is written
  EXPECT_EQ(plan.offsets[2], 0u);   // a died at step 1
  EXPECT_EQ(plan.offsets[3], 16u);
  EXPECT_EQ(plan.arena_bytes, 32u);
  EXPECT_EQ(plan.total_bytes, 64u);
  EXPECT_EQ(plan.in_place, 0);
}

TEST(PlanArenaTest, InPlaceWhenTheOperandDiesHereWithOneReader) {
  std::vector<BufferRequest> v(3);
  v[0] = {.bytes = 32, .def = 0, .uses = {1}};
  v[1] = {.bytes = 32, .def = 1, .uses = {2}, .in_place_of = {0}};
  v[2] = {.bytes = 32, .def = 2, .pinned = true, .in_place_of = {1}};
  BufferPlan plan = PlanArena(v, 8);
  EXPECT_EQ(plan.offsets[1], plan.offsets[0]);
  EXPECT_EQ(plan.offsets[2], plan.offsets[0]);
  EXPECT_EQ(plan.arena_bytes, 32u);
  EXPECT_EQ(plan.in_place, 2);
}

TEST(PlanArenaTest, NoInPlaceWhenTheOperandHasAnotherReaderOrIsPinnedOrDiffers) {
  std::vector<BufferRequest> v(4);
  v[0] = {.bytes = 32, .def = 0, .uses = {1, 3}};       // read again at step 3
  v[1] = {.bytes = 32, .def = 1, .uses = {2}, .in_place_of = {0}};
  v[2] = {.bytes = 64, .def = 2, .uses = {3}, .in_place_of = {1}};  // other size
  v[3] = {.bytes = 32, .def = 3, .pinned = true, .in_place_of = {0}};
  BufferPlan plan = PlanArena(v, 8);
  EXPECT_NE(plan.offsets[1], plan.offsets[0]);
  EXPECT_NE(plan.offsets[2], plan.offsets[1]);
  EXPECT_EQ(plan.in_place, 0);
}

TEST(PlanArenaTest, ViewsKeepTheirParentAlive) {
  // p [64 bytes] -> slices s0 = p[0:32], s1 = p[32:64]; s1 is read at step 5.
  std::vector<BufferRequest> v(5);
  v[0] = {.bytes = 64, .def = 0};
  v[1] = {.def = 1, .uses = {2}, .view_of = 0, .view_offset = 0};
  v[2] = {.def = 2, .uses = {3}, .view_of = 0, .view_offset = 32};
  v[3] = {.bytes = 64, .def = 3, .uses = {4}};
  v[4] = {.bytes = 64, .def = 4, .pinned = true};
  v[2].uses = {5};
  BufferPlan plan = PlanArena(v, 8);
  EXPECT_EQ(plan.offsets[1], plan.offsets[0]);
  EXPECT_EQ(plan.offsets[2], plan.offsets[0] + 32);
  // p is alive until step 5, so neither later value may take its bytes.
  EXPECT_NE(plan.offsets[3], plan.offsets[0]);
  EXPECT_NE(plan.offsets[4], plan.offsets[0]);
}

TEST(PlanArenaTest, PinnedViewPinsItsParent) {
  std::vector<BufferRequest> v(3);
  v[0] = {.bytes = 16, .def = 0};
  v[1] = {.def = 1, .pinned = true, .view_of = 0};  // a tap on v0
  v[2] = {.bytes = 16, .def = 2, .pinned = true};
  BufferPlan plan = PlanArena(v, 16);
  EXPECT_NE(plan.offsets[2], plan.offsets[0]);
}

// Random DAGs: no two values whose lifetimes overlap share bytes, unless one took over the
// other in place at the step where the first one dies; every offset is aligned.
TEST(PlanArenaTest, RandomGraphsNeverOverlapLiveBuffers) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 40);
    std::vector<BufferRequest> v(n);
    for (int i = 0; i < n; ++i) {
      v[i].def = i;
      v[i].bytes = 1 + rng() % 200;
      if (i > 0 && rng() % 5 == 0) {
        v[i].view_of = static_cast<int32_t>(rng() % i);
        while (v[v[i].view_of].view_of >= 0) v[i].view_of = v[v[i].view_of].view_of;
        v[i].bytes = 0;
        continue;
      }
      int operands = static_cast<int>(rng() % 3);
      for (int k = 0; k < operands && i > 0; ++k) {
        int32_t src = static_cast<int32_t>(rng() % i);
        v[src].uses.push_back(i);
        if (rng() % 2) v[i].in_place_of.push_back(src);
      }
    }
    v[n - 1].pinned = v[n - 1].view_of < 0;
    const uint64_t alignment = 8;
    BufferPlan plan = PlanArena(v, alignment);
    auto root = [&](int x) { return v[x].view_of >= 0 ? v[x].view_of : x; };
    std::vector<int32_t> last(n);
    for (int i = 0; i < n; ++i) last[i] = v[i].def;
    for (int i = 0; i < n; ++i)
      for (int32_t u : v[i].uses) last[root(i)] = std::max(last[root(i)], u);
    for (int i = 0; i < n; ++i) if (v[i].pinned) last[root(i)] = INT32_MAX;
    for (int a = 0; a < n; ++a) {
      if (v[a].view_of >= 0) continue;
      ASSERT_EQ(plan.offsets[a] % alignment, 0u);
      ASSERT_LE(plan.offsets[a] + v[a].bytes, plan.arena_bytes);
      for (int b = a + 1; b < n; ++b) {
        if (v[b].view_of >= 0) continue;
        const bool overlap_bytes = plan.offsets[a] < plan.offsets[b] + v[b].bytes &&
                                   plan.offsets[b] < plan.offsets[a] + v[a].bytes;
        if (!overlap_bytes) continue;
        // b is defined after a: a must be dead before b's step, or b took a over in place
        // at a's last (and only) read.
        const bool in_place = plan.offsets[a] == plan.offsets[b] && last[a] == v[b].def &&
                              std::count(v[b].in_place_of.begin(), v[b].in_place_of.end(), a);
        ASSERT_TRUE(last[a] < v[b].def || in_place)
            << "trial " << trial << ": values " << a << " and " << b << " overlap";
      }
    }
  }
}

}  // namespace
}  // namespace cortiq
