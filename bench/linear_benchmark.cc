// cortiq-linear-benchmark: Google Benchmark micro-benchmarks of y = W x (ops/linear.h) for each
// weight format (f32, bf16, f16 and every llama.cpp block format) at the Gemma-4 E4B shapes and the E2B
// ones E4B's do not cover, on one thread (linear/...) and
// on two (linear_2t/..., rows split as the session splits them), with the weights streamed from
// DRAM, against the machine's read bandwidth measured in the same process.
// How to run it and the numbers of this machine: bench/README.md.
//
// Each benchmark computes all rows of y = W x per iteration. Counters:
//   bytes_per_second  weight bytes read per call (SetBytesProcessed), per second
//   GB/s              the same in 1e9 bytes/s (wall time around the timed loop)
//   %bw               GB/s as a percentage of read_GB/s
//   read_GB/s         the read bandwidth over the same weight copies with as many threads
//                     (the widest vector loads, cortiq-bench's probe), measured right before the
//                     timed loop
//                     (WeightReadBandwidth); with --footprint_mb=0, the one measured at start
//   weight_MB         weight bytes of one W (1e6 bytes)
//   copies            copies of W rotated through (see below)
//
// DRAM, not cache: W is allocated `copies` times, copies = ceil(256 MiB / weight bytes) (1 for
// W >= 256 MiB), each 64-byte aligned (as in the artifact), and iteration i reads copy
// i % copies. The footprint is 8x the 32 MiB LLC of this machine, so every call reads its W from
// DRAM, as decode does. x (in floats) and y (out floats) stay in cache. --footprint_mb=N changes
// the 256 MiB; --footprint_mb=0 keeps one copy, so the shapes whose W fits in L2/L3 run from
// cache (the kernels' compute ceiling).
//
// Memory: weights are allocated lazily by the first call of a benchmark and kept (Google
// Benchmark calls each benchmark function several times while it picks the iteration count)
// until a benchmark with another format or shape starts, so at most one set of weights is live.
// The largest is the f32 LM head, 262144 x 2560 x 4 B = 2.68 GB; exclude it with
// --benchmark_filter=-f32/262144 if memory is short.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>


#include "bench/bench_weights.h"
#include "benchmark/benchmark.h"
#include "hwy/base.h"
#include "hwy/targets.h"
#include "ops/cpu_features.h"
#include "ops/linear.h"
#include "ops/linear_vnni.h"
#include "ops/quantize.h"
#include "tools/cortiq-bench/read_stream.h"

