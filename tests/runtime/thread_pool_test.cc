// Tests of runtime/thread_pool.cc: every thread index runs exactly once per
// Run, the caller is thread 0, the pool survives many back-to-back runs, and a
// pool created before fork() works in the child.
#include "runtime/thread_pool.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
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

// The child of fork() has only the forking thread: a pool made before the fork must start new
// workers there (it used to wait forever for the parent's). The child runs under alarm(), so a
// hang fails the test as SIGALRM instead of hanging it; it reports through its exit status.
TEST(ThreadPoolTest, WorksInAChildOfFork) {
  for (int threads : {2, 3}) {
    SCOPED_TRACE(threads);
    ThreadPool pool(threads);
    Counts before(threads);
    pool.Run(&Count, &before);  // the workers are running (or spinning) when the fork happens
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(20);
      Counts counts(threads);
      constexpr int kRuns = 200;
      for (int r = 0; r < kRuns; ++r) pool.Run(&Count, &counts);
      int code = 0;
      for (int t = 0; t < threads; ++t) code |= counts.per_thread[t].load() != kRuns;
      // A grandchild: the restarted pool survives a second fork as well.
      const pid_t grandchild = fork();
      if (grandchild == 0) {
        alarm(20);
        Counts again(threads);
        pool.Run(&Count, &again);
        int bad = 0;
        for (int t = 0; t < threads; ++t) bad |= again.per_thread[t].load() != 1;
        _exit(bad);
      }
      int status = 0;
      code |= grandchild < 0 || waitpid(grandchild, &status, 0) != grandchild ||
              !WIFEXITED(status) || WEXITSTATUS(status) != 0;
      _exit(code);  // the pool is destroyed by nobody: _exit skips destructors
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << "child killed by signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                   << " (SIGALRM = " << SIGALRM << ": it hung)";
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
    // The parent's pool is untouched by the fork.
    Counts after(threads);
    pool.Run(&Count, &after);
    for (int t = 0; t < threads; ++t) EXPECT_EQ(after.per_thread[t].load(), 1) << t;
  }
}

// A pool made before fork() and destroyed in the child without running there: the parent's
// workers are not joined (they do not exist in the child), so the destructor returns.
TEST(ThreadPoolTest, DestroyedInAChildOfFork) {
  auto pool = std::make_unique<ThreadPool>(2);
  Counts counts(2);
  pool->Run(&Count, &counts);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);
    pool.reset();
    ThreadPool fresh(2);  // and a new pool in the child works
    Counts c(2);
    fresh.Run(&Count, &c);
    _exit(c.per_thread[0].load() == 1 && c.per_thread[1].load() == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(ThreadPoolTest, DestroyedInAChildOfForkWhileItsWorkersSlept) {
  // A worker asleep on the pool's condition variable at the fork is a waiter the child's copy
  // still counts: destroying that copy waited forever for it (pthread_cond_destroy). Sleeping
  // 50 ms, far past the workers' 200 us spin, makes the workers be asleep at the fork.
  for (int round = 0; round < 3; ++round) {
    auto pool = std::make_unique<ThreadPool>(3);
    Counts counts(3);
    pool->Run(&Count, &counts);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(20);
      pool.reset();
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "round " << round << ": " << status;
  }
}

}  // namespace
}  // namespace cortiq
