// Per-target checks of LinearRows<WT> (ops/linear-inl.h) and of the dispatched
// public function against the double reference; shared by linear_f32_test.cc,
// linear_bf16_test.cc and kernels_f16_test.cc.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_TESTS_OPS_LINEAR_TEST_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_TESTS_OPS_LINEAR_TEST_INL_H_
#undef CORTIQ_TESTS_OPS_LINEAR_TEST_INL_H_
#else
#define CORTIQ_TESTS_OPS_LINEAR_TEST_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

#include <vector>

#include "gtest/gtest.h"
#include "hwy/highway.h"
#include "ops/linear-inl.h"
#include "ops/quantize.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename WT>
using LinearFn = void (*)(const WT*, const float*, float*, size_t, size_t,
                          size_t, size_t);

// Returns the weights as f32 (exactly widened for bf16).
inline std::vector<float> WidenWeights(const std::vector<float>& w) {
  return w;
}
inline std::vector<float> WidenWeights(const std::vector<hwy::bfloat16_t>& w) {
  return test::ToF32(w);
}

inline std::vector<float> WidenWeights(const std::vector<hwy::float16_t>& w) {
  std::vector<float> out(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    uint16_t bits;
    memcpy(&bits, &w[i], sizeof(bits));
    out[i] = F16BitsToF32(bits);
  }
  return out;
}

// f32 -> f16 (F32ToF16Bits) as hwy::float16_t.
inline hwy::float16_t ToF16(float f) {
  const uint16_t bits = F32ToF16Bits(f);
  hwy::float16_t h;
  memcpy(&h, &bits, sizeof(h));
  return h;
}

// Random weights of type WT in [-1, 1).
template <typename WT>
std::vector<WT> RandomWeights(size_t n, uint32_t seed);
template <>
inline std::vector<float> RandomWeights<float>(size_t n, uint32_t seed) {
  return test::RandomFloats(n, -1.0f, 1.0f, seed);
}
template <>
inline std::vector<hwy::bfloat16_t> RandomWeights<hwy::bfloat16_t>(
    size_t n, uint32_t seed) {
  return test::ToBF16(test::RandomFloats(n, -1.0f, 1.0f, seed));
}
template <>
inline std::vector<hwy::float16_t> RandomWeights<hwy::float16_t>(
    size_t n, uint32_t seed) {
  const std::vector<float> f = test::RandomFloats(n, -1.0f, 1.0f, seed);
  std::vector<hwy::float16_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = ToF16(f[i]);
  return out;
}

// Runs the per-target kernel and `dispatched` on rows [rb, re) of w x and
// checks both: rows in the range against LinearReference within SumErrorBound
// (DotRows4: 2 chains; the bound for Dot's 4 chains is smaller), rows outside
// still hold the NaN sentinel.
template <typename WT>
void CheckLinear(const WT* w, const float* x, size_t rows, size_t cols,
                 size_t rb, size_t re, const std::vector<float>& w_f32,
                 LinearFn<WT> reference, LinearFn<WT> dispatched) {
  const hn::ScalableTag<float> df;
  std::vector<float> expected(rows, test::Sentinel());
  reference(w, x, expected.data(), rows, cols, rb, re);
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<float> y(rows, test::Sentinel());
    if (variant == 0) {
      LinearRows(w, x, y.data(), rows, cols, rb, re);
    } else {
      dispatched(w, x, y.data(), rows, cols, rb, re);
    }
    for (size_t r = 0; r < rows; ++r) {
      if (r < rb || r >= re) {
        EXPECT_TRUE(isnan(y[r])) << "row " << r << " outside [" << rb << ", "
                                 << re << ") was written";
        continue;
      }
      double abs_sum = 0.0;
      for (size_t c = 0; c < cols; ++c) {
        abs_sum += fabs(static_cast<double>(w_f32[r * cols + c]) * x[c]);
      }
      const double tol = test::SumErrorBound(cols, hn::Lanes(df), 2, abs_sum);
      EXPECT_NEAR(y[r], expected[r], tol)
          << "row " << r << " rows " << rows << " cols " << cols << " range ["
          << rb << ", " << re << ") variant "
          << (variant == 0 ? "per-target" : "dispatched");
    }
  }
}

// All row counts (covering the 4-row blocks and 1..3 leftover rows) and column
// counts (1, below / at / above one and two vectors of every target, and model
// sizes).
template <typename WT>
void TestLinearSizes(LinearFn<WT> reference, LinearFn<WT> dispatched) {
  const size_t kCols[] = {1,  2,  3,  7,  8,   15,   16,
                          17, 31, 33, 64, 100, 1000, 2560};
  const size_t kRows[] = {1, 3, 4, 5, 8, 11};
  uint32_t seed = 1;
  for (size_t cols : kCols) {
    for (size_t rows : kRows) {
      const std::vector<WT> w = RandomWeights<WT>(rows * cols, seed++);
      const std::vector<float> x =
          test::RandomFloats(cols, -1.0f, 1.0f, seed++);
      CheckLinear(w.data(), x.data(), rows, cols, 0, rows, WidenWeights(w),
                  reference, dispatched);
    }
  }
}

