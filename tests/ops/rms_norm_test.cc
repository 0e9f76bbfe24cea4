// Tests RmsNorm (ops/rms_norm.cc): the per-target kernel and the dispatched
// function on every compiled Highway target, against RmsNormReference (double).

#include "ops/rms_norm.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include <vector>

#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/rms_norm_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/rms_norm-inl.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr float kEps = 1e-6f;

// Tolerance for one group: the sum of squares has relative error <= g
// (SumErrorBound with 4 chains, relative to itself since all terms are >= 0);
// (m + eps)^(-1/2) halves it, and the f32 rounding of the scale, the two
// multiplies and the reference's own rounding add 4 u.
double RelTol(size_t group_size) {
  const hn::ScalableTag<float> df;
  const double g = test::SumErrorBound(group_size, hn::Lanes(df), 4, 1.0);
  return 0.5 * g + 4.0 * test::kU;
}

// Runs the per-target kernel (out of place and in place) and the dispatched one
// (out of place) and checks them against the reference. The in-place result
// must equal the out-of-place one exactly.
void CheckRmsNorm(const std::vector<float>& x, const float* gain,
                  size_t group_size, float eps) {
  const size_t n = x.size();
  std::vector<float> expected(n);
  RmsNormReference(x.data(), gain, expected.data(), n, group_size, eps);
  std::vector<float> y(n, test::Sentinel()), y_dispatched(n, test::Sentinel());
  std::vector<float> in_place = x;
  RmsNorm(x.data(), gain, y.data(), n, group_size, eps);
  RmsNorm(in_place.data(), gain, in_place.data(), n, group_size, eps);
  ::cortiq::ops::RmsNorm(x.data(), gain, y_dispatched.data(), n, group_size,
                         eps);
  const double rel = RelTol(group_size);
  for (size_t i = 0; i < n; ++i) {
    const double tol = rel * fabs(expected[i]) + 1e-37;
    EXPECT_NEAR(y[i], expected[i], tol)
        << "i " << i << " group_size " << group_size
        << (gain ? " gain" : " no gain");
    EXPECT_NEAR(y_dispatched[i], expected[i], tol) << "dispatched, i " << i;
  }
  EXPECT_EQ(0, memcmp(y.data(), in_place.data(), n * sizeof(float)))
      << "in place differs, group_size " << group_size;
}

void TestSizesWithAndWithoutGain() {
  const size_t kGroupSizes[] = {1, 2, 7, 16, 33, 256, 512, 1536, 2560};
  const size_t kGroups[] = {1, 3, 8};
  uint32_t seed = 1;
  for (size_t gs : kGroupSizes) {
    const std::vector<float> gain = test::RandomFloats(gs, 0.5f, 2.0f, seed++);
    for (size_t groups : kGroups) {
      const std::vector<float> x =
          test::RandomFloats(gs * groups, -3.0f, 3.0f, seed++);
      CheckRmsNorm(x, gain.data(), gs, kEps);
      CheckRmsNorm(x, nullptr, gs, kEps);
    }
  }
}

// Each group is normalized with its own mean square: groups of very different
// magnitude (the per-head q/k/v norms) must not influence each other.
void TestGroupsAreIndependent() {
  const size_t gs = 33, groups = 4;
  std::vector<float> x = test::RandomFloats(gs * groups, -1.0f, 1.0f, 77);
  for (size_t i = 0; i < gs; ++i) x[gs + i] *= 1000.0f;  // group 1 large
  for (size_t i = 0; i < gs; ++i)
    x[2 * gs + i] *= 1e-3f;  // group 2 small (eps matters)
  CheckRmsNorm(x, nullptr, gs, kEps);
  // Without gain and with eps negligible, each group has mean square 1 after
  // the norm.
  std::vector<float> y(x.size());
  RmsNorm(x.data(), nullptr, y.data(), x.size(), gs, kEps);
  for (size_t g : {size_t{0}, size_t{1}, size_t{3}}) {
    double ms = 0.0;
    for (size_t i = 0; i < gs; ++i)
      ms += static_cast<double>(y[g * gs + i]) * y[g * gs + i];
    EXPECT_NEAR(ms / gs, 1.0, 1e-4) << "group " << g;
  }
}

// eps sits inside the root: all-zero input gives 0 (no NaN), and tiny inputs
// are damped.
void TestEpsAndZeros() {
  const std::vector<float> zeros(64, 0.0f);
  std::vector<float> y(64, test::Sentinel());
  RmsNorm(zeros.data(), nullptr, y.data(), 64, 64, kEps);
  for (float v : y) EXPECT_EQ(0.0f, v);
  // x = 1e-3 everywhere: y = 1e-3 / sqrt(1e-6 + 1e-6) = 1/sqrt(2).
  const std::vector<float> tiny(40, 1e-3f);
  std::vector<float> y2(40);
  RmsNorm(tiny.data(), nullptr, y2.data(), 40, 40, kEps);
  for (float v : y2) EXPECT_NEAR(v, 0.70710678, 1e-6);
  CheckRmsNorm(tiny, nullptr, 40, kEps);
  // [3, 4] with eps = 0: mean square 12.5 -> [3, 4] / sqrt(12.5), times gain
  // [2, -1].
  const float x34[2] = {3.0f, 4.0f};
  const float gain[2] = {2.0f, -1.0f};
  float y34[2];
  RmsNorm(x34, gain, y34, 2, 2, 0.0f);
  EXPECT_NEAR(y34[0], 2.0 * 0.848528137423857, 2e-7);
  EXPECT_NEAR(y34[1], -1.131370849898476, 2e-7);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
HWY_BEFORE_TEST(RmsNormTest);
HWY_EXPORT_AND_TEST_P(RmsNormTest, TestSizesWithAndWithoutGain);
HWY_EXPORT_AND_TEST_P(RmsNormTest, TestGroupsAreIndependent);
HWY_EXPORT_AND_TEST_P(RmsNormTest, TestEpsAndZeros);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
