// cortiq-linear-rows-benchmark: Google Benchmark micro-benchmarks of Y = X W^T over a few
// activation rows (the batched decode of EvalAcross, short prompts), for each weight format at
// the Gemma-4 E2B shapes and R = 1, 2, 4, 8, 16 rows, single thread, three ways:
//   linear_rows/...     ops/linear_rows.h (each weight block decoded once for all R rows)
//   matmul/...          ops/matmul.h (the prefill kernel: weights decoded to f32 panels)
//   linear_per_row/...  R calls of the matrix-vector kernel (ops/linear.h), W reread per row
// How to run it and the numbers of this machine: bench/README.md.
//
// Counters:
//   us_per_row   wall time per call divided by R, in microseconds (what one sequence's share of
//                a batched decode step costs in this product)
//   GB/s         weight bytes read per call, per second (1e9 bytes/s)
//   weight_MB    weight bytes of one W (1e6 bytes)
//
// DRAM, not cache, as in decode: W is allocated ceil(128 MiB / weight bytes) times and
// iteration i reads copy i % copies (the footprint is 4x this machine's LLC); X and Y stay in
// cache. --footprint_mb=0 keeps one copy (cache-resident W: the compute ceiling).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_weights.h"
#include "benchmark/benchmark.h"
#include "hwy/base.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/matmul.h"
#include "ops/quantize.h"

namespace cortiq {
namespace {

using namespace bench;  // NOLINT: the shared test-weight helpers (bench/bench_weights.h)

size_t g_min_footprint = size_t{128} << 20;

enum class Method { kLinearRows, kMatMul, kLinearPerRow };

const char* MethodName(Method m) {
  switch (m) {
    case Method::kLinearRows: return "linear_rows";
    case Method::kMatMul: return "matmul";
    case Method::kLinearPerRow: return "linear_per_row";
  }
  return "?";
}

void Run(Method m, Format f, const uint8_t* w, const float* x, float* y, size_t batch,
         size_t rows, size_t cols) {
  const auto* wf = reinterpret_cast<const float*>(w);
  const auto* wb = reinterpret_cast<const hwy::bfloat16_t*>(w);
  if (m == Method::kLinearPerRow) {
    for (size_t t = 0; t < batch; ++t) {
      const float* xt = x + t * cols;
      float* yt = y + t * rows;
      switch (f) {
        case Format::kF32: ops::LinearF32(wf, xt, yt, rows, cols, 0, rows); break;
        case Format::kBF16: ops::LinearBF16(wb, xt, yt, rows, cols, 0, rows); break;
        case Format::kQ8_0: ops::LinearQ8_0(w, xt, yt, rows, cols, 0, rows); break;
        case Format::kQ4_0: ops::LinearQ4_0(w, xt, yt, rows, cols, 0, rows); break;
      }
    }
    return;
  }
  const bool rows_kernel = m == Method::kLinearRows;
  switch (f) {
    case Format::kF32:
      (rows_kernel ? ops::LinearRowsF32 : ops::MatMulF32)(wf, x, cols, y, rows, batch, rows, cols,
                                                          0, rows);
      break;
    case Format::kBF16:
      (rows_kernel ? ops::LinearRowsBF16 : ops::MatMulBF16)(wb, x, cols, y, rows, batch, rows,
                                                            cols, 0, rows);
      break;
    case Format::kQ8_0:
      (rows_kernel ? ops::LinearRowsQ8_0 : ops::MatMulQ8_0)(w, x, cols, y, rows, batch, rows, cols,
                                                            0, rows);
      break;
    case Format::kQ4_0:
      (rows_kernel ? ops::LinearRowsQ4_0 : ops::MatMulQ4_0)(w, x, cols, y, rows, batch, rows, cols,
                                                            0, rows);
      break;
  }
}

// The copies of W of the running benchmark (one set alive at a time).
struct Weights {
  Format format = Format::kF32;
  size_t rows = 0, cols = 0, bytes = 0, copies = 0, footprint = 0;
  std::vector<AlignedBytes> data;
};

const Weights& GetWeights(Format format, size_t rows, size_t cols) {
  static Weights* weights = new Weights();
  Weights& w = *weights;
  if (!w.data.empty() && w.format == format && w.rows == rows && w.cols == cols &&
      w.footprint == g_min_footprint) {
    return w;
  }
  w.data.clear();
  w.format = format;
  w.rows = rows;
  w.cols = cols;
  w.footprint = g_min_footprint;
  const size_t row_bytes = RowBytes(format, cols);
  w.bytes = rows * row_bytes;
  w.copies = g_min_footprint == 0 ? 1 : (g_min_footprint + w.bytes - 1) / w.bytes;
  Rng rng{0x5EED0000ull + rows * 31 + cols};
  std::vector<float> row(cols);
  AlignedBytes first = AllocateBytes(w.bytes);
  for (size_t r = 0; r < rows; ++r) {
    FillUniform(rng, row.data(), cols);
    EncodeRow(format, row.data(), cols, first.get() + r * row_bytes);
  }
  for (size_t c = 1; c < w.copies; ++c) {
    AlignedBytes copy = AllocateBytes(w.bytes);
    memcpy(copy.get(), first.get(), w.bytes);
    w.data.push_back(std::move(copy));
  }
  w.data.push_back(std::move(first));
  return w;
}

void BM_Rows(benchmark::State& state, Method method, Format format, size_t rows, size_t cols,
             size_t batch) {
  const Weights& w = GetWeights(format, rows, cols);
  std::vector<float> x(batch * cols), y(batch * rows);
  Rng rng{0xC0FFEEull};
  FillUniform(rng, x.data(), x.size());
  size_t i = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Run(method, format, w.data[i++ % w.copies].get(), x.data(), y.data(), batch, rows, cols);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double calls = static_cast<double>(state.iterations());
  state.counters["us_per_row"] = seconds * 1e6 / calls / static_cast<double>(batch);
  state.counters["GB/s"] = seconds > 0 ? static_cast<double>(w.bytes) * calls / seconds / 1e9 : 0;
  state.counters["weight_MB"] = static_cast<double>(w.bytes) / 1e6;
}

struct Shape {
  size_t out, in;
};

// Gemma-4 E2B projections, out x in as HF stores the weight: q_proj (2048 x 1536),
// gate_proj / up_proj (6144 x 1536), down_proj (1536 x 6144).
constexpr Shape kE2BShapes[] = {{2048, 1536}, {6144, 1536}, {1536, 6144}};
constexpr size_t kBatches[] = {1, 2, 4, 8, 16};

void RegisterAll() {
  for (Format format : {Format::kF32, Format::kBF16, Format::kQ8_0, Format::kQ4_0}) {
    for (const Shape& shape : kE2BShapes) {
      for (size_t batch : kBatches) {
        for (Method m : {Method::kLinearRows, Method::kMatMul, Method::kLinearPerRow}) {
          const std::string name = std::string(MethodName(m)) + "/" + FormatName(format) + "/" +
                                   std::to_string(shape.out) + "x" + std::to_string(shape.in) +
                                   "/rows:" + std::to_string(batch);
          benchmark::RegisterBenchmark(name.c_str(), BM_Rows, m, format, shape.out, shape.in,
                                       batch)
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) {
  // --footprint_mb=N (ours) before Google Benchmark sees the flags.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const char* kFlag = "--footprint_mb=";
    if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) == 0) {
      cortiq::g_min_footprint = std::strtoull(argv[i] + std::strlen(kFlag), nullptr, 10) << 20;
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  cortiq::RegisterAll();
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
