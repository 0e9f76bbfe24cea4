// Tests of runtime/thread_pool.cc: every thread index runs exactly once per
// Run, the caller is thread 0, and the pool survives many back-to-back runs.
#include "runtime/thread_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cortiq {
namespace {

struct Counts {
  std::vector<std::atomic<int>> per_thread;
  std::thread::id caller;
  std::atomic<bool> thread0_on_caller{false};
  explicit Counts(int n) : per_thread(static_cast<size_t>(n)) {}
};

void Count(void* context, int t) {
  Counts& c = *static_cast<Counts*>(context);
  c.per_thread[static_cast<size_t>(t)].fetch_add(1);
  if (t == 0 && std::this_thread::get_id() == c.caller)
    c.thread0_on_caller = true;
}

TEST(ThreadPoolTest, RunsEveryIndexOncePerRun) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    Counts counts(threads);
    counts.caller = std::this_thread::get_id();
    constexpr int kRuns = 500;
    for (int r = 0; r < kRuns; ++r) pool.Run(&Count, &counts);
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(counts.per_thread[t].load(), kRuns) << t;
    EXPECT_TRUE(counts.thread0_on_caller);
  }
}

TEST(ThreadPoolTest, NonPositiveCountMeansOneThread) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.num_threads(), 1);
  Counts counts(1);
  counts.caller = std::this_thread::get_id();
  pool.Run(&Count, &counts);
  EXPECT_EQ(counts.per_thread[0].load(), 1);
}

}  // namespace
}  // namespace cortiq
