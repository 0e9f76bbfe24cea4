// Per-target checks of LinearQuantRows<Format> (ops/linear_quant-inl.h) and of
// the dispatched public function, against the double reference and against
// the f32 kernel on the dequantized matrix; shared by linear_q8_0_test.cc and
// linear_q4_0_test.cc. A test file defines its format through a QuantCase
// (block size, quantizer, dequantizer, reference, dispatched kernel).
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_TESTS_OPS_LINEAR_QUANT_TEST_INL_H_) == \
    defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_TESTS_OPS_LINEAR_QUANT_TEST_INL_H_
#undef CORTIQ_TESTS_OPS_LINEAR_QUANT_TEST_INL_H_
#else
#define CORTIQ_TESTS_OPS_LINEAR_QUANT_TEST_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/highway.h"
#include "ops/linear-inl.h"
#include "ops/linear_quant-inl.h"
#include "ops/quantize.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using QuantLinearFn = void (*)(const void*, const float*, float*, size_t,
                               size_t, size_t, size_t);

// One weight format under test.
template <class Format>
struct QuantCase {
  void (*quantize)(const float*, size_t, void*);
  void (*dequantize)(const void*, size_t, float*);
  QuantLinearFn reference;
  QuantLinearFn dispatched;
};

// Bound on |kernel - exact| for one row (see LinearQ8_0 in ops/linear.h): per
// lane, a block's partial sum is a chain of 32 / N FMAs, the blocks' d * s a
// chain of cols / 32 FMAs, then log2 N levels of horizontal sum; + 4 for the
// reference's rounding and slack. Returns gamma_k * sum_c |w_c x_c|.
inline double QuantSumErrorBound(size_t cols, size_t lanes, double abs_sum) {
  double k = static_cast<double>(cols / kQuantBlockSize) +
             static_cast<double>(kQuantBlockSize / lanes) + 4.0;
  for (size_t l = lanes; l > 1; l /= 2) k += 1.0;
  return k * test::kU / (1.0 - k * test::kU) * abs_sum;
}

// rows x cols quantized weights: random values in [-1, 1) quantized (each
// block given a random magnitude 2^-6..2^2, so scales vary), or, if raw, random
// bytes with a random f16 scale per block (every quant value, including Q8_0's
// -128 that the quantizer never writes, occurs).
template <class Format>
std::vector<uint8_t> RandomQuantWeights(const QuantCase<Format>& qc,
                                        size_t rows, size_t cols, bool raw,
                                        uint32_t seed) {
  const size_t num_blocks = rows * cols / kQuantBlockSize;
  std::vector<uint8_t> w(num_blocks * Format::kBlockBytes);
  std::mt19937 rng(seed);
  if (raw) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
    for (size_t b = 0; b < num_blocks; ++b) {
      uint8_t* block = &w[b * Format::kBlockBytes];
      const uint16_t d = F32ToF16Bits(scale(rng));
      memcpy(block, &d, sizeof(d));
      for (size_t i = 2; i < Format::kBlockBytes; ++i) {
        block[i] = static_cast<uint8_t>(byte(rng));
      }
    }
  } else {
    std::vector<float> values = test::RandomFloats(rows * cols, -1, 1, seed);
    std::uniform_int_distribution<int> exponent(-6, 2);
    for (size_t b = 0; b < num_blocks; ++b) {
      const float s = ldexpf(1.0f, exponent(rng));
      for (size_t j = 0; j < kQuantBlockSize; ++j) {
        values[b * kQuantBlockSize + j] *= s;
      }
    }
    qc.quantize(values.data(), values.size(), w.data());
  }
  return w;
}

// Runs the per-target kernel and the dispatched one on rows [rb, re) of w x
// and checks both: rows in the range against the reference within
// QuantSumErrorBound, rows outside still hold the NaN sentinel.
template <class Format>
void CheckLinearQuant(const QuantCase<Format>& qc, const void* w,
                      const float* x, size_t rows, size_t cols, size_t rb,
                      size_t re) {
  const QuantDF df;
  std::vector<float> wf(rows * cols);
  qc.dequantize(w, rows * cols, wf.data());
  std::vector<float> expected(rows, test::Sentinel());
  qc.reference(w, x, expected.data(), rows, cols, rb, re);
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<float> y(rows, test::Sentinel());
    if (variant == 0) {
      LinearQuantRows(Format(), w, x, y.data(), rows, cols, rb, re);
    } else {
      qc.dispatched(w, x, y.data(), rows, cols, rb, re);
    }
    for (size_t r = 0; r < rows; ++r) {
      if (r < rb || r >= re) {
        EXPECT_TRUE(isnan(y[r])) << "row " << r << " outside [" << rb << ", "
                                 << re << ") was written";
        continue;
      }
      double abs_sum = 0.0;
      for (size_t c = 0; c < cols; ++c) {
        abs_sum += fabs(static_cast<double>(wf[r * cols + c]) * x[c]);
      }
      const double tol = QuantSumErrorBound(cols, hn::Lanes(df), abs_sum);
      EXPECT_NEAR(y[r], expected[r], tol)
          << "row " << r << " rows " << rows << " cols " << cols << " range ["
          << rb << ", " << re << ") variant "
          << (variant == 0 ? "per-target" : "dispatched");
    }
  }
}

