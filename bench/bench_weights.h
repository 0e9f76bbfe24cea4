// Test weights for the kernel micro-benchmarks (bench/): 64-byte aligned buffers, a
// splitmix64 generator of uniform values, and, per weight format, rows encoded with its reference
// quantizer (llama.cpp's for the block formats) and its kernels.
#ifndef CORTIQ_BENCH_BENCH_WEIGHTS_H_
#define CORTIQ_BENCH_BENCH_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "hwy/base.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_k.h"
#include "ops/quantize_legacy.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"

namespace cortiq {
namespace bench {

// Alignment of the benchmark buffers: one cache line, the widest vector.
constexpr size_t kAlign = 64;

struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(kAlign)); }
};
using AlignedBytes = std::unique_ptr<uint8_t[], AlignedFree>;

inline AlignedBytes AllocateBytes(size_t bytes) {
  return AlignedBytes(static_cast<uint8_t*>(::operator new[](bytes, std::align_val_t(kAlign))));
}

// splitmix64: fast and good enough for weight values.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Uniform() { return static_cast<float>(static_cast<int64_t>(Next()) >> 40) * 0x1p-23f; }
};

inline void FillUniform(Rng& rng, float* v, size_t n) {
  for (size_t i = 0; i < n; ++i) v[i] = rng.Uniform();
}

// Every weight format of ops/ (llama.cpp / GGUF type names, lower case).
enum class Format {
  kF32, kBF16, kF16, kQ8_0, kQ4_0, kQ4_1, kQ5_0, kQ5_1, kIQ4_NL,
  kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K, kIQ4_XS, kQ4_0x16, kQ4_Kx16, kQ5_Kx16,
};
constexpr Format kAllFormats[] = {
    Format::kF32,  Format::kBF16, Format::kF16,  Format::kQ8_0,  Format::kQ4_0,
    Format::kQ4_1, Format::kQ5_0, Format::kQ5_1, Format::kIQ4_NL, Format::kQ2_K,
    Format::kQ3_K, Format::kQ4_K, Format::kQ5_K, Format::kQ6_K,  Format::kIQ4_XS,
    Format::kQ4_0x16, Format::kQ4_Kx16, Format::kQ5_Kx16,
};

// The format's name, its row size, reference quantizer (f32 row -> encoded row) and kernels
// (ops/linear.h, ops/matmul.h) behind type-erased weight pointers.
struct FormatInfo {
  const char* name;
  size_t (*row_bytes)(size_t cols);
  void (*encode)(const float* row, size_t cols, void* out);
  void (*linear)(const void* w, const float* x, float* y, size_t rows, size_t cols,
                 size_t row_begin, size_t row_end);
  void (*matmul)(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                 size_t batch, size_t rows, size_t cols, size_t row_begin, size_t row_end);
};

