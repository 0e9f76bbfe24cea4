// Tests LinearQ4_0 (ops/linear_q4_0.cc): the per-target kernel and the
// dispatched function on every compiled Highway target, against
// LinearQ4_0Reference (double), exactly on integer-valued cases, and against
// the f32 kernel on the dequantized matrix (tests/ops/linear_quant_test-inl.h).

#include <stddef.h>

#include "ops/linear.h"
#include "ops/quantize.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/linear_q4_0_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/linear_quant_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

QuantCase<Q4_0Format> Case() {
  return {&QuantizeRowQ4_0, &DequantizeRowQ4_0, &LinearQ4_0Reference,
          &::cortiq::ops::LinearQ4_0};
}

void TestSizes() { TestLinearQuantSizes(Case()); }
void TestRowRanges() { TestLinearQuantRowRanges(Case()); }
void TestUnaligned() { TestLinearQuantUnaligned(Case()); }
void TestRangeIndependent() { TestLinearQuantRangeIndependent(Case()); }
void TestSpecialScales() { TestLinearQuantSpecialScales(Case()); }
void TestExact() { TestLinearQuantExact(Case()); }
void TestMatchesF32OnDequantized() {
  TestLinearQuantMatchesF32OnDequantized(Case());
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
HWY_BEFORE_TEST(LinearQ4_0Test);
HWY_EXPORT_AND_TEST_P(LinearQ4_0Test, TestSizes);
HWY_EXPORT_AND_TEST_P(LinearQ4_0Test, TestRowRanges);
HWY_EXPORT_AND_TEST_P(LinearQ4_0Test, TestUnaligned);
HWY_EXPORT_AND_TEST_P(LinearQ4_0Test, TestRangeIndependent);
HWY_EXPORT_AND_TEST_P(LinearQ4_0Test, TestSpecialScales);
HWY_EXPORT_AND_TEST_P(LinearQ4_0Test, TestExact);
HWY_EXPORT_AND_TEST_P(LinearQ4_0Test, TestMatchesF32OnDequantized);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
