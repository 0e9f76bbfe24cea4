// cortiq-matmul-benchmark: Google Benchmark micro-benchmarks of Y = X W^T (ops/matmul.h) for
// each weight format (f32, bf16, f16 and every llama.cpp block format) at the Gemma-4 E4B shapes and batches of 64 and 512
// tokens (batched prefill), single thread, in GFLOP/s. How to run it and the numbers of this
// machine: bench/README.md.
//
// Each benchmark computes all rows of Y for the whole batch per iteration. Counters:
//   GFLOP/s     2 * batch * rows * cols per call, in 1e9 flops per second (wall time around the
//               timed loop)
//   weight_MB   weight bytes of W (1e6 bytes)
// linear_per_token/...: the same product as `batch` calls of the matrix-vector kernel
// (ops/linear.h), one per token row, for comparison (W is then reread once per token).
//
// Compute-bound: one copy of W (read from wherever it is: for batch >= 64 the kernels do >= 64
// flops per weight byte decoded, so DRAM bandwidth is not the limit). X and Y are [batch, cols]
// and [batch, rows] f32.

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_weights.h"
#include "benchmark/benchmark.h"
#include "hwy/base.h"
#include "hwy/targets.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/gather.h"
#include "ops/matmul_bf16_activations.h"
#include "ops/matmul_q8_activations.h"
#include "ops/quantize.h"

