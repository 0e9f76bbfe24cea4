// ThreadPool: a small persistent pool of worker threads that runs one function
// on every thread (the caller included) and waits for all of them; used by the
// Session to split the rows of matrix-vector products. (Highway 1.0.3 has no
// hwy::ThreadPool.)
//
// fork(): a child process has only the thread that forked, so the pool's workers do not exist
// there. A pthread_atfork child handler counts forks; the first Run in a child notices the
// count changed and starts new workers (the parent's are abandoned, never joined), so a pool
// created before fork() works in the child (Python multiprocessing hosts) instead of waiting
// forever for workers that are gone.
#ifndef CORTIQ_RUNTIME_THREAD_POOL_H_
#define CORTIQ_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace cortiq {

class ThreadPool {
 public:
  // A task: called as fn(context, thread_index) with thread_index in [0,
  // num_threads()).
  using Task = void (*)(void* context, int thread_index);

  // Starts num_threads - 1 workers (num_threads >= 1; 1 starts none and Run
  // calls fn inline).
  explicit ThreadPool(int num_threads);
  // Stops and joins the workers (in a child of fork() whose pool never ran there, the parent's
  // workers are only abandoned: they do not exist to be joined).
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(context, t) once for every t in [0, num_threads()) — t = 0 on the
  // calling thread, the others on the workers — and returns when all calls have
  // returned. Allocates nothing (except, once in a child of fork(), the new
  // workers). Not reentrant: one Run at a time per pool (one pool per Session).
  // fork() while another thread is inside Run is not supported (the child's copy
  // of that Run never completes).
  void Run(Task fn, void* context);

 private:
  // Starts workers 1 .. num_threads - 1, each waiting for a generation after the current one.
  void StartWorkers();
  // In a child of fork(): abandons the parent's workers and re-initializes the mutex and
  // condition variables (a worker may have held the mutex or waited on one at the fork).
  void AbandonAfterFork();
  // AbandonAfterFork, then starts new workers.
  void RestartAfterFork();
  void WorkerLoop(int thread_index, uint64_t seen);

  const int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;                 // guards the sleeps on the condition variables
  std::condition_variable start_;    // idle workers sleep here (after spinning)
  std::condition_variable done_;     // Run sleeps here for pending_ == 0 (after spinning)
  std::atomic<uint64_t> generation_{0};  // incremented per Run; publishes task_ / context_
  std::atomic<int> pending_{0};          // workers still running the current task
  std::atomic<bool> stop_{false};
  Task task_ = nullptr;
  void* context_ = nullptr;
  uint64_t forks_seen_ = 0;  // the process's fork count when the workers were started
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_THREAD_POOL_H_
