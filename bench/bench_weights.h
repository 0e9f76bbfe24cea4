// Test weights for the kernel micro-benchmarks (bench/): 64-byte aligned buffers, a
// splitmix64 generator of uniform values, and rows encoded in each weight format (llama.cpp's
// reference quantizers for Q8_0 / Q4_0).
#ifndef CORTIQ_BENCH_BENCH_WEIGHTS_H_
#define CORTIQ_BENCH_BENCH_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "hwy/base.h"
#include "ops/quantize.h"

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

enum class Format { kF32, kBF16, kQ8_0, kQ4_0 };

inline const char* FormatName(Format f) {
  switch (f) {
    case Format::kF32: return "f32";
    case Format::kBF16: return "bf16";
    case Format::kQ8_0: return "q8_0";
    case Format::kQ4_0: return "q4_0";
  }
  return "?";
}

// Bytes of one row of `cols` weights in format f.
inline size_t RowBytes(Format f, size_t cols) {
  switch (f) {
    case Format::kF32: return cols * sizeof(float);
    case Format::kBF16: return cols * sizeof(hwy::bfloat16_t);
    case Format::kQ8_0: return ops::Q8_0RowBytes(cols);
    case Format::kQ4_0: return ops::Q4_0RowBytes(cols);
  }
  return 0;
}

// Encodes one row of f32 weights into `out` (RowBytes(f, cols) bytes).
inline void EncodeRow(Format f, const float* row, size_t cols, uint8_t* out) {
  switch (f) {
    case Format::kF32:
      memcpy(out, row, cols * sizeof(float));
      break;
    case Format::kBF16:
      for (size_t c = 0; c < cols; ++c) {
        const hwy::bfloat16_t b = hwy::BF16FromF32(row[c]);
        memcpy(out + c * sizeof(b), &b, sizeof(b));
      }
      break;
    case Format::kQ8_0:
      ops::QuantizeRowQ8_0(row, cols, out);
      break;
    case Format::kQ4_0:
      ops::QuantizeRowQ4_0(row, cols, out);
      break;
  }
}

}  // namespace bench
}  // namespace cortiq

#endif  // CORTIQ_BENCH_BENCH_WEIGHTS_H_
