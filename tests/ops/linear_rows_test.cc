// Tests LinearRows{F32,BF16,Q8_0,Q4_0} (ops/linear_rows.h): the per-target
// kernels (ops/linear_rows-inl.h) and the dispatched functions on every
// compiled Highway target. Each output must have exactly the bits the
// matrix-vector kernel of the same target (ops/linear-inl.h,
// ops/linear_quant-inl.h) gives that activation row alone, for every batch,
// stride and row range, and be within the f32 summation bound of the double
// reference (MatMul*Reference, ops/reference.h).

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "hwy/base.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/quantize.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/linear_rows_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/linear-inl.h"
#include "ops/linear_quant-inl.h"
#include "ops/linear_rows-inl.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The few-rows kernel and the matrix-vector kernel on raw weight bytes.
using RowsFn = void (*)(const void* w, const float* x, size_t x_stride,
                        float* y, size_t y_stride, size_t batch, size_t rows,
                        size_t cols, size_t row_begin, size_t row_end);
using VectorFn = void (*)(const void* w, const float* x, float* y, size_t rows,
                          size_t cols, size_t row_begin, size_t row_end);

enum class Fmt { kF32, kBF16, kQ8_0, kQ4_0 };
const Fmt kFormats[] = {Fmt::kF32, Fmt::kBF16, Fmt::kQ8_0, Fmt::kQ4_0};

const char* FmtName(Fmt f) {
  switch (f) {
    case Fmt::kF32: return "f32";
    case Fmt::kBF16: return "bf16";
    case Fmt::kQ8_0: return "Q8_0";
    case Fmt::kQ4_0: return "Q4_0";
  }
  return "?";
}

bool IsQuant(Fmt f) { return f == Fmt::kQ8_0 || f == Fmt::kQ4_0; }

// One format's kernels: per-target and dispatched, few-rows and vector, and
// the double reference.
struct Kernels {
  RowsFn rows_target, rows_dispatched, reference;
  VectorFn vector_target, vector_dispatched;
};

Kernels KernelsFor(Fmt f) {
  switch (f) {
    case Fmt::kF32:
      return {
          [](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            FloatRowsKernel(static_cast<const float*>(w), x, xs, y, ys, b, r,
                            c, rb, re);
          },
          [](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            ::cortiq::ops::LinearRowsF32(static_cast<const float*>(w), x, xs,
                                         y, ys, b, r, c, rb, re);
          },
          [](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            MatMulF32Reference(static_cast<const float*>(w), x, xs, y, ys, b,
                               r, c, rb, re);
          },
          [](const void* w, const float* x, float* y, size_t r, size_t c,
             size_t rb, size_t re) {
            LinearRows(static_cast<const float*>(w), x, y, r, c, rb, re);
          },
          [](const void* w, const float* x, float* y, size_t r, size_t c,
             size_t rb, size_t re) {
            ::cortiq::ops::LinearF32(static_cast<const float*>(w), x, y, r, c,
                                     rb, re);
          }};
    case Fmt::kBF16:
      return {
          [](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            FloatRowsKernel(static_cast<const hwy::bfloat16_t*>(w), x, xs, y,
                            ys, b, r, c, rb, re);
          },
          [](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            ::cortiq::ops::LinearRowsBF16(
                static_cast<const hwy::bfloat16_t*>(w), x, xs, y, ys, b, r, c,
                rb, re);
          },
          [](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            MatMulBF16Reference(static_cast<const hwy::bfloat16_t*>(w), x, xs,
                                y, ys, b, r, c, rb, re);
          },
          [](const void* w, const float* x, float* y, size_t r, size_t c,
             size_t rb, size_t re) {
            LinearRows(static_cast<const hwy::bfloat16_t*>(w), x, y, r, c, rb,
                       re);
          },
          [](const void* w, const float* x, float* y, size_t r, size_t c,
             size_t rb, size_t re) {
            ::cortiq::ops::LinearBF16(static_cast<const hwy::bfloat16_t*>(w),
                                      x, y, r, c, rb, re);
          }};
    case Fmt::kQ8_0:
      return {
          [](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            QuantRowsKernel(Q8_0Format(), w, x, xs, y, ys, b, r, c, rb, re);
          },
          &::cortiq::ops::LinearRowsQ8_0, &MatMulQ8_0Reference,
          [](const void* w, const float* x, float* y, size_t r, size_t c,
             size_t rb, size_t re) {
            LinearQuantRows(Q8_0Format(), w, x, y, r, c, rb, re);
          },
          &::cortiq::ops::LinearQ8_0};
    case Fmt::kQ4_0:
      break;
  }
  return {[](const void* w, const float* x, size_t xs, float* y, size_t ys,
             size_t b, size_t r, size_t c, size_t rb, size_t re) {
            QuantRowsKernel(Q4_0Format(), w, x, xs, y, ys, b, r, c, rb, re);
          },
          &::cortiq::ops::LinearRowsQ4_0, &MatMulQ4_0Reference,
          [](const void* w, const float* x, float* y, size_t r, size_t c,
             size_t rb, size_t re) {
            LinearQuantRows(Q4_0Format(), w, x, y, r, c, rb, re);
          },
          &::cortiq::ops::LinearQ4_0};
}