namespace cortiq {
namespace {

using namespace bench;  // NOLINT: the shared test-weight helpers (bench/bench_weights.h)

// ---------------------------------------------------------------------------------------------
// Buffers.

// Bytes of W copies per benchmark (--footprint_mb; 0 = one copy, cache-resident if W fits).
size_t g_min_footprint = size_t{256} << 20;
constexpr size_t kReadBandwidthBytes = size_t{1} << 30;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// ---------------------------------------------------------------------------------------------
// Kernels by format.

// Rows [begin, end) of y = W x in format f.
void LinearRange(Format f, const uint8_t* w, const float* x, float* y, size_t rows, size_t cols,
                 size_t begin, size_t end) {
  Info(f).linear(w, x, y, rows, cols, begin, end);
}

void Linear(Format f, const uint8_t* w, const float* x, float* y, size_t rows, size_t cols) {
  LinearRange(f, w, x, y, rows, cols, 0, rows);
}

// ---------------------------------------------------------------------------------------------
// The weights of the running benchmark (at most one set is alive).

std::unique_ptr<uint64_t[]> g_read_buffer;  // of read_bandwidth; freed by GetWeights

struct Weights {
  Format format = Format::kF32;
  size_t rows = 0, cols = 0;
  size_t bytes = 0;   // one copy of W
  size_t stride = 0;  // bytes between copies (bytes rounded up to kAlign)
  size_t copies = 0;
  AlignedBytes data;
  double read_bandwidth[3] = {0, 0, 0};  // bytes/s over `data`, by threads (WeightReadBandwidth)
};

Weights& CurrentWeights() {
  static Weights* weights = new Weights();
  return *weights;
}

void ReleaseWeights() {
  Weights& w = CurrentWeights();
  w.data.reset();
  w.rows = w.cols = w.bytes = w.stride = w.copies = 0;
  for (double& b : w.read_bandwidth) b = 0;
}

Weights& GetWeights(Format format, size_t rows, size_t cols) {
  Weights& w = CurrentWeights();
  if (w.data && w.format == format && w.rows == rows && w.cols == cols) return w;
  ReleaseWeights();  // before allocating the next set
  g_read_buffer.reset();
  w.format = format;
  w.rows = rows;
  w.cols = cols;
  w.bytes = rows * RowBytes(format, cols);
  w.stride = RoundUp(w.bytes, kAlign);
  w.copies = std::max<size_t>(1, (g_min_footprint + w.bytes - 1) / w.bytes);
  w.data = AllocateBytes(w.stride * w.copies);
  // Copy 0 from random f32 rows (quantized per row as the compiler does; FillMatrix), the
  // others by memcpy: the content does not change the bytes read, and every page is touched
  // before timing.
  FillMatrix(format, rows, cols, 0x5EED0000ull + rows * 31 + cols, w.data.get());
  for (size_t k = 1; k < w.copies; ++k) {
    memcpy(w.data.get() + k * w.stride, w.data.get(), w.bytes);
  }
  return w;
}

// ---------------------------------------------------------------------------------------------
// Read bandwidth: the loop of tools/cortiq-bench/memory_bandwidth.cc (MeasureReadBandwidth),
// in process.

// Sums [begin, end) with 8 independent accumulators so the loop is bound by loads.
uint64_t SumWords(const uint64_t* begin, const uint64_t* end) {
  uint64_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const uint64_t* p = begin;
  for (; p + 8 <= end; p += 8) {
    for (int k = 0; k < 8; ++k) a[k] += p[k];
  }
  for (; p < end; ++p) a[0] += *p;
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

// One pass over `words` words with `threads` threads (each a contiguous share).
uint64_t ReadPass(const uint64_t* buffer, size_t words, int threads) {
  if (threads == 1) return SumWords(buffer, buffer + words);
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  const size_t chunk = words / static_cast<size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const uint64_t* begin = buffer + chunk * static_cast<size_t>(t);
      const uint64_t* end = t + 1 == threads ? buffer + words : begin + chunk;
      sums[static_cast<size_t>(t)] = SumWords(begin, end);
    });
  }
  for (std::thread& thread : pool) thread.join();
  uint64_t sum = 0;
  for (uint64_t s : sums) sum += s;
  return sum;
}

std::unique_ptr<uint64_t[]> TouchedWords(size_t words) {
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[words]);
  for (size_t i = 0; i < words; ++i) buffer[i] = i;  // touch every page
  return buffer;
}

// Best of `passes` passes with `threads` threads over a 1 GiB buffer, in bytes/s: the denominator
// of %bw.
double MeasureReadBandwidth(int threads, int passes) {
  const size_t words = kReadBandwidthBytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buffer = TouchedWords(words);
  double best = 0.0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(ReadPass(buffer.get(), words, threads));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(kReadBandwidthBytes) / seconds);
  }
  return best;
}

// The same with the widest loads the CPU has: cortiq-bench's probe kernel
// (tools/cortiq-bench/read_stream.h, Highway-dispatched like the kernels; 8 independent XOR
// accumulators, as ../shared/reference/membw.c), each thread a contiguous share. The scalar loop
// above is not the machine's ceiling (the vector kernels exceed it); this one is the fair
// denominator. With into_l2, every line is also prefetched into L2 ahead (XorWordsIntoL2), as
// the decode kernels read where ops::DecodePrefetchIntoL2(); the passes take both kinds in
// turn and keep the best, as cortiq-bench's probe does.
uint64_t XorWide(const uint64_t* begin, const uint64_t* end, bool into_l2) {
  const size_t words = static_cast<size_t>(end - begin);
  return into_l2 ? XorWordsIntoL2(begin, words) : XorWords(begin, words);
}

uint64_t ReadPassWide(const uint64_t* buffer, size_t words, int threads, bool into_l2) {
  if (threads == 1) return XorWide(buffer, buffer + words, into_l2);
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  const size_t chunk = words / static_cast<size_t>(threads) / 64 * 64;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const uint64_t* begin = buffer + chunk * static_cast<size_t>(t);
      const uint64_t* end = t + 1 == threads ? buffer + words : begin + chunk;
      sums[static_cast<size_t>(t)] = XorWide(begin, end, into_l2);
    });
  }
  for (std::thread& thread : pool) thread.join();
  uint64_t sum = 0;
  for (uint64_t s : sums) sum ^= s;
  return sum;
}

double MeasureReadBandwidthWide(int threads, int passes) {
  const size_t words = kReadBandwidthBytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buffer = TouchedWords(words);
  double best = 0.0;
  for (int pass = 0; pass < 2 * passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(ReadPassWide(buffer.get(), words, threads, pass % 2 == 1));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(kReadBandwidthBytes) / seconds);
  }
  return best;
}

