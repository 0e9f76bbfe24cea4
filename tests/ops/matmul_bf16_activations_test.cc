// MatMulBF16BF16Activations (ops/matmul_bf16_activations.h) against the scalar reference of its
// formula, bit for bit on the AVX-512 BF16 path (where the CPU has it) and on the portable one,
// within the bound of a different summation on the AMX path (where the CPU has it):
// shapes around the 16-row groups, 64-row blocks, 6-token tiles, 256-column chunks and 256-token
// blocks, odd column counts, row ranges that start and end inside a group, strided x and y.
// RoundToBF16 on the values where rounding is decided. And how far the result is from the exact
// product (the rounding error the option trades).
#include "ops/matmul_bf16_activations.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ops/gather.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/quantize_legacy.h"
#include "ops/reference.h"

namespace cortiq {
namespace ops {
namespace {

struct Shape {
  size_t batch, rows, cols, row_begin, row_end;
};

uint32_t Bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

float FromBits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

std::vector<float> Random(size_t n, std::mt19937* rng, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(*rng);
  return v;
}

void CheckShape(const Shape& s, BF16ActivationsPath limit) {
  LimitBF16ActivationsPathForTest(limit);
  const BF16ActivationsPath path = DispatchedBF16ActivationsPath();
  SCOPED_TRACE(testing::Message() << "batch " << s.batch << " rows " << s.rows << " cols "
                                  << s.cols << " range [" << s.row_begin << ", " << s.row_end
                                  << ") " << BF16ActivationsPathName(path));
  std::mt19937 rng(static_cast<uint32_t>(s.batch * 7919 + s.rows * 31 + s.cols));
  const std::vector<float> weights = Random(s.rows * s.cols, &rng, 0.05f);
  std::vector<uint16_t> w(weights.size());
  // Weights as a BF16 checkpoint holds them: the upper halves (truncated, any bf16 will do).
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint16_t>(Bits(weights[i]) >> 16);
  const size_t x_stride = s.cols + 3, y_stride = s.rows + 5;
  std::vector<float> x = Random(s.batch * x_stride, &rng, 1.0f);
  x[0] = 40.0f;  // an outlier, as real activations have
  std::vector<float> y(s.batch * y_stride, -7.0f), expected = y;
  MatMulBF16BF16Activations(w.data(), x.data(), x_stride, y.data(), y_stride, s.batch, s.rows,
                            s.cols, s.row_begin, s.row_end);
  LimitBF16ActivationsPathForTest(BF16ActivationsPath::kAmx);
  MatMulBF16ActivationsReference(w.data(), x.data(), x_stride, expected.data(), y_stride, s.batch,
                                 s.rows, s.cols, s.row_begin, s.row_end);
  size_t mismatches = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t t = i / y_stride, r = i % y_stride;
    bool ok = memcmp(&y[i], &expected[i], sizeof(float)) == 0;
    if (!ok && path == BF16ActivationsPath::kAmx && r >= s.row_begin && r < s.row_end) {
      // Both sum the same exact products (bf16 x bf16 is exact in f32): each in its own order
      // with at most one rounding per column, so they differ by at most 2 cols ulps of the sum
      // of the products' magnitudes.
      double magnitude = 0;
      for (size_t c = 0; c < s.cols; ++c) {
        const float xb = FromBits(uint32_t{RoundToBF16(x[t * x_stride + c])} << 16);
        const float wb = FromBits(uint32_t{w[r * s.cols + c]} << 16);
        magnitude += std::fabs(static_cast<double>(wb) * xb);
      }
      ok = std::fabs(static_cast<double>(y[i]) - expected[i]) <= 2.0 * s.cols * 0x1p-24 * magnitude;
    }
    if (!ok && ++mismatches <= 5) {
      ADD_FAILURE() << "token " << t << " row " << r << ": " << y[i] << " != " << expected[i];
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(MatMulBF16ActivationsTest, MatchesTheReference) {
  const Shape shapes[] = {
      {1, 1, 1, 0, 1},        {1, 1, 2, 0, 1},          {1, 16, 32, 0, 16},
      {7, 17, 63, 0, 17},     {6, 64, 256, 0, 64},      {13, 70, 257, 3, 69},
      {5, 130, 1056, 16, 129}, {300, 40, 96, 0, 40},    {2, 33, 2049, 1, 32},
      {12, 256, 640, 100, 230}, {11, 5, 7, 2, 5},       {40, 96, 512, 0, 96},
      {33, 50, 300, 7, 50},
  };
  for (const Shape& s : shapes) {
    for (const BF16ActivationsPath limit :
         {BF16ActivationsPath::kAmx, BF16ActivationsPath::kAvx512Bf16,
          BF16ActivationsPath::kPortable}) {
      CheckShape(s, limit);
    }
  }
}

TEST(MatMulBF16ActivationsTest, ReportsItsPath) {
  LimitBF16ActivationsPathForTest(BF16ActivationsPath::kPortable);
  EXPECT_EQ(DispatchedBF16ActivationsPath(), BF16ActivationsPath::kPortable);
  LimitBF16ActivationsPathForTest(BF16ActivationsPath::kAmx);
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) {
    EXPECT_EQ(DispatchedBF16ActivationsPath(), BF16ActivationsPath::kPortable);
  }
#endif
  std::printf("dispatched: %s\n", BF16ActivationsPathName(DispatchedBF16ActivationsPath()));
}

TEST(MatMulBF16ActivationsTest, RoundsToNearestEven) {
  EXPECT_EQ(RoundToBF16(1.0f), 0x3F80);
  EXPECT_EQ(RoundToBF16(-2.0f), 0xC000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even 1.
  EXPECT_EQ(RoundToBF16(FromBits(0x3F808000)), 0x3F80);
  // 1 + 3 * 2^-8: halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(RoundToBF16(FromBits(0x3F818000)), 0x3F82);
  EXPECT_EQ(RoundToBF16(FromBits(0x3F808001)), 0x3F81);  // past halfway
  EXPECT_EQ(RoundToBF16(FromBits(0x3F807FFF)), 0x3F80);  // before it
  EXPECT_EQ(RoundToBF16(FLT_MAX), 0x7F80);               // overflows to +inf
  EXPECT_EQ(RoundToBF16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(RoundToBF16(-std::numeric_limits<float>::infinity()), 0xFF80);
  const uint16_t nan = RoundToBF16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x7F, 0);
  EXPECT_EQ(RoundToBF16(FromBits(0x7F800001)) & 0x7F, 0x40);  // a signaling NaN is quieted
  EXPECT_EQ(RoundToBF16(FromBits(0x00400000)), 0x0000);  // subnormal: read as zero
  EXPECT_EQ(RoundToBF16(FromBits(0x80400000)), 0x8000);  // of its sign
  EXPECT_EQ(RoundToBF16(FLT_MIN), 0x0080);
}

// The exact kernels' distance to the float64 product, in units of 2^-24 sum |w x| (f32 roundings
// of the products' magnitude): the largest over the shapes, of the AMX split and of the FMA kernel.
struct Ulps {
  double split = 0, fma = 0;
};

// Activations with full 24-bit significands over 40 binades, so that all three terms matter; row
// stride s.cols + 1.
std::vector<float> WideActivations(const Shape& s, std::mt19937* rng) {
  std::vector<float> x = Random(s.batch * (s.cols + 1), rng, 1.0f);
  std::uniform_int_distribution<int> binade(-20, 20);
  for (float& v : x) v = ldexpf(v, binade(*rng));
  return x;
}

// Checks y (the split kernel's, within 8 units, and -7 outside the row range) against the float64
// product of `weights` (the exact values, [rows, cols]) and x, and records both kernels' largest
// distances in *ulps.
void CheckExact(const Shape& s, const std::vector<float>& weights, const std::vector<float>& x,
                const std::vector<float>& y, const std::vector<float>& fma, size_t y_stride,
                Ulps* ulps) {
  const size_t x_stride = s.cols + 1;
  for (size_t t = 0; t < s.batch; ++t) {
    for (size_t r = 0; r < s.rows; ++r) {
      const float got = y[t * y_stride + r];
      if (r < s.row_begin || r >= s.row_end) {
        EXPECT_EQ(got, -7.0f) << "wrote outside its rows";
        continue;
      }
      double exact = 0, magnitude = 0;
      for (size_t c = 0; c < s.cols; ++c) {
        const double p = static_cast<double>(weights[r * s.cols + c]) * x[t * x_stride + c];
        exact += p;
        magnitude += std::fabs(p);
      }
      const double split = std::fabs(got - exact) / (0x1p-24 * magnitude);
      ulps->split = std::max(ulps->split, split);
      ulps->fma = std::max(ulps->fma, std::fabs(fma[t * y_stride + r] - exact) /
                                          (0x1p-24 * magnitude));
      EXPECT_LE(split, 8.0) << "token " << t << " row " << r << ": " << got << " vs " << exact;
    }
  }
}

// MatMulBF16x3 against the float64 product of the same operands (f32 activations, not rounded):
// within a few f32 roundings of sum |w x| on every shape (odd column counts too), and no further
// from it than MatMulBF16 (the FMA kernel); where AMX is unavailable, MatMulBF16's bits.
TEST(MatMulBF16x3Test, IsExactWithinF32Accumulation) {
  const Shape shapes[] = {
      {1, 1, 1, 0, 1},       {7, 17, 63, 0, 17},       {13, 70, 257, 3, 69},
      {40, 96, 512, 0, 96},  {2, 33, 2049, 1, 32},      {300, 40, 96, 0, 40},
      {33, 64, 2560, 0, 64}, {20, 48, 10240, 5, 45},
  };
  Ulps ulps;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(testing::Message() << "batch " << s.batch << " rows " << s.rows << " cols "
                                    << s.cols);
    std::mt19937 rng(static_cast<uint32_t>(s.batch * 131 + s.rows * 7 + s.cols));
    std::vector<uint16_t> w(s.rows * s.cols);
    std::vector<float> widened(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = RoundToBF16(Random(1, &rng, 0.05f)[0]);
      widened[i] = FromBits(uint32_t{w[i]} << 16);
    }
    const std::vector<float> x = WideActivations(s, &rng);
    const size_t y_stride = s.rows + 2;
    std::vector<float> y(s.batch * y_stride, -7.0f), fma = y;
    MatMulBF16x3(w.data(), x.data(), s.cols + 1, y.data(), y_stride, s.batch, s.rows, s.cols,
                 s.row_begin, s.row_end);
    MatMulBF16(reinterpret_cast<const hwy::bfloat16_t*>(w.data()), x.data(), s.cols + 1,
               fma.data(), y_stride, s.batch, s.rows, s.cols, s.row_begin, s.row_end);
    if (!BF16x3Available()) {
      EXPECT_EQ(memcmp(y.data(), fma.data(), y.size() * sizeof(float)), 0);
      continue;
    }
    CheckExact(s, widened, x, y, fma, y_stride, &ulps);
  }
  std::printf("max |y - exact| / (2^-24 sum |w x|): MatMulBF16x3 %.3f, MatMulBF16 %.3f\n",
              ulps.split, ulps.fma);
  // Measured 2.9 and 3.9: as exact as the FMA kernel, not merely within the bound.
  EXPECT_LE(ulps.split, 1.5 * ulps.fma + 0.5);
}

// MatMulSplitAmx on block formats (Q4_0, Q5_0: two weight terms, Q8_0: three) and f16 (two) and
// f32 weights (three):
// against the float64 product of the dequantized weights, as exact as the FMA kernels.
void DecodeQ4_0(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  GatherRowQ4_0(w, cols, row, begin, count, 1.0f, out);
}
void DecodeQ8_0(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  GatherRowQ8_0(w, cols, row, begin, count, 1.0f, out);
}
void DecodeQ5_0(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  GatherRowQ5_0(w, cols, row, begin, count, 1.0f, out);
}
void DecodeF16(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  GatherRowF16(static_cast<const hwy::float16_t*>(w), cols, row, begin, count, 1.0f, out);
}
void DecodeF32(const void* w, size_t cols, size_t row, size_t begin, size_t count, float* out) {
  memcpy(out, static_cast<const float*>(w) + row * cols + begin, count * sizeof(float));
}

TEST(MatMulSplitAmxTest, IsExactWithinF32AccumulationForEveryWeightFormat) {
  // (Without AMX the kernel's fallback, decoded rows by MatMulF32, is what is checked.)
  const Shape shapes[] = {
      {7, 17, 64, 0, 17},  {13, 70, 288, 3, 69},  {40, 96, 512, 0, 96},
      {33, 64, 2560, 0, 64}, {20, 48, 10240, 5, 45},
  };
  for (const int format : {0, 1, 2, 3, 4}) {  // Q4_0, Q8_0, F32, Q5_0, F16
    const char* const kNames[] = {"Q4_0", "Q8_0", "F32", "Q5_0", "F16"};
    const char* name = kNames[format];
    Ulps ulps;
    for (const Shape& s : shapes) {
      SCOPED_TRACE(testing::Message() << name << " batch " << s.batch << " rows " << s.rows
                                      << " cols " << s.cols);
      std::mt19937 rng(static_cast<uint32_t>(s.batch * 131 + s.rows * 7 + s.cols + format));
      const std::vector<float> weights = Random(s.rows * s.cols, &rng, 0.05f);
      const size_t row_bytes = format == 0   ? Q4_0RowBytes(s.cols)
                               : format == 1 ? Q8_0RowBytes(s.cols)
                               : format == 3 ? Q5_0RowBytes(s.cols)
                               : format == 4 ? F16RowBytes(s.cols)
                                             : s.cols * sizeof(float);
      std::vector<uint8_t> w(s.rows * row_bytes);
      std::vector<float> dequantized(s.rows * s.cols);
      for (size_t r = 0; r < s.rows; ++r) {
        uint8_t* row = w.data() + r * row_bytes;
        float* dq = dequantized.data() + r * s.cols;
        if (format == 0) {
          QuantizeRowQ4_0(weights.data() + r * s.cols, s.cols, row);
          DequantizeRowQ4_0(row, s.cols, dq);
        } else if (format == 1) {
          QuantizeRowQ8_0(weights.data() + r * s.cols, s.cols, row);
          DequantizeRowQ8_0(row, s.cols, dq);
        } else if (format == 3) {
          QuantizeRowQ5_0(weights.data() + r * s.cols, s.cols, row);
          DequantizeRowQ5_0(row, s.cols, dq);
        } else if (format == 4) {
          for (size_t c = 0; c < s.cols; ++c) {
            const uint16_t h = F32ToF16Bits(weights[r * s.cols + c]);
            memcpy(row + 2 * c, &h, 2);
            dq[c] = F16BitsToF32(h);
          }
        } else {
          memcpy(row, weights.data() + r * s.cols, row_bytes);
          memcpy(dq, row, row_bytes);
        }
      }
      const std::vector<float> x = WideActivations(s, &rng);
      const size_t x_stride = s.cols + 1, y_stride = s.rows + 2;
      std::vector<float> y(s.batch * y_stride, -7.0f), fma = y;
      const WeightRowDecoder decoders[] = {DecodeQ4_0, DecodeQ8_0, DecodeF32, DecodeQ5_0,
                                           DecodeF16};
      const int terms[] = {2, 3, 3, 2, 2};
      MatMulSplitAmx(decoders[format], terms[format], w.data(), x.data(), x_stride, y.data(),
                     y_stride, s.batch, s.rows, s.cols, s.row_begin, s.row_end);
      using Kernel = void (*)(const void*, const float*, size_t, float*, size_t, size_t, size_t,
                              size_t, size_t, size_t);
      const Kernel fma_kernels[] = {
          MatMulQ4_0, MatMulQ8_0,
          [](const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
             size_t batch, size_t rows, size_t cols, size_t begin, size_t end) {
            MatMulF32(static_cast<const float*>(w), x, x_stride, y, y_stride, batch, rows, cols,
                      begin, end);
          },
          MatMulQ5_0,
          [](const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
             size_t batch, size_t rows, size_t cols, size_t begin, size_t end) {
            MatMulF16(static_cast<const hwy::float16_t*>(w), x, x_stride, y, y_stride, batch,
                      rows, cols, begin, end);
          }};
      fma_kernels[format](w.data(), x.data(), x_stride, fma.data(), y_stride, s.batch, s.rows,
                          s.cols, s.row_begin, s.row_end);
      CheckExact(s, dequantized, x, y, fma, y_stride, &ulps);
    }
    std::printf("%s: max |y - exact| / (2^-24 sum |w x|): MatMulSplitAmx %.3f, FMA kernel %.3f\n",
                name, ulps.split, ulps.fma);
    EXPECT_LE(ulps.split, 1.5 * ulps.fma + 0.5) << name;
  }
}

// The price of the option: against the exact product of the same weights (float64), the error
// is a small fraction of the outputs' scale.
TEST(MatMulBF16ActivationsTest, StaysCloseToTheExactProduct) {
  std::mt19937 rng(11);
  const size_t batch = 8, rows = 64, cols = 1024;
  const std::vector<float> weights = Random(rows * cols, &rng, 0.05f);
  std::vector<uint16_t> w(rows * cols);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint16_t>(Bits(weights[i]) >> 16);
  const std::vector<float> x = Random(batch * cols, &rng, 1.0f);
  std::vector<float> y(batch * rows);
  MatMulBF16BF16Activations(w.data(), x.data(), cols, y.data(), rows, batch, rows, cols, 0, rows);
  double err2 = 0, ref2 = 0;
  for (size_t t = 0; t < batch; ++t) {
    for (size_t r = 0; r < rows; ++r) {
      double exact = 0;
      for (size_t c = 0; c < cols; ++c) {
        exact += static_cast<double>(FromBits(uint32_t{w[r * cols + c]} << 16)) * x[t * cols + c];
      }
      err2 += (y[t * rows + r] - exact) * (y[t * rows + r] - exact);
      ref2 += exact * exact;
    }
  }
  // Each activation moves by at most 2^-9 of itself, independently: a relative RMS error of
  // about 2^-9 / sqrt(3) ~ 1e-3 of the output's scale.
  EXPECT_LT(sqrt(err2 / ref2), 4e-3);
  EXPECT_GT(sqrt(err2 / ref2), 1e-5);  // it is not the exact path
}

}  // namespace
}  // namespace ops
}  // namespace cortiq