// A [rows, cols] weight matrix in format f: its bytes and its exact f32
// values. Values in [-1, 1); quantized ones with a random magnitude 2^-6..2^2
// per block (so scales vary) and, every other seed, raw random quant bytes
// with random f16 scales (every quant value occurs, including Q8_0's -128).
struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

Weights RandomWeights(Fmt f, size_t rows, size_t cols, uint32_t seed) {
  Weights w;
  std::vector<float> v = test::RandomFloats(rows * cols, -1.0f, 1.0f, seed);
  w.values.resize(rows * cols);
  switch (f) {
    case Fmt::kF32:
      w.bytes.resize(v.size() * sizeof(float));
      memcpy(w.bytes.data(), v.data(), w.bytes.size());
      w.values = v;
      return w;
    case Fmt::kBF16: {
      const std::vector<hwy::bfloat16_t> b = test::ToBF16(v);
      w.bytes.resize(b.size() * sizeof(hwy::bfloat16_t));
      memcpy(w.bytes.data(), b.data(), w.bytes.size());
      w.values = test::ToF32(b);
      return w;
    }
    case Fmt::kQ8_0:
    case Fmt::kQ4_0:
      break;
  }
  const bool q8 = f == Fmt::kQ8_0;
  const size_t block_bytes = q8 ? kQ8_0BlockBytes : kQ4_0BlockBytes;
  const size_t num_blocks = rows * cols / kQuantBlockSize;
  w.bytes.resize(num_blocks * block_bytes);
  std::mt19937 rng(seed);
  if (seed % 2 == 0) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
    for (size_t b = 0; b < num_blocks; ++b) {
      uint8_t* block = &w.bytes[b * block_bytes];
      const uint16_t d = F32ToF16Bits(scale(rng));
      memcpy(block, &d, sizeof(d));
      for (size_t i = 2; i < block_bytes; ++i) {
        block[i] = static_cast<uint8_t>(byte(rng));
      }
    }
  } else {
    std::uniform_int_distribution<int> exponent(-6, 2);
    for (size_t b = 0; b < num_blocks; ++b) {
      const float s = ldexpf(1.0f, exponent(rng));
      for (size_t j = 0; j < kQuantBlockSize; ++j) {
        v[b * kQuantBlockSize + j] *= s;
      }
    }
    (q8 ? QuantizeRowQ8_0 : QuantizeRowQ4_0)(v.data(), v.size(),
                                              w.bytes.data());
  }
  (q8 ? DequantizeRowQ8_0 : DequantizeRowQ4_0)(w.bytes.data(), rows * cols,
                                                w.values.data());
  return w;
}

using test::SameBits;