// The read bandwidth over the benchmark's own weights (all copies, the bytes its kernel calls
// stream) with `threads` threads: best of 3 + 3 passes of the wide read loop (XorWide), measured
// once per weights and thread count, right before the benchmark's timed loop. This VM's
// bandwidth drifts by 2x within minutes (bench/README.md), so a figure measured at start is no
// fair denominator; this one is taken over the same memory seconds before the kernel runs.
// Bytes/s.
double WeightReadBandwidth(Weights& w, int threads);

// The %bw denominators of the read_bandwidth benchmarks: the faster of the two read loops with
// as many threads (measured in main(); bytes/s).
double g_read_bandwidth = 0.0;    // one thread
double g_read_bandwidth_2 = 0.0;  // two threads

// %bw of a benchmark with `threads` threads: against `bandwidth` (bytes/s; 0: the read
// bandwidth with as many threads measured at start).
void SetRateCounters(benchmark::State& state, size_t bytes_per_iteration, double seconds,
                     int threads = 1, double bandwidth = 0) {
  const double bytes = static_cast<double>(bytes_per_iteration) *
                       static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  const double gbps = seconds > 0 ? bytes / seconds / 1e9 : 0.0;
  state.counters["GB/s"] = gbps;
  if (bandwidth == 0) bandwidth = threads == 2 ? g_read_bandwidth_2 : g_read_bandwidth;
  if (bandwidth > 0) state.counters["%bw"] = 100.0 * gbps * 1e9 / bandwidth;
  state.counters["read_GB/s"] = bandwidth / 1e9;
}

double WeightReadBandwidth(Weights& w, int threads) {
  double& cached = w.read_bandwidth[threads];
  if (cached > 0) return cached;
  const size_t words = w.stride * w.copies / sizeof(uint64_t);
  const uint64_t* buffer = reinterpret_cast<const uint64_t*>(w.data.get());
  for (int pass = 0; pass < 6; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(ReadPassWide(buffer, words, threads, pass % 2 == 1));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cached = std::max(cached, static_cast<double>(words * sizeof(uint64_t)) / seconds);
  }
  return cached;
}

// ---------------------------------------------------------------------------------------------
// Benchmarks.

void BM_ReadBandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const size_t words = kReadBandwidthBytes / sizeof(uint64_t);
  if (!g_read_buffer) g_read_buffer = TouchedWords(words);
  const uint64_t* buffer = g_read_buffer.get();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    benchmark::DoNotOptimize(ReadPass(buffer, words, threads));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SetRateCounters(state, kReadBandwidthBytes, seconds, threads);
}

void BM_ReadBandwidthWide(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const size_t words = kReadBandwidthBytes / sizeof(uint64_t);
  if (!g_read_buffer) g_read_buffer = TouchedWords(words);
  const uint64_t* buffer = g_read_buffer.get();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    benchmark::DoNotOptimize(ReadPassWide(buffer, words, threads, /*into_l2=*/false));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SetRateCounters(state, kReadBandwidthBytes, seconds, threads);
}

void BM_Linear(benchmark::State& state, Format format, size_t rows, size_t cols) {
  Weights& w = GetWeights(format, rows, cols);
  const double bandwidth = g_min_footprint > 0 ? WeightReadBandwidth(w, 1) : 0.0;
  std::vector<float> x(cols), y(rows);
  Rng rng{0xC0FFEEull};
  FillUniform(rng, x.data(), cols);
  size_t k = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Linear(format, w.data.get() + k * w.stride, x.data(), y.data(), rows, cols);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
    if (++k == w.copies) k = 0;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SetRateCounters(state, w.bytes, seconds, 1, bandwidth);
  state.counters["weight_MB"] = static_cast<double>(w.bytes) / 1e6;
  state.counters["copies"] = static_cast<double>(w.copies);
}

// First row of thread t's share of `rows` rows over `threads` threads: runtime/session.cc
// SplitRow (interior boundaries rounded down to multiples of 4).
size_t SplitRow(size_t rows, int threads, int t) {
  if (t >= threads) return rows;
  const size_t begin = rows * static_cast<size_t>(t) / static_cast<size_t>(threads);
  return begin & ~size_t{3};
}