// Row counts covering the 4-row groups and 1..3 leftover rows; column counts
// of one, two, three and five blocks and the model sizes 2560 (E2B hidden) and
// 10240 (E2B MLP width); quantized and raw random blocks.
template <class Format>
void TestLinearQuantSizes(const QuantCase<Format>& qc) {
  // 672 = 21 blocks: one 16-block chunk of scales (DecodeScales16) and a tail.
  const size_t kCols[] = {32, 64, 96, 160, 672, 2560, 10240};
  const size_t kRows[] = {1, 3, 4, 5, 8, 11};
  uint32_t seed = 1;
  for (size_t cols : kCols) {
    for (size_t rows : kRows) {
      for (bool raw : {false, true}) {
        const std::vector<uint8_t> w =
            RandomQuantWeights(qc, rows, cols, raw, seed++);
        const std::vector<float> x =
            test::RandomFloats(cols, -1.0f, 1.0f, seed++);
        CheckLinearQuant(qc, w.data(), x.data(), rows, cols, 0, rows);
      }
    }
  }
}

// Sub-ranges of the rows: only y[row_begin, row_end) is written.
template <class Format>
void TestLinearQuantRowRanges(const QuantCase<Format>& qc) {
  const size_t rows = 13;
  const size_t kRanges[][2] = {{0, 0},  {0, 13},  {3, 4}, {5, 13},
                               {2, 11}, {12, 13}, {7, 7}, {1, 6}};
  for (size_t cols : {size_t{32}, size_t{96}, size_t{2560}}) {
    const std::vector<uint8_t> w =
        RandomQuantWeights(qc, rows, cols, false, 100 + cols);
    const std::vector<float> x =
        test::RandomFloats(cols, -2.0f, 2.0f, 200 + cols);
    for (const auto& range : kRanges) {
      CheckLinearQuant(qc, w.data(), x.data(), rows, cols, range[0], range[1]);
    }
  }
}

// A row's result does not depend on the range it is computed in (on how the
// session splits rows between threads, or where the passes of
// kQuantRowsPerPass rows start): every sub-range [rb, re) of 13 rows,
// per-target and dispatched, reproduces the bits of the full-range call.
template <class Format>
void TestLinearQuantRangeIndependent(const QuantCase<Format>& qc) {
  const size_t rows = 13;
  for (size_t cols : {size_t{32}, size_t{96}, size_t{672}, size_t{2560}}) {
    const std::vector<uint8_t> w =
        RandomQuantWeights(qc, rows, cols, false, 800 + cols);
    const std::vector<float> x =
        test::RandomFloats(cols, -1.0f, 1.0f, 900 + cols);
    std::vector<float> full(rows);
    LinearQuantRows(Format(), w.data(), x.data(), full.data(), rows, cols, 0,
                    rows);
    for (size_t rb = 0; rb < rows; ++rb) {
      for (size_t re = rb + 1; re <= rows; ++re) {
        std::vector<float> y1(rows), y2(rows);
        LinearQuantRows(Format(), w.data(), x.data(), y1.data(), rows, cols,
                        rb, re);
        qc.dispatched(w.data(), x.data(), y2.data(), rows, cols, rb, re);
        for (size_t r = rb; r < re; ++r) {
          EXPECT_EQ(0, memcmp(&full[r], &y1[r], sizeof(float)))
              << "cols " << cols << " row " << r << " range [" << rb << ", "
              << re << ") per-target";
          EXPECT_EQ(0, memcmp(&full[r], &y2[r], sizeof(float)))
              << "cols " << cols << " row " << r << " range [" << rb << ", "
              << re << ") dispatched";
        }
      }
    }
  }
}

// Weights at an odd byte address, x and y off by one float: no alignment is
// assumed anywhere.
template <class Format>
void TestLinearQuantUnaligned(const QuantCase<Format>& qc) {
  const size_t rows = 9;
  for (size_t cols : {size_t{32}, size_t{160}, size_t{2560}}) {
    const std::vector<uint8_t> w =
        RandomQuantWeights(qc, rows, cols, true, 300 + cols);
    std::vector<uint8_t> shifted(w.size() + 1);
    memcpy(shifted.data() + 1, w.data(), w.size());
    const std::vector<float> x =
        test::RandomFloats(cols + 1, -1.0f, 1.0f, 400 + cols);
    CheckLinearQuant(qc, shifted.data() + 1, x.data() + 1, rows, cols, 0, rows);
  }
}