// Runs the per-target and dispatched few-rows kernels on rows [rb, re) of
// Y = X W^T (x rows x_stride apart, y rows y_stride apart) and checks every
// element of y: inside the range, the bits of the same target's (or the
// dispatched) matrix-vector kernel on that row of x, and within the summation
// bound of the double reference; outside it (other rows, the stride padding)
// the NaN sentinel untouched.
void CheckRows(Fmt f, const Weights& w, const std::vector<float>& x,
               size_t x_stride, size_t y_stride, size_t batch, size_t rows,
               size_t cols, size_t rb, size_t re) {
  const Kernels k = KernelsFor(f);
  std::vector<float> expected(batch * y_stride, test::Sentinel());
  k.reference(w.bytes.data(), x.data(), x_stride, expected.data(), y_stride,
              batch, rows, cols, rb, re);
  const hn::ScalableTag<float> df;
  const QuantDF dq;
  const size_t lanes = IsQuant(f) ? hn::Lanes(dq) : hn::Lanes(df);
  for (int variant = 0; variant < 2; ++variant) {
    const char* name = variant == 0 ? "per-target" : "dispatched";
    std::vector<float> y(batch * y_stride, test::Sentinel());
    (variant == 0 ? k.rows_target : k.rows_dispatched)(
        w.bytes.data(), x.data(), x_stride, y.data(), y_stride, batch, rows,
        cols, rb, re);
    for (size_t t = 0; t < batch; ++t) {
      std::vector<float> alone(rows, test::Sentinel());
      (variant == 0 ? k.vector_target : k.vector_dispatched)(
          w.bytes.data(), x.data() + t * x_stride, alone.data(), rows, cols,
          rb, re);
      for (size_t r = 0; r < y_stride; ++r) {
        const float got = y[t * y_stride + r];
        if (r < rb || r >= re) {
          ASSERT_TRUE(isnan(got)) << FmtName(f) << " " << name << " row " << t
                                  << " output " << r << " outside [" << rb
                                  << ", " << re << ") was written";
          continue;
        }
        ASSERT_TRUE(SameBits(got, alone[r]))
            << FmtName(f) << " " << name << " batch " << batch << " row " << t
            << " output " << r << " rows " << rows << " cols " << cols
            << ": " << got << " vs matrix-vector " << alone[r];
        double abs_sum = 0.0;
        for (size_t c = 0; c < cols; ++c) {
          abs_sum += fabs(static_cast<double>(w.values[r * cols + c]) *
                          x[t * x_stride + c]);
        }
        const double tol =
            IsQuant(f)
                ? test::SumErrorBound(cols, kQuantBlockSize, 1, abs_sum) +
                      test::SumErrorBound(kQuantBlockSize, lanes, 1, abs_sum)
                : test::SumErrorBound(cols, lanes, 2, abs_sum);
        ASSERT_NEAR(got, expected[t * y_stride + r], tol)
            << FmtName(f) << " " << name << " batch " << batch << " row " << t
            << " output " << r << " cols " << cols;
      }
    }
  }
}

// Column counts: for f32 / bf16 every tail case (fewer than one vector, a lone
// last vector, masked tails, one and several 512-column chunks); for the block
// formats one to five blocks, one chunk plus a tail (672 = 21 blocks) and the
// E2B widths 1536 and 6144.
std::vector<size_t> ColsFor(Fmt f) {
  if (IsQuant(f)) return {32, 64, 96, 160, 672, 1536, 6144};
  return {1, 3, 7, 16, 17, 33, 48, 100, 512, 1000, 1536};
}

// Batches 1..9 and 17 (one and several groups of activation rows, every
// group size), output counts around the 8-row blocks, padded strides.
void TestBitIdenticalToLinear() {
  uint32_t seed = 1;
  for (Fmt f : kFormats) {
    for (size_t cols : ColsFor(f)) {
      for (size_t rows : {size_t{1}, size_t{5}, size_t{8}, size_t{13}}) {
        const Weights w = RandomWeights(f, rows, cols, seed++);
        for (size_t batch : {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}) {
          if (cols >= 1536 && batch != 3 && batch != 8 && batch != 17) continue;
          const size_t x_stride = cols + (batch % 3);
          const size_t y_stride = rows + (batch % 2) * 3;
          const std::vector<float> x =
              test::RandomFloats(batch * x_stride, -1.0f, 1.0f, seed++);
          CheckRows(f, w, x, x_stride, y_stride, batch, rows, cols, 0, rows);
        }
      }
    }
  }
}

