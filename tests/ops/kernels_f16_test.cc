// Tests LinearF16, MatMulF16 and GatherRowF16 (ops/kernels_f16.cc): the
// per-target kernels and the dispatched functions on every compiled Highway
// target, against the double references, and bit for bit against the f32
// kernels on the exactly widened weights; the widening itself on all 65536
// half values (also on targets without F16C).

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "ops/gather.h"
#include "ops/cpu_features.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/kernels_f16_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/gather-inl.h"
#include "ops/matmul-inl.h"
#include "tests/ops/linear_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using F16 = hwy::float16_t;

void TestSizes() {
  TestLinearSizes<F16>(&LinearF16Reference, &::cortiq::ops::LinearF16);
}
void TestRowRanges() {
  TestLinearRowRanges<F16>(&LinearF16Reference, &::cortiq::ops::LinearF16);
}
void TestRangeIndependent() {
  TestLinearRangeIndependent<F16>(&::cortiq::ops::LinearF16);
}
void TestUnaligned() {
  TestLinearUnaligned<F16>(&LinearF16Reference, &::cortiq::ops::LinearF16);
}
void TestExactIntegers() {
  TestLinearExactIntegers<F16>(&LinearF16Reference, &::cortiq::ops::LinearF16);
}

// Widening is exact and the summation order is that of f32 weights: the f16
// kernels reproduce the f32 kernels on the widened matrix bit for bit, with
// either weight prefetch (into L1, or into L2 groups ahead where
// DecodePrefetchIntoL2), on the whole matrix and on a row range that starts
// and ends mid-group.
void TestMatchesF32OnWidenedWeights() {
  const size_t rows = 11;
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    for (size_t cols : {size_t{1}, size_t{7}, size_t{33}, size_t{1000}, size_t{2560}}) {
    const std::vector<F16> w = RandomWeights<F16>(rows * cols, 500 + cols);
    const std::vector<float> wf = WidenWeights(w);
    const std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 600 + cols);
    std::vector<float> y_f16(rows), y_f32(rows), y_dispatched(rows);
    LinearRows(w.data(), x.data(), y_f16.data(), rows, cols, 0, rows);
    LinearRows(wf.data(), x.data(), y_f32.data(), rows, cols, 0, rows);
    ::cortiq::ops::LinearF16(w.data(), x.data(), y_dispatched.data(), rows, cols, 0, rows);
    EXPECT_EQ(0, memcmp(y_f16.data(), y_f32.data(), rows * sizeof(float))) << cols;
    EXPECT_EQ(0, memcmp(y_dispatched.data(), y_f32.data(), rows * sizeof(float))) << cols;
    std::vector<float> y_range(rows, 0.0f);
    ::cortiq::ops::LinearF16(w.data(), x.data(), y_range.data(), rows, cols, 1, 10);
    EXPECT_EQ(0, memcmp(y_range.data() + 1, y_f32.data() + 1, 9 * sizeof(float)))
        << cols << " into_l2 " << into_l2;
    }
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