namespace cortiq {
namespace {

using namespace bench;  // NOLINT: the shared test-weight helpers (bench/bench_weights.h)

// ---------------------------------------------------------------------------------------------
// Kernels by format.

void MatMul(Format f, const uint8_t* w, const float* x, float* y, size_t batch, size_t rows,
            size_t cols) {
  Info(f).matmul(w, x, cols, y, rows, batch, rows, cols, 0, rows);
}

void Linear(Format f, const uint8_t* w, const float* x, float* y, size_t rows, size_t cols) {
  Info(f).linear(w, x, y, rows, cols, 0, rows);
}

// ---------------------------------------------------------------------------------------------
// The weights of the running benchmark (at most one set is alive; Google Benchmark calls each
// benchmark function several times while it picks the iteration count).

struct Weights {
  Format format = Format::kF32;
  size_t rows = 0, cols = 0;
  size_t bytes = 0;
  AlignedBytes data;
};

Weights& CurrentWeights() {
  static Weights* weights = new Weights();
  return *weights;
}

void ReleaseWeights() {
  Weights& w = CurrentWeights();
  w.data.reset();
  w.rows = w.cols = w.bytes = 0;
}

const Weights& GetWeights(Format format, size_t rows, size_t cols) {
  Weights& w = CurrentWeights();
  if (w.data && w.format == format && w.rows == rows && w.cols == cols) return w;
  ReleaseWeights();  // before allocating the next set
  w.format = format;
  w.rows = rows;
  w.cols = cols;
  w.bytes = rows * RowBytes(format, cols);
  w.data = AllocateBytes(w.bytes);
  // Random f32 rows, quantized per row as the compiler does (FillMatrix).
  FillMatrix(format, rows, cols, 0x5EED0000ull + rows * 31 + cols, w.data.get());
  return w;
}

void SetCounters(benchmark::State& state, size_t batch, size_t rows, size_t cols, double seconds,
                 size_t weight_bytes) {
  const double flops = 2.0 * static_cast<double>(batch) * static_cast<double>(rows) *
                       static_cast<double>(cols) * static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = seconds > 0 ? flops / seconds / 1e9 : 0.0;
  state.counters["weight_MB"] = static_cast<double>(weight_bytes) / 1e6;
}

// ---------------------------------------------------------------------------------------------
// Benchmarks.

// Times kernel(w, x, y) over a batch of random activations and sets the counters.
template <class Kernel>
void TimeBatch(benchmark::State& state, Format format, size_t rows, size_t cols, size_t batch,
               const Kernel& kernel) {
  const Weights& w = GetWeights(format, rows, cols);
  std::vector<float> x(batch * cols), y(batch * rows);
  Rng rng{0xC0FFEEull};
  FillUniform(rng, x.data(), x.size());
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    kernel(w.data.get(), x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SetCounters(state, batch, rows, cols, seconds, w.bytes);
}

void BM_MatMul(benchmark::State& state, Format format, size_t rows, size_t cols, size_t batch) {
  TimeBatch(state, format, rows, cols, batch, [&](const uint8_t* w, const float* x, float* y) {
    MatMul(format, w, x, y, batch, rows, cols);
  });
}

// The opt-in prefill with activations quantized to Q8_0 (ops/matmul_q8_activations.h), on the
// fastest path up to `fastest`.
void BM_MatMulQ8Activations(benchmark::State& state, Format format, size_t rows, size_t cols,
                            size_t batch, ops::Q8ActivationsPath fastest) {
  const auto kernel =
      format == Format::kQ4_0 ? ops::MatMulQ4_0Q8Activations : ops::MatMulQ8_0Q8Activations;
  ops::LimitQ8ActivationsPathForTest(fastest);
  TimeBatch(state, format, rows, cols, batch, [&](const uint8_t* w, const float* x, float* y) {
    kernel(w, x, cols, y, rows, batch, rows, cols, 0, rows);
  });
  ops::LimitQ8ActivationsPathForTest(ops::Q8ActivationsPath::kAmx);
}

// The opt-in prefill with activations rounded to bf16 (ops/matmul_bf16_activations.h), on the
// fastest path up to `fastest`.
void BM_MatMulBF16Activations(benchmark::State& state, Format format, size_t rows, size_t cols,
                              size_t batch, ops::BF16ActivationsPath fastest) {
  ops::LimitBF16ActivationsPathForTest(fastest);
  TimeBatch(state, format, rows, cols, batch, [&](const uint8_t* w, const float* x, float* y) {
    ops::MatMulBF16BF16Activations(w, x, cols, y, rows, batch, rows, cols, 0, rows);
  });
  ops::LimitBF16ActivationsPathForTest(ops::BF16ActivationsPath::kAmx);
}

// The exact BF16 product on AMX (ops/matmul_bf16_activations.h), the runtime's default there.
void BM_MatMulBF16x3(benchmark::State& state, Format format, size_t rows, size_t cols,
                     size_t batch) {
  TimeBatch(state, format, rows, cols, batch, [&](const uint8_t* w, const float* x, float* y) {
    ops::MatMulBF16x3(w, x, cols, y, rows, batch, rows, cols, 0, rows);
  });
}

// The exact block-format products on AMX (ops/matmul_bf16_activations.h: MatMulSplitAmx), the
// runtime's default there.
void DecodeQ4_0(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  ops::GatherRowQ4_0(w, cols, row, begin, count, 1.0f, out);
}
void DecodeQ5_0(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  ops::GatherRowQ5_0(w, cols, row, begin, count, 1.0f, out);
}
void DecodeQ8_0(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  ops::GatherRowQ8_0(w, cols, row, begin, count, 1.0f, out);
}
void DecodeF16(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  ops::GatherRowF16(static_cast<const hwy::float16_t*>(w), cols, row, begin, count, 1.0f, out);
}
void BM_MatMulSplitAmx(benchmark::State& state, Format format, size_t rows, size_t cols,
                       size_t batch) {
  const ops::WeightRowDecoder decode = format == Format::kQ4_0   ? DecodeQ4_0
                                       : format == Format::kQ5_0 ? DecodeQ5_0
                                       : format == Format::kF16  ? DecodeF16
                                                                 : DecodeQ8_0;
  const int terms = format == Format::kQ8_0 ? 3 : 2;
  TimeBatch(state, format, rows, cols, batch, [&](const uint8_t* w, const float* x, float* y) {
    ops::MatMulSplitAmx(decode, terms, w, x, cols, y, rows, batch, rows, cols, 0, rows);
  });
}

void BM_LinearPerToken(benchmark::State& state, Format format, size_t rows, size_t cols,
                       size_t batch) {
  TimeBatch(state, format, rows, cols, batch, [&](const uint8_t* w, const float* x, float* y) {
    for (size_t t = 0; t < batch; ++t) Linear(format, w, x + t * cols, y + t * rows, rows, cols);
  });
}

struct Shape {
  size_t out, in;
};

// Gemma-4 E4B projections, out x in as HF stores the weight: q_proj (2048 x 2560),
// gate_proj / up_proj (10240 x 2560), down_proj (2560 x 10240).
constexpr Shape kE4BShapes[] = {
    {2048, 2560},
    {10240, 2560},
    {2560, 10240},
};
constexpr size_t kBatches[] = {64, 512};

void RegisterAll() {
  for (Format format : kAllFormats) {
    for (const Shape& shape : kE4BShapes) {
      const std::string suffix = std::string(FormatName(format)) + "/" + std::to_string(shape.out) +
                                 "x" + std::to_string(shape.in);
      // PREFIX/FORMAT/OUTxIN/batch:B for each batch, timed by bm(state, format, out, in, batch,
      // extra...).
      const auto add = [&](const std::string& prefix, auto bm, auto... extra) {
        for (size_t batch : kBatches) {
          const std::string name = prefix + "/" + suffix + "/batch:" + std::to_string(batch);
          benchmark::RegisterBenchmark(name.c_str(), bm, format, shape.out, shape.in, batch,
                                       extra...)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
      };
      add("matmul", BM_MatMul);
      const bool two_or_three_terms = format == Format::kQ4_0 || format == Format::kQ8_0 ||
                                      format == Format::kQ5_0 || format == Format::kF16;
      if (two_or_three_terms && ops::BF16x3Available()) add("matmul_split_amx", BM_MatMulSplitAmx);
      if (format == Format::kBF16 && ops::BF16x3Available()) add("matmul_bf16x3", BM_MatMulBF16x3);
      // The opt-in kernels on each path this CPU has ("amx" only where it has AMX).
      if (format == Format::kQ4_0 || format == Format::kQ8_0) {
        if (ops::DispatchedQ8ActivationsPath() == ops::Q8ActivationsPath::kAmx) {
          add("matmul_q8_activations_amx", BM_MatMulQ8Activations, ops::Q8ActivationsPath::kAmx);
        }
        add("matmul_q8_activations_vnni", BM_MatMulQ8Activations, ops::Q8ActivationsPath::kVnni);
      }
      if (format == Format::kBF16) {
        if (ops::DispatchedBF16ActivationsPath() == ops::BF16ActivationsPath::kAmx) {
          add("matmul_bf16_activations_amx", BM_MatMulBF16Activations,
              ops::BF16ActivationsPath::kAmx);
        }
        add("matmul_bf16_activations_avx512bf16", BM_MatMulBF16Activations,
            ops::BF16ActivationsPath::kAvx512Bf16);
      }
      const std::string name = "linear_per_token/" + suffix + "/batch:64";
      benchmark::RegisterBenchmark(name.c_str(), BM_LinearPerToken, format, shape.out, shape.in,
                                   size_t{64})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
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
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("highway_target", cortiq::DispatchedTargetName());
  cortiq::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  cortiq::ReleaseWeights();
  return 0;
}