// One persistent helper thread that spins (with sched_yield) on a generation counter: a two-thread
// call costs no thread start and no futex wake-up (a condition variable, as
// runtime/thread_pool.cc uses, adds ~10-50 us per call, which would hide the kernels' speed on the
// small shapes). On a loaded machine either thread may be descheduled for a time slice (ms):
// two-thread numbers are only meaningful when the two cores are otherwise idle.
class SpinHelper {
 public:
  SpinHelper() : thread_([this] { Loop(); }) {}
  ~SpinHelper() {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }
  // Runs fn on the helper thread; Wait() returns once it has returned.
  template <class Fn>
  void Start(Fn&& fn) {
    fn_ = std::forward<Fn>(fn);
    generation_.fetch_add(1, std::memory_order_release);
  }
  void Wait() {
    const uint64_t g = generation_.load(std::memory_order_relaxed);
    while (done_.load(std::memory_order_acquire) != g) std::this_thread::yield();
  }

 private:
  void Loop() {
    uint64_t seen = 0;
    while (!stop_.load(std::memory_order_acquire)) {
      const uint64_t g = generation_.load(std::memory_order_acquire);
      if (g == seen) {
        std::this_thread::yield();  // polite when the machine is shared
        continue;
      }
      fn_();
      seen = g;
      done_.store(g, std::memory_order_release);
    }
  }

