// Fork/join cost of the session's ThreadPool (runtime/thread_pool.h) against OpenMP, the
// alternative the runtime could have used. Decode runs ~600 matrix-vector steps per E4B token,
// each one fork/join, so a few microseconds per Run are a few percent of a token.
//
//   build/bin/cortiq-thread-pool-benchmark
//
// BM_PoolRun: ThreadPool::Run of a task that only touches a per-thread counter, back to back
// (the workers are still spinning from the previous Run: the decode case). BM_PoolRunAfterIdle:
// the same after 2 ms of idleness (the workers have gone to sleep: the cost of a wake-up).
// BM_OpenMP: an empty `#pragma omp parallel` region of the same thread count (libgomp).
#include <atomic>
#include <chrono>
#include <thread>

#include "benchmark/benchmark.h"
#include "runtime/thread_pool.h"

namespace cortiq {
namespace {

struct Counters {
  alignas(64) std::atomic<uint64_t> count[8][8] = {};
};

void Touch(void* context, int thread_index) {
  static_cast<Counters*>(context)->count[thread_index][0].fetch_add(1, std::memory_order_relaxed);
}

void BM_PoolRun(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  Counters counters;
  for (auto _ : state) pool.Run(&Touch, &counters);
}
BENCHMARK(BM_PoolRun)->Arg(2)->UseRealTime();

void BM_PoolRunAfterIdle(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  Counters counters;
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    state.ResumeTiming();
    pool.Run(&Touch, &counters);
  }
}
BENCHMARK(BM_PoolRunAfterIdle)->Arg(2)->UseRealTime()->Iterations(300);

#ifdef _OPENMP
void BM_OpenMP(benchmark::State& state) {
  Counters counters;
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
#pragma omp parallel num_threads(threads)
    Touch(&counters, 0);
  }
}
BENCHMARK(BM_OpenMP)->Arg(2)->UseRealTime();
#endif

}  // namespace
}  // namespace cortiq

BENCHMARK_MAIN();