// Sub-ranges of the rows: only y[row_begin, row_end) is written.
template <typename WT>
void TestLinearRowRanges(LinearFn<WT> reference, LinearFn<WT> dispatched) {
  const size_t rows = 13;
  const size_t kRanges[][2] = {{0, 0},  {0, 13},  {3, 4}, {5, 13},
                               {2, 11}, {12, 13}, {7, 7}, {1, 6}};
  for (size_t cols : {size_t{1}, size_t{33}, size_t{2560}}) {
    const std::vector<WT> w = RandomWeights<WT>(rows * cols, 100 + cols);
    const std::vector<float> x =
        test::RandomFloats(cols, -2.0f, 2.0f, 200 + cols);
    for (const auto& range : kRanges) {
      CheckLinear(w.data(), x.data(), rows, cols, range[0], range[1],
                  WidenWeights(w), reference, dispatched);
    }
  }
}

// A row's result does not depend on the range it is computed in (on how the
// session splits rows between threads, or where the 4-row groups start):
// every sub-range [rb, re) of 13 rows, per-target and dispatched, reproduces
// the bits of the full-range call.
template <typename WT>
void TestLinearRangeIndependent(LinearFn<WT> dispatched) {
  const size_t rows = 13;
  for (size_t cols : {size_t{1}, size_t{17}, size_t{33}, size_t{2560}}) {
    const std::vector<WT> w = RandomWeights<WT>(rows * cols, 300 + cols);
    const std::vector<float> x =
        test::RandomFloats(cols, -1.0f, 1.0f, 400 + cols);
    std::vector<float> full(rows);
    LinearRows(w.data(), x.data(), full.data(), rows, cols, 0, rows);
    for (size_t rb = 0; rb < rows; ++rb) {
      for (size_t re = rb + 1; re <= rows; ++re) {
        std::vector<float> y1(rows), y2(rows);
        LinearRows(w.data(), x.data(), y1.data(), rows, cols, rb, re);
        dispatched(w.data(), x.data(), y2.data(), rows, cols, rb, re);
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

// Unaligned w, x and y (offset by one element from the allocation).
template <typename WT>
void TestLinearUnaligned(LinearFn<WT> reference, LinearFn<WT> dispatched) {
  const size_t rows = 9;
  for (size_t cols : {size_t{7}, size_t{33}, size_t{1000}}) {
    const std::vector<WT> w = RandomWeights<WT>(rows * cols + 1, 300 + cols);
    const std::vector<float> x =
        test::RandomFloats(cols + 1, -1.0f, 1.0f, 400 + cols);
    const std::vector<float> w_f32 = WidenWeights(w);
    const std::vector<float> w_f32_shifted(w_f32.begin() + 1, w_f32.end());
    CheckLinear(w.data() + 1, x.data() + 1, rows, cols, 0, rows, w_f32_shifted,
                reference, dispatched);
  }
}

// Small integers (exact in bf16 and f32) whose partial sums stay below 2^24:
// every summation order is exact, so the result must equal the reference bit
// for bit. Catches a dropped or doubled element independently of any tolerance.
template <typename WT>
void TestLinearExactIntegers(LinearFn<WT> reference, LinearFn<WT> dispatched) {
  const size_t rows = 7;
  for (size_t cols :
       {size_t{1}, size_t{5}, size_t{33}, size_t{1000}, size_t{2560}}) {
    std::vector<float> wf(rows * cols), x(cols);
    for (size_t i = 0; i < wf.size(); ++i)
      wf[i] = static_cast<float>(static_cast<int>(i % 17) - 8);
    for (size_t c = 0; c < cols; ++c)
      x[c] = static_cast<float>(static_cast<int>(c % 13) - 6);
    std::vector<WT> w(wf.size());
    for (size_t i = 0; i < wf.size(); ++i) {
      if constexpr (hwy::IsSame<WT, hwy::bfloat16_t>()) {
        w[i] = F32ToBF16(wf[i]);
      } else if constexpr (hwy::IsSame<WT, hwy::float16_t>()) {
        w[i] = ToF16(wf[i]);
      } else {
        w[i] = wf[i];
      }
    }
    std::vector<float> expected(rows), y1(rows), y2(rows);
    reference(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
    LinearRows(w.data(), x.data(), y1.data(), rows, cols, 0, rows);
    dispatched(w.data(), x.data(), y2.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      EXPECT_EQ(expected[r], y1[r]) << "cols " << cols << " row " << r;
      EXPECT_EQ(expected[r], y2[r]) << "cols " << cols << " row " << r;
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_TESTS_OPS_LINEAR_TEST_INL_H_
