// ThreadPool: a small persistent pool of worker threads that runs one function
// on every thread (the caller included) and waits for all of them; used by the
// Session to split the rows of matrix-vector products. (Highway 1.0.3 has no
// hwy::ThreadPool.)
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
  // Stops and joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(context, t) once for every t in [0, num_threads()) — t = 0 on the
  // calling thread, the others on the workers — and returns when all calls have
  // returned. Allocates nothing. Not reentrant: one Run at a time per pool (one
  // pool per Session).
  void Run(Task fn, void* context);

 private:
  void WorkerLoop(int thread_index);

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
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_THREAD_POOL_H_