  std::function<void()> fn_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> done_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// As BM_Linear with the rows split over two threads as the session splits them (SplitRow): the
// calling thread computes [0, split), the helper [split, rows). %bw is against the two-thread
// read bandwidth.
void BM_Linear2(benchmark::State& state, Format format, size_t rows, size_t cols) {
  Weights& w = GetWeights(format, rows, cols);
  const double bandwidth = g_min_footprint > 0 ? WeightReadBandwidth(w, 2) : 0.0;
  std::vector<float> x(cols), y(rows);
  Rng rng{0xC0FFEEull};
  FillUniform(rng, x.data(), cols);
  const size_t split = SplitRow(rows, 2, 1);
  SpinHelper helper;
  size_t k = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const uint8_t* wk = w.data.get() + k * w.stride;
    helper.Start([&, wk] { LinearRange(format, wk, x.data(), y.data(), rows, cols, split, rows); });
    LinearRange(format, wk, x.data(), y.data(), rows, cols, 0, split);
    helper.Wait();
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
    if (++k == w.copies) k = 0;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SetRateCounters(state, w.bytes, seconds, /*threads=*/2, bandwidth);
  state.counters["weight_MB"] = static_cast<double>(w.bytes) / 1e6;
  state.counters["copies"] = static_cast<double>(w.copies);
}

struct Shape {
  size_t out, in;
};

// Gemma-4 E4B (hidden 2560, q 8 x 256, kv 2 x 256, MLP 10240, PLE 42 x 256 = 10752, vocab
// 262144), out x in as HF stores the weight.
constexpr Shape kE4BShapes[] = {
    {2048, 2560},    // q_proj
    {512, 2560},     // k_proj, v_proj
    {10240, 2560},   // gate_proj, up_proj
    {2560, 10240},   // down_proj
    {2560, 2048},    // o_proj
    {10752, 2560},   // per_layer_model_projection (42 layers x 256)
    {262144, 2560},  // LM head (tied embedding)
};

// Gemma-4 E2B (hidden 1536: 6 K-quant super-blocks a row, where E4B's 2560 has 10; MLP 6144,
// 12288 in the layers that share KV), the matrices whose shapes E4B's do not cover.
constexpr Shape kE2BShapes[] = {
    {2048, 1536},   // q_proj
    {256, 1536},    // k_proj, v_proj
    {6144, 1536},   // gate_proj, up_proj
    {1536, 6144},   // down_proj
    {12288, 1536},  // gate_proj, up_proj of the KV-sharing layers
    {1536, 12288},  // their down_proj
    {262144, 1536}, // LM head (tied embedding)
};

void RegisterAll() {
  benchmark::RegisterBenchmark("read_bandwidth", BM_ReadBandwidth)
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("read_bandwidth_wide", BM_ReadBandwidthWide)
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  std::vector<Shape> shapes(std::begin(kE4BShapes), std::end(kE4BShapes));
  shapes.insert(shapes.end(), std::begin(kE2BShapes), std::end(kE2BShapes));
  for (Format format : kAllFormats) {
    for (const Shape& shape : shapes) {
      const std::string name = std::string("linear/") + FormatName(format) + "/" +
                               std::to_string(shape.out) + "x" + std::to_string(shape.in);
      benchmark::RegisterBenchmark(name.c_str(), BM_Linear, format, shape.out, shape.in)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
    // Two threads, after the same format's single-thread runs (weights rebuilt per shape).
    for (const Shape& shape : shapes) {
      const std::string name = std::string("linear_2t/") + FormatName(format) + "/" +
                               std::to_string(shape.out) + "x" + std::to_string(shape.in);
      benchmark::RegisterBenchmark(name.c_str(), BM_Linear2, format, shape.out, shape.in)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

std::string DispatchedTargetName() {
  const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  return targets == 0 ? "none" : hwy::TargetName(targets & -targets);  // lowest bit = best
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // Own flag, removed from argv before the unrecognized-argument check.
  const std::string footprint_flag = "--footprint_mb=";
  // --decode_path=vnni|avx2|float: the fastest decode path the block formats
  // may take (ops/linear_vnni.h), to set the integer kernels against the f32
  // ones in one binary.
  const std::string path_flag = "--decode_path=";
  // --prefetch_into_l2=cpu|0|1: whether the decode kernels prefetch their rows into L2 whole
  // passes ahead (ops::DecodePrefetchIntoL2), to compare the two on one machine.
  const std::string streaming_flag = "--prefetch_into_l2=";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.compare(0, footprint_flag.size(), footprint_flag) == 0) {
      cortiq::g_min_footprint = std::stoull(arg.substr(footprint_flag.size())) << 20;
    } else if (arg.compare(0, path_flag.size(), path_flag) == 0) {
      const std::string path = arg.substr(path_flag.size());
      if (path == "vnni") {
        cortiq::ops::LimitDecodeLinearPathForTest(cortiq::ops::DecodeLinearPath::kVnni);
      } else if (path == "avx2") {
        cortiq::ops::LimitDecodeLinearPathForTest(cortiq::ops::DecodeLinearPath::kAvx2);
      } else if (path == "float") {
        cortiq::ops::LimitDecodeLinearPathForTest(cortiq::ops::DecodeLinearPath::kFloat);
      } else {
        std::fprintf(stderr, "--decode_path: %s is not vnni, avx2 or float\n", path.c_str());
        return 1;
      }
    } else if (arg.compare(0, streaming_flag.size(), streaming_flag) == 0) {
      const std::string streaming = arg.substr(streaming_flag.size());
      if (streaming == "cpu") {
        cortiq::ops::SetDecodePrefetchIntoL2ForTest(-1);
      } else if (streaming == "0" || streaming == "1") {
        cortiq::ops::SetDecodePrefetchIntoL2ForTest(streaming == "1" ? 1 : 0);
      } else {
        std::fprintf(stderr, "--prefetch_into_l2: %s is not cpu, 0 or 1\n", streaming.c_str());
        return 1;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const double scalar_1 = cortiq::MeasureReadBandwidth(/*threads=*/1, /*passes=*/3);
  const double scalar_2 = cortiq::MeasureReadBandwidth(/*threads=*/2, /*passes=*/3);
  const double wide_1 = cortiq::MeasureReadBandwidthWide(/*threads=*/1, /*passes=*/3);
  const double wide_2 = cortiq::MeasureReadBandwidthWide(/*threads=*/2, /*passes=*/3);
  cortiq::g_read_bandwidth = std::max(scalar_1, wide_1);
  cortiq::g_read_bandwidth_2 = std::max(scalar_2, wide_2);
  const char* wide = cortiq::XorWordsTarget();
  char bandwidth[128];
  snprintf(bandwidth, sizeof(bandwidth), "%.2f GB/s (scalar loop %.2f, %s loop %.2f)",
           cortiq::g_read_bandwidth / 1e9, scalar_1 / 1e9, wide, wide_1 / 1e9);
  benchmark::AddCustomContext("read_bandwidth_1_thread", bandwidth);
  snprintf(bandwidth, sizeof(bandwidth), "%.2f GB/s (scalar loop %.2f, %s loop %.2f)",
           cortiq::g_read_bandwidth_2 / 1e9, scalar_2 / 1e9, wide, wide_2 / 1e9);
  benchmark::AddCustomContext("read_bandwidth_2_threads", bandwidth);
  benchmark::AddCustomContext("highway_target", cortiq::DispatchedTargetName());
  benchmark::AddCustomContext("prefetch_into_l2",
                              cortiq::ops::DecodePrefetchIntoL2() ? "yes" : "no");
  benchmark::AddCustomContext("footprint_MiB", std::to_string(cortiq::g_min_footprint >> 20));
  namespace ops = cortiq::ops;
  benchmark::AddCustomContext(
      "decode_path", std::string("q4_0x16/q4_k/q5_k/q6_k: ") +
                         ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()) +
                         "; q8_0x16: " +
                         ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPathQ8_0x16()));
  cortiq::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  cortiq::ReleaseWeights();
  return 0;
}