// Sub-ranges of the outputs (as threads own them): only those outputs are
// written, each with the bits of the full call (CheckRows compares each with
// the matrix-vector kernel over the same range, whose results do not depend on
// the range: tests/ops/linear_*_test.cc).
void TestRowRanges() {
  const size_t rows = 21;
  const size_t kRanges[][2] = {{0, 0},  {0, 21},  {3, 4},  {5, 21},
                               {2, 11}, {20, 21}, {7, 7},  {1, 17}};
  uint32_t seed = 500;
  for (Fmt f : kFormats) {
    const size_t cols = IsQuant(f) ? 672 : 1000;
    const Weights w = RandomWeights(f, rows, cols, seed++);
    for (size_t batch : {size_t{1}, size_t{4}, size_t{8}}) {
      const std::vector<float> x =
          test::RandomFloats(batch * cols, -2.0f, 2.0f, seed++);
      std::vector<float> full(batch * rows);
      KernelsFor(f).rows_target(w.bytes.data(), x.data(), cols, full.data(),
                                rows, batch, rows, cols, 0, rows);
      for (const auto& range : kRanges) {
        CheckRows(f, w, x, cols, rows, batch, rows, cols, range[0], range[1]);
        std::vector<float> y(batch * rows, test::Sentinel());
        KernelsFor(f).rows_dispatched(w.bytes.data(), x.data(), cols, y.data(),
                                      rows, batch, rows, cols, range[0],
                                      range[1]);
        for (size_t t = 0; t < batch; ++t) {
          for (size_t r = range[0]; r < range[1]; ++r) {
            EXPECT_TRUE(SameBits(y[t * rows + r], full[t * rows + r]))
                << FmtName(f) << " range [" << range[0] << ", " << range[1]
                << ") row " << t << " output " << r;
          }
        }
      }
    }
  }
}

// Exact cases: small integers whose products and sums are exact in f32, so
// every kernel must return the exact value (checks the indexing of rows,
// columns and strides independently of rounding).
void TestExact() {
  const size_t rows = 9, cols = 96, batch = 5, x_stride = 101, y_stride = 11;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<float> wv(rows * cols), x(batch * x_stride);
  for (float& v : wv) v = static_cast<float>(small(rng));
  for (float& v : x) v = static_cast<float>(small(rng));
  for (Fmt f : kFormats) {
    Weights w;
    w.values = wv;
    if (f == Fmt::kF32) {
      w.bytes.resize(wv.size() * sizeof(float));
      memcpy(w.bytes.data(), wv.data(), w.bytes.size());
    } else if (f == Fmt::kBF16) {
      const std::vector<hwy::bfloat16_t> b = test::ToBF16(wv);
      w.bytes.resize(b.size() * sizeof(hwy::bfloat16_t));
      memcpy(w.bytes.data(), b.data(), w.bytes.size());
    } else {
      // Scale d = 1 (f16 0x3C00) and the integer quants directly.
      const bool q8 = f == Fmt::kQ8_0;
      const size_t bb = q8 ? kQ8_0BlockBytes : kQ4_0BlockBytes;
      w.bytes.assign(rows * cols / kQuantBlockSize * bb, 0);
      for (size_t blk = 0; blk < rows * cols / kQuantBlockSize; ++blk) {
        uint8_t* p = &w.bytes[blk * bb];
        p[0] = 0x00;
        p[1] = 0x3C;
        for (size_t j = 0; j < kQuantBlockSize; ++j) {
          const int q = static_cast<int>(wv[blk * kQuantBlockSize + j]);
          if (q8) {
            p[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
          } else if (j < kQuantBlockSize / 2) {
            p[2 + j] = static_cast<uint8_t>((p[2 + j] & 0xF0) | (q + 8));
          } else {
            p[2 + j - 16] =
                static_cast<uint8_t>((p[2 + j - 16] & 0x0F) | ((q + 8) << 4));
          }
        }
      }
    }
    std::vector<float> y(batch * y_stride, test::Sentinel());
    KernelsFor(f).rows_dispatched(w.bytes.data(), x.data(), x_stride, y.data(),
                                  y_stride, batch, rows, cols, 0, rows);
    for (size_t t = 0; t < batch; ++t) {
      for (size_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (size_t c = 0; c < cols; ++c) {
          sum += static_cast<double>(wv[r * cols + c]) * x[t * x_stride + c];
        }
        EXPECT_EQ(static_cast<float>(sum), y[t * y_stride + r])
            << FmtName(f) << " row " << t << " output " << r;
      }
    }
    CheckRows(f, w, x, x_stride, y_stride, batch, rows, cols, 0, rows);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
HWY_BEFORE_TEST(LinearRowsTest);
HWY_EXPORT_AND_TEST_P(LinearRowsTest, TestBitIdenticalToLinear);
HWY_EXPORT_AND_TEST_P(LinearRowsTest, TestRowRanges);
HWY_EXPORT_AND_TEST_P(LinearRowsTest, TestExact);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
