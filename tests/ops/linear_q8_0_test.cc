// Tests LinearQ8_0 (ops/linear_q8_0.cc): the per-target kernel and the
// dispatched function on every compiled Highway target, against
// LinearQ8_0Reference (double), exactly on integer-valued cases, and against
// the f32 kernel on the dequantized matrix (tests/ops/linear_quant_test-inl.h).

#include <stddef.h>

#include "ops/linear.h"
#include "ops/quantize.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/linear_q8_0_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/linear_quant_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

QuantCase<Q8_0Format> Case() {
  return {&QuantizeRowQ8_0, &DequantizeRowQ8_0, &LinearQ8_0Reference,
          &::cortiq::ops::LinearQ8_0};
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
HWY_BEFORE_TEST(LinearQ8_0Test);
HWY_EXPORT_AND_TEST_P(LinearQ8_0Test, TestSizes);
HWY_EXPORT_AND_TEST_P(LinearQ8_0Test, TestRowRanges);
HWY_EXPORT_AND_TEST_P(LinearQ8_0Test, TestUnaligned);
HWY_EXPORT_AND_TEST_P(LinearQ8_0Test, TestRangeIndependent);
HWY_EXPORT_AND_TEST_P(LinearQ8_0Test, TestSpecialScales);
HWY_EXPORT_AND_TEST_P(LinearQ8_0Test, TestExact);
HWY_EXPORT_AND_TEST_P(LinearQ8_0Test, TestMatchesF32OnDequantized);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
