// ThreadPool: a generation counter per Run; workers spin on it for a short while after each
// task (so back-to-back Runs — the ~600 matrix-vector steps of a decode token — start without
// a futex wake-up), then block on a condition variable, so an idle pool burns no CPU.
// Measured with bench/thread_pool_benchmark.cc (bench/README.md).
#include "runtime/thread_pool.h"

#include <pthread.h>

#include <chrono>
#include <mutex>
#include <new>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cortiq {
namespace {

// How long a worker (or the caller waiting for the workers) spins before blocking: longer than
// the serial steps between two matrix-vector steps of a token (norms, RoPE, attention: tens of
// microseconds), far shorter than the gap between user calls.
constexpr std::chrono::microseconds kSpinFor(200);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Spins until pred() or kSpinFor has passed; returns pred(). Yields the core every 64 polls:
// on a machine with more runnable threads than cores the thread being waited for may be the
// one that needs it (on an idle core sched_yield returns at once).
template <class Pred>
bool SpinUntil(const Pred& pred) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinFor;
  for (int i = 0;; ++i) {
    if (pred()) return true;
    CpuRelax();
    if ((i & 63) == 63) {
      if (std::chrono::steady_clock::now() > deadline) return pred();
      std::this_thread::yield();
    }
  }
}

// Forks of this process (counted in the child, where only the forking thread runs, so the
// relaxed increment races with nothing). Pools compare it with the count they started at.
std::atomic<uint64_t> g_forks{0};

void CountFork() { g_forks.fetch_add(1, std::memory_order_relaxed); }

void RegisterForkHandler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &CountFork); });
}

// The workers of pools that lived through a fork(): in the child their threads do not exist, so
// they can be neither joined (that waits forever) nor destroyed (a joinable std::thread's
// destructor terminates). They are kept here, reachable, for the life of the process.
void Abandon(std::vector<std::thread>* workers) {
  static auto* abandoned = new std::vector<std::thread>();
  for (std::thread& worker : *workers) abandoned->push_back(std::move(worker));
  workers->clear();
}

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads < 1 ? 1 : num_threads) {
  if (num_threads_ > 1) RegisterForkHandler();
  StartWorkers();
}

void ThreadPool::StartWorkers() {
  forks_seen_ = g_forks.load(std::memory_order_relaxed);
  const uint64_t current = generation_.load(std::memory_order_relaxed);
  workers_.reserve(static_cast<size_t>(num_threads_ - 1));
  for (int t = 1; t < num_threads_; ++t) {
    workers_.emplace_back([this, t, current] { WorkerLoop(t, current); });
  }
}

void ThreadPool::AbandonAfterFork() {
  Abandon(&workers_);
  // Only this thread exists: nothing else can touch the pool. A worker may have held the mutex
  // or been waiting on a condition variable at the fork, and that state belongs to threads that
  // are gone: reused, the mutex would stay locked, and destroying the condition variable would
  // wait forever for its departed waiter (pthread_cond_destroy). So they are re-initialized.
  new (&mutex_) std::mutex();
  new (&start_) std::condition_variable();
  new (&done_) std::condition_variable();
  pending_.store(0, std::memory_order_relaxed);
}

void ThreadPool::RestartAfterFork() {
  AbandonAfterFork();
  StartWorkers();
}

ThreadPool::~ThreadPool() {
  if (forks_seen_ != g_forks.load(std::memory_order_relaxed)) {
    AbandonAfterFork();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  start_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::Run(Task fn, void* context) {
  if (forks_seen_ != g_forks.load(std::memory_order_relaxed)) RestartAfterFork();
  if (workers_.empty()) {
    fn(context, 0);
    return;
  }
  task_ = fn;
  context_ = context;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  // Publishes task_, context_ and pending_ to the workers (acquire loads of generation_).
  generation_.fetch_add(1, std::memory_order_release);
  {
    // Workers that went to sleep check generation_ under the mutex: taking it here means each
    // of them either sees the new generation or is waiting and gets the notification.
    std::lock_guard<std::mutex> lock(mutex_);
  }
  start_.notify_all();
  fn(context, 0);
  if (SpinUntil([this] { return pending_.load(std::memory_order_acquire) == 0; })) return;
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
}

void ThreadPool::WorkerLoop(int thread_index, uint64_t seen) {
  for (;;) {
    const auto ready = [&] {
      return stop_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    if (!SpinUntil(ready)) {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, ready);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    task_(context_, thread_index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // The caller may have stopped spinning: wake it (it re-checks pending_ under the mutex).
      { std::lock_guard<std::mutex> lock(mutex_); }
      done_.notify_one();
    }
  }
}

}  // namespace cortiq
