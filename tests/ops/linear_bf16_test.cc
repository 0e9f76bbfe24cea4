// Tests LinearBF16 (ops/linear_bf16.cc): the per-target kernel and the
// dispatched function on every compiled Highway target, against
// LinearBF16Reference (double) and, bit for bit, against the f32 kernel on the
// exactly widened weights.

#include <stddef.h>
#include <string.h>

#include <vector>

#include "ops/cpu_features.h"
#include "ops/linear.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/linear_bf16_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/linear_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void TestSizes() {
  TestLinearSizes<hwy::bfloat16_t>(&LinearBF16Reference,
                                   &::cortiq::ops::LinearBF16);
}
void TestRowRanges() {
  TestLinearRowRanges<hwy::bfloat16_t>(&LinearBF16Reference,
                                       &::cortiq::ops::LinearBF16);
}
void TestRangeIndependent() {
  TestLinearRangeIndependent<hwy::bfloat16_t>(&::cortiq::ops::LinearBF16);
}
void TestUnaligned() {
  TestLinearUnaligned<hwy::bfloat16_t>(&LinearBF16Reference,
                                       &::cortiq::ops::LinearBF16);
}
void TestExactIntegers() {
  TestLinearExactIntegers<hwy::bfloat16_t>(&LinearBF16Reference,
                                           &::cortiq::ops::LinearBF16);
}

// Widening is exact and the summation order is the same as for f32 weights, so
// the bf16 kernel must reproduce the f32 kernel on the widened matrix exactly
// (this pins down that PromoteTo keeps the lane order). Both weight prefetches
// (into L1, or into L2 groups ahead where DecodePrefetchIntoL2) give those
// bits, on the whole matrix and on a row range that starts and ends mid-group.
void TestMatchesF32OnWidenedWeights() {
  const size_t rows = 11;
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    for (size_t cols :
         {size_t{1}, size_t{7}, size_t{33}, size_t{1000}, size_t{2560}}) {
      const std::vector<hwy::bfloat16_t> w =
          RandomWeights<hwy::bfloat16_t>(rows * cols, 500 + cols);
      const std::vector<float> wf = test::ToF32(w);
      const std::vector<float> x =
          test::RandomFloats(cols, -1.0f, 1.0f, 600 + cols);
      std::vector<float> y_bf16(rows), y_f32(rows), y_dispatched(rows);
      LinearRows(w.data(), x.data(), y_bf16.data(), rows, cols, 0, rows);
      LinearRows(wf.data(), x.data(), y_f32.data(), rows, cols, 0, rows);
      ::cortiq::ops::LinearBF16(w.data(), x.data(), y_dispatched.data(), rows,
                                cols, 0, rows);
      EXPECT_EQ(0, memcmp(y_bf16.data(), y_f32.data(), rows * sizeof(float)))
          << "cols " << cols;
      EXPECT_EQ(0,
                memcmp(y_dispatched.data(), y_f32.data(), rows * sizeof(float)))
          << "cols " << cols;
      std::vector<float> y_range(rows, 0.0f);
      ::cortiq::ops::LinearBF16(w.data(), x.data(), y_range.data(), rows, cols, 1, 10);
      EXPECT_EQ(0, memcmp(y_range.data() + 1, y_f32.data() + 1, 9 * sizeof(float)))
          << "cols " << cols << " into_l2 " << into_l2;
    }
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
HWY_BEFORE_TEST(LinearBF16Test);
HWY_EXPORT_AND_TEST_P(LinearBF16Test, TestSizes);
HWY_EXPORT_AND_TEST_P(LinearBF16Test, TestRowRanges);
HWY_EXPORT_AND_TEST_P(LinearBF16Test, TestUnaligned);
HWY_EXPORT_AND_TEST_P(LinearBF16Test, TestRangeIndependent);
HWY_EXPORT_AND_TEST_P(LinearBF16Test, TestExactIntegers);
HWY_EXPORT_AND_TEST_P(LinearBF16Test, TestMatchesF32OnWidenedWeights);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
