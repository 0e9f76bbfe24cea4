// Tests LinearF32 (ops/linear_f32.cc): the per-target kernel and the dispatched
// function on every compiled Highway target, against LinearF32Reference
// (double).

#include <stddef.h>

#include "ops/linear.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/linear_f32_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/linear_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void TestSizes() {
  TestLinearSizes<float>(&LinearF32Reference, &::cortiq::ops::LinearF32);
}
void TestRowRanges() {
  TestLinearRowRanges<float>(&LinearF32Reference, &::cortiq::ops::LinearF32);
}
void TestRangeIndependent() {
  TestLinearRangeIndependent<float>(&::cortiq::ops::LinearF32);
}
void TestUnaligned() {
  TestLinearUnaligned<float>(&LinearF32Reference, &::cortiq::ops::LinearF32);
}
void TestExactIntegers() {
  TestLinearExactIntegers<float>(&LinearF32Reference,
                                 &::cortiq::ops::LinearF32);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
HWY_BEFORE_TEST(LinearF32Test);
HWY_EXPORT_AND_TEST_P(LinearF32Test, TestSizes);
HWY_EXPORT_AND_TEST_P(LinearF32Test, TestRowRanges);
HWY_EXPORT_AND_TEST_P(LinearF32Test, TestUnaligned);
HWY_EXPORT_AND_TEST_P(LinearF32Test, TestRangeIndependent);
HWY_EXPORT_AND_TEST_P(LinearF32Test, TestExactIntegers);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