// Scales that are powers of two and small integer activations: every product
// and partial sum is an integer multiple of the smallest scale below 2^24
// units, so every summation order is exact and kernel, reference and the f32
// kernel on the dequantized rows agree bit for bit. Catches a dropped,
// doubled or misplaced quant independently of any tolerance.
template <class Format>
void TestLinearQuantExact(const QuantCase<Format>& qc) {
  const size_t rows = 7;
  for (size_t cols :
       {size_t{32}, size_t{64}, size_t{160}, size_t{672}, size_t{2560}}) {
    std::vector<uint8_t> w =
        RandomQuantWeights(qc, rows, cols, true, 500 + cols);
    const size_t num_blocks = rows * cols / kQuantBlockSize;
    for (size_t b = 0; b < num_blocks; ++b) {
      // d = +-2^e, e in [-2, 0] (f16 bits: sign | (e + 15) << 10). Then
      // |d q x| <= 128 * 6 in units of 2^-2, and even cols = 2560 such terms
      // stay below 2^24 units.
      const uint16_t d =
          static_cast<uint16_t>(((b % 2) ? 0x8000 : 0) | ((13 + b % 3) << 10));
      memcpy(&w[b * Format::kBlockBytes], &d, sizeof(d));
    }
    std::vector<float> x(cols);
    for (size_t c = 0; c < cols; ++c) {
      x[c] = static_cast<float>(static_cast<int>((c * 7) % 13) - 6);
    }
    std::vector<float> wf(rows * cols);
    qc.dequantize(w.data(), rows * cols, wf.data());
    std::vector<float> expected(rows), y1(rows), y2(rows), y3(rows);
    qc.reference(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
    LinearQuantRows(Format(), w.data(), x.data(), y1.data(), rows, cols, 0,
                    rows);
    qc.dispatched(w.data(), x.data(), y2.data(), rows, cols, 0, rows);
    LinearRows(wf.data(), x.data(), y3.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      EXPECT_EQ(expected[r], y1[r]) << "cols " << cols << " row " << r;
      EXPECT_EQ(expected[r], y2[r]) << "cols " << cols << " row " << r;
      EXPECT_EQ(expected[r], y3[r]) << "cols " << cols << " row " << r;
    }
  }
}

// Every kind of finite f16 scale, in every position of the 16-block scale
// chunks: zeros of both signs, the smallest and largest subnormals, the
// smallest normal, the largest finite value (65504), negative values. The
// kernel decodes scales exactly (vcvtph2ps or BlockScale), so it must agree
// with the reference within the usual bound.
template <class Format>
void TestLinearQuantSpecialScales(const QuantCase<Format>& qc) {
  const uint16_t kScales[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF,
                              0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xB555,
                              0x0200, 0x1234, 0x83FF};
  const size_t rows = 5;
  for (size_t cols : {size_t{32}, size_t{672}, size_t{2560}}) {
    std::vector<uint8_t> w =
        RandomQuantWeights(qc, rows, cols, true, 1000 + cols);
    const size_t num_blocks = rows * cols / kQuantBlockSize;
    for (size_t b = 0; b < num_blocks; ++b) {
      const uint16_t d = kScales[(b * 5) % (sizeof(kScales) / 2)];
      memcpy(&w[b * Format::kBlockBytes], &d, sizeof(d));
    }
    const std::vector<float> x =
        test::RandomFloats(cols, -1.0f, 1.0f, 1100 + cols);
    CheckLinearQuant(qc, w.data(), x.data(), rows, cols, 0, rows);
  }
}

// The quantized kernel computes the same matrix-vector product as the f32
// kernel (ops/linear-inl.h LinearRows<float>) on the dequantized rows, up to
// the rounding of the two summation orders: both error bounds added.
template <class Format>
void TestLinearQuantMatchesF32OnDequantized(const QuantCase<Format>& qc) {
  const QuantDF dq;
  const hn::ScalableTag<float> df;
  const size_t rows = 11;
  for (size_t cols :
       {size_t{32}, size_t{64}, size_t{96}, size_t{2560}, size_t{10240}}) {
    const std::vector<uint8_t> w =
        RandomQuantWeights(qc, rows, cols, false, 600 + cols);
    const std::vector<float> x =
        test::RandomFloats(cols, -1.0f, 1.0f, 700 + cols);
    std::vector<float> wf(rows * cols);
    qc.dequantize(w.data(), rows * cols, wf.data());
    std::vector<float> yq(rows), yf(rows);
    LinearQuantRows(Format(), w.data(), x.data(), yq.data(), rows, cols, 0,
                    rows);
    LinearRows(wf.data(), x.data(), yf.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      double abs_sum = 0.0;
      for (size_t c = 0; c < cols; ++c) {
        abs_sum += fabs(static_cast<double>(wf[r * cols + c]) * x[c]);
      }
      const double tol = QuantSumErrorBound(cols, hn::Lanes(dq), abs_sum) +
                         test::SumErrorBound(cols, hn::Lanes(df), 2, abs_sum);
      EXPECT_NEAR(yq[r], yf[r], tol) << "cols " << cols << " row " << r;
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_TESTS_OPS_LINEAR_QUANT_TEST_INL_H_