inline const FormatInfo& Info(Format f) {
  static const FormatInfo kInfo[] = {
      {"f32", [](size_t c) { return c * sizeof(float); },
       [](const float* r, size_t c, void* o) { memcpy(o, r, c * sizeof(float)); },
       [](const void* w, const float* x, float* y, size_t rows, size_t cols, size_t b, size_t e) {
         ops::LinearF32(static_cast<const float*>(w), x, y, rows, cols, b, e);
       },
       [](const void* w, const float* x, size_t xs, float* y, size_t ys, size_t n, size_t rows,
          size_t cols, size_t b, size_t e) {
         ops::MatMulF32(static_cast<const float*>(w), x, xs, y, ys, n, rows, cols, b, e);
       }},
      {"bf16", [](size_t c) { return c * sizeof(hwy::bfloat16_t); },
       [](const float* r, size_t c, void* o) {
         for (size_t i = 0; i < c; ++i) {
           const hwy::bfloat16_t b = hwy::BF16FromF32(r[i]);
           memcpy(static_cast<uint8_t*>(o) + i * sizeof(b), &b, sizeof(b));
         }
       },
       [](const void* w, const float* x, float* y, size_t rows, size_t cols, size_t b, size_t e) {
         ops::LinearBF16(static_cast<const hwy::bfloat16_t*>(w), x, y, rows, cols, b, e);
       },
       [](const void* w, const float* x, size_t xs, float* y, size_t ys, size_t n, size_t rows,
          size_t cols, size_t b, size_t e) {
         ops::MatMulBF16(static_cast<const hwy::bfloat16_t*>(w), x, xs, y, ys, n, rows, cols, b,
                         e);
       }},
      {"f16", &ops::F16RowBytes, &ops::QuantizeRowF16,
       [](const void* w, const float* x, float* y, size_t rows, size_t cols, size_t b, size_t e) {
         ops::LinearF16(static_cast<const hwy::float16_t*>(w), x, y, rows, cols, b, e);
       },
       [](const void* w, const float* x, size_t xs, float* y, size_t ys, size_t n, size_t rows,
          size_t cols, size_t b, size_t e) {
         ops::MatMulF16(static_cast<const hwy::float16_t*>(w), x, xs, y, ys, n, rows, cols, b, e);
       }},
      {"q8_0", &ops::Q8_0RowBytes, &ops::QuantizeRowQ8_0, &ops::LinearQ8_0, &ops::MatMulQ8_0},
      {"q4_0", &ops::Q4_0RowBytes, &ops::QuantizeRowQ4_0, &ops::LinearQ4_0, &ops::MatMulQ4_0},
      {"q4_1", &ops::Q4_1RowBytes, &ops::QuantizeRowQ4_1, &ops::LinearQ4_1, &ops::MatMulQ4_1},
      {"q5_0", &ops::Q5_0RowBytes, &ops::QuantizeRowQ5_0, &ops::LinearQ5_0, &ops::MatMulQ5_0},
      {"q5_1", &ops::Q5_1RowBytes, &ops::QuantizeRowQ5_1, &ops::LinearQ5_1, &ops::MatMulQ5_1},
      {"iq4_nl", &ops::IQ4_NLRowBytes, &ops::QuantizeRowIQ4_NL, &ops::LinearIQ4_NL,
       &ops::MatMulIQ4_NL},
      {"q2_k", &ops::Q2_KRowBytes, &ops::QuantizeRowQ2_K, &ops::LinearQ2_K, &ops::MatMulQ2_K},
      {"q3_k", &ops::Q3_KRowBytes, &ops::QuantizeRowQ3_K, &ops::LinearQ3_K, &ops::MatMulQ3_K},
      {"q4_k", &ops::Q4_KRowBytes, &ops::QuantizeRowQ4_K, &ops::LinearQ4_K, &ops::MatMulQ4_K},
      {"q5_k", &ops::Q5_KRowBytes, &ops::QuantizeRowQ5_K, &ops::LinearQ5_K, &ops::MatMulQ5_K},
      {"q6_k", &ops::Q6_KRowBytes, &ops::QuantizeRowQ6_K, &ops::LinearQ6_K, &ops::MatMulQ6_K},
      {"iq4_xs", &ops::IQ4_XSRowBytes, &ops::QuantizeRowIQ4_XS, &ops::LinearIQ4_XS,
       &ops::MatMulIQ4_XS},
      // cortiq's regrouped Q4_0 (ops/quantize_q4_0x16.h); the shapes' widths are whole groups.
      {"q4_0x16", &ops::Q4_0x16RowBytes, &ops::QuantizeRowQ4_0x16, &ops::LinearQ4_0x16,
       &ops::MatMulQ4_0x16},
      // cortiq's regrouped Q4_K (ops/quantize_q4_kx16.h); likewise.
      {"q4_kx16", &ops::Q4_Kx16RowBytes, &ops::QuantizeRowQ4_Kx16, &ops::LinearQ4_Kx16,
       &ops::MatMulQ4_Kx16},
      {"q5_kx16", &ops::Q5_Kx16RowBytes, &ops::QuantizeRowQ5_Kx16, &ops::LinearQ5_Kx16,
       &ops::MatMulQ5_Kx16},
  };
  return kInfo[static_cast<size_t>(f)];
}

inline const char* FormatName(Format f) { return Info(f).name; }

// Bytes of one row of `cols` weights in format f.
inline size_t RowBytes(Format f, size_t cols) { return Info(f).row_bytes(cols); }

// Encodes one row of f32 weights into `out` (RowBytes(f, cols) bytes) with the format's
// reference quantizer.
inline void EncodeRow(Format f, const float* row, size_t cols, uint8_t* out) {
  Info(f).encode(row, cols, out);
}

// Rows of a benchmark matrix encoded with the quantizer; the rest repeat them (the kernels'
// speed does not depend on the values, and the K-quant quantizers would take minutes for the
// 262144-row LM head).
constexpr size_t kDistinctRows = 256;

// Fills rows x cols weights of format f at `out` (rows * RowBytes bytes) from uniform values.
inline void FillMatrix(Format f, size_t rows, size_t cols, uint64_t seed, uint8_t* out) {
  Rng rng{seed};
  std::vector<float> row(cols);
  const size_t row_bytes = RowBytes(f, cols);
  for (size_t r = 0; r < rows; ++r) {
    if (r < kDistinctRows) {
      FillUniform(rng, row.data(), cols);
      EncodeRow(f, row.data(), cols, out + r * row_bytes);
    } else {
      memcpy(out + r * row_bytes, out + (r % kDistinctRows) * row_bytes, row_bytes);
    }
  }
}

}  // namespace bench
}  // namespace cortiq

#endif  // CORTIQ_BENCH_BENCH_WEIGHTS_H_