// MatMul: bit for bit the f32 kernel on the widened matrix (per-target and
// dispatched), within the f32 kernel's bound of the double reference, nothing
// written outside the output rows.
void TestMatMul() {
  const hn::ScalableTag<float> df;
  struct Shape {
    size_t rows, cols, batch, rb, re;
  };
  const Shape kShapes[] = {{5, 1, 1, 0, 5}, {37, 130, 7, 3, 36}, {33, 1100, 17, 0, 33},
                           {9, 513, 64, 1, 8}};
  uint32_t seed = 77;
  for (const Shape& s : kShapes) {
    const std::vector<F16> w = RandomWeights<F16>(s.rows * s.cols, seed++);
    const std::vector<float> wf = WidenWeights(w);
    const size_t x_stride = s.cols + 1, y_stride = s.rows + 3;
    std::vector<float> x(s.batch * x_stride, test::Sentinel());
    const std::vector<float> v = test::RandomFloats(s.batch * s.cols, -1, 1, seed++);
    for (size_t t = 0; t < s.batch; ++t) {
      memcpy(&x[t * x_stride], &v[t * s.cols], s.cols * sizeof(float));
    }
    const size_t y_size = (s.batch + 1) * y_stride;
    std::vector<float> f32(y_size, test::Sentinel()), ref(y_size, test::Sentinel());
    MatMulRows(F32Weights{wf.data(), s.cols}, x.data(), x_stride, f32.data(), y_stride,
               s.batch, s.rows, s.cols, s.rb, s.re);
    MatMulF16Reference(w.data(), x.data(), x_stride, ref.data(), y_stride, s.batch, s.rows,
                       s.cols, s.rb, s.re);
    for (int variant = 0; variant < 2; ++variant) {
      std::vector<float> y(y_size, test::Sentinel());
      if (variant == 0) {
        MatMulRows(F16Weights{w.data(), s.cols}, x.data(), x_stride, y.data(), y_stride,
                   s.batch, s.rows, s.cols, s.rb, s.re);
      } else {
        ::cortiq::ops::MatMulF16(w.data(), x.data(), x_stride, y.data(), y_stride,
                                 s.batch, s.rows, s.cols, s.rb, s.re);
      }
      EXPECT_EQ(0, memcmp(y.data(), f32.data(), y_size * sizeof(float)))
          << "cols " << s.cols << " variant " << variant;
      for (size_t t = 0; t < s.batch; ++t) {
        for (size_t r = s.rb; r < s.re; ++r) {
          double abs_sum = 0.0;
          for (size_t c = 0; c < s.cols; ++c) {
            abs_sum += fabs(static_cast<double>(wf[r * s.cols + c]) * x[t * x_stride + c]);
          }
          const double tol = test::SumErrorBound(s.cols, hn::Lanes(df), 1, abs_sum) * 2;
          EXPECT_NEAR(y[t * y_stride + r], ref[t * y_stride + r], tol);
        }
      }
    }
  }
}

// GatherRowF16 bit for bit against the reference; with scale 1 over a table
// holding every f16 bit pattern (256 rows x 256), each entry is the exact
// widening F16BitsToF32 (NaNs stay NaNs), whatever the target.
void TestGather() {
  std::vector<F16> table(256 * 256);
  for (size_t i = 0; i < table.size(); ++i) {
    const uint16_t bits = static_cast<uint16_t>(i);
    memcpy(&table[i], &bits, sizeof(bits));
  }
  for (size_t row = 0; row < 256; ++row) {
    std::vector<float> y(257, test::Sentinel()), yd(257, test::Sentinel());
    GatherRow(table.data(), 256, row, 0, 256, 1.0f, y.data());
    ::cortiq::ops::GatherRowF16(table.data(), 256, row, 0, 256, 1.0f, yd.data());
    for (size_t c = 0; c < 256; ++c) {
      const float want = F16BitsToF32(static_cast<uint16_t>(row * 256 + c));
      if (isnan(want)) {
        EXPECT_TRUE(isnan(y[c]) && isnan(yd[c])) << row * 256 + c;
      } else {
        EXPECT_EQ(0, memcmp(&want, &y[c], 4)) << std::hex << row * 256 + c;
        EXPECT_EQ(0, memcmp(&want, &yd[c], 4)) << std::hex << row * 256 + c;
      }
    }
    EXPECT_TRUE(isnan(y[256]) && isnan(yd[256]));
  }
  const std::vector<F16> w = RandomWeights<F16>(7 * 300, 99);
  for (size_t begin : {size_t{0}, size_t{1}, size_t{33}}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{17}, size_t{256}}) {
      for (float scale : {1.0f, 39.25f}) {
        std::vector<float> y(count + 1, test::Sentinel()), ref(count + 1, test::Sentinel());
        ::cortiq::ops::GatherRowF16(w.data(), 300, 4, begin, count, scale, y.data());
        GatherRowF16Reference(w.data(), 300, 4, begin, count, scale, ref.data());
        EXPECT_EQ(0, memcmp(y.data(), ref.data(), (count + 1) * sizeof(float)));
      }
    }
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
HWY_BEFORE_TEST(KernelsF16Test);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestSizes);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestRowRanges);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestRangeIndependent);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestUnaligned);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestExactIntegers);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestMatchesF32OnWidenedWeights);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestMatMul);
HWY_EXPORT_AND_TEST_P(KernelsF16Test, TestGather);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
