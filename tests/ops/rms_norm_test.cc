// Tests RmsNorm and ResidualRmsNorm (ops/rms_norm.cc): the per-target kernels
// and the dispatched functions on every compiled Highway target, against the
// double references; ResidualRmsNorm also bit for bit against RmsNorm, Add,
// Scale run in sequence. Compiled with -ffp-contract=off like ops/rms_norm.cc
// (tests/ops/CMakeLists.txt), so the per-target copies here round as the
// library's do.

#include "ops/rms_norm.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <vector>

#include "ops/elementwise.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/rms_norm_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/elementwise-inl.h"
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

// ResidualRmsNorm against ResidualRmsNormReference. With n_i = x_i s_g gain_i
// (exact) and c the scalar, the kernel computes n_i with relative error <=
// RelTol(group_size) (as RmsNorm), rounds r_i + n_i and the product by c once
// each (u each; the sum can cancel, so its error is relative to |r_i| + |n_i|,
// not to y_i), and the reference rounds once more:
//
//     |y_i - ref_i| <= |c| (RelTol |n_i| + 2u (|r_i| + |n_i|)) + 2u |ref_i|
//
// (2u rather than u on the sum for the second-order terms).
//
// Also checks, for the per-target kernel and the dispatched one: in place on
// the residual and on x, and bit-identity with RmsNorm, Add, Scale in sequence
// (and with RmsNorm, Add alone when the scalar is 1).
void CheckResidualRmsNorm(const std::vector<float>& r,
                          const std::vector<float>& x, const float* gain,
                          float scalar, size_t group_size, float eps) {
  const size_t n = x.size();
  const char* what = gain != nullptr ? " gain" : " no gain";
  std::vector<float> expected(n), normed(n);
  ResidualRmsNormReference(r.data(), x.data(), gain, scalar, expected.data(), n,
                           group_size, eps);
  // n_i in double, for the tolerance.
  RmsNormReference(x.data(), gain, normed.data(), n, group_size, eps);

  std::vector<float> y(n + 1, test::Sentinel());
  ResidualRmsNorm(r.data(), x.data(), gain, scalar, y.data(), n, group_size,
                  eps);
  EXPECT_TRUE(isnan(y[n])) << "wrote past n = " << n;
  std::vector<float> y_dispatched(n);
  ::cortiq::ops::ResidualRmsNorm(r.data(), x.data(), gain, scalar,
                                 y_dispatched.data(), n, group_size, eps);
  const double rel = RelTol(group_size);
  const double c = fabs(static_cast<double>(scalar));
  for (size_t i = 0; i < n; ++i) {
    const double ni = fabs(static_cast<double>(normed[i]));
    const double tol = c * (rel * ni + 2.0 * test::kU * (fabs(r[i]) + ni)) +
                       2.0 * test::kU * fabs(expected[i]) + 1e-37;
    ASSERT_NEAR(y[i], expected[i], tol)
        << "i " << i << " group_size " << group_size << what << " scalar "
        << scalar;
    ASSERT_NEAR(y_dispatched[i], expected[i], tol) << "dispatched, i " << i;
  }

  // In place: y == residual, y == x, and residual == x == y.
  std::vector<float> on_r = r, on_x = x;
  ResidualRmsNorm(on_r.data(), x.data(), gain, scalar, on_r.data(), n,
                  group_size, eps);
  ResidualRmsNorm(r.data(), on_x.data(), gain, scalar, on_x.data(), n,
                  group_size, eps);
  EXPECT_EQ(0, memcmp(y.data(), on_r.data(), n * sizeof(float)))
      << "in place on the residual differs, group_size " << group_size << what;
  EXPECT_EQ(0, memcmp(y.data(), on_x.data(), n * sizeof(float)))
      << "in place on x differs, group_size " << group_size << what;
  std::vector<float> both = x, both_unfused(n);
  ResidualRmsNorm(both.data(), both.data(), gain, scalar, both.data(), n,
                  group_size, eps);
  RmsNorm(x.data(), gain, both_unfused.data(), n, group_size, eps);
  Add(x.data(), both_unfused.data(), both_unfused.data(), n);
  Scale(both_unfused.data(), scalar, both_unfused.data(), n);
  EXPECT_EQ(0, memcmp(both.data(), both_unfused.data(), n * sizeof(float)))
      << "residual == x == y differs from the unfused sequence";

  // The unfused sequence, per target and dispatched: bit-identical.
  std::vector<float> t(n), t_dispatched(n);
  RmsNorm(x.data(), gain, t.data(), n, group_size, eps);
  Add(r.data(), t.data(), t.data(), n);
  Scale(t.data(), scalar, t.data(), n);
  EXPECT_EQ(0, memcmp(y.data(), t.data(), n * sizeof(float)))
      << "differs from RmsNorm, Add, Scale; group_size " << group_size << what
      << " scalar " << scalar;
  ::cortiq::ops::RmsNorm(x.data(), gain, t_dispatched.data(), n, group_size,
                         eps);
  ::cortiq::ops::Add(r.data(), t_dispatched.data(), t_dispatched.data(), n);
  if (scalar != 1.0f) {  // scalar 1: RmsNorm then Add only
    ::cortiq::ops::Scale(t_dispatched.data(), scalar, t_dispatched.data(), n);
  }
  EXPECT_EQ(0,
            memcmp(y_dispatched.data(), t_dispatched.data(), n * sizeof(float)))
      << "dispatched differs from the dispatched unfused sequence; group_size "
      << group_size << what << " scalar " << scalar;
}

void TestResidualRmsNorm() {
  const size_t kGroupSizes[] = {1, 2, 7, 16, 33, 256, 1536, 2560};
  const size_t kGroups[] = {1, 3, 8};
  const float kScalars[] = {1.0f, 0.75f, -1.5f, 0.0f};
  uint32_t seed = 1000;
  for (size_t gs : kGroupSizes) {
    const std::vector<float> gain = test::RandomFloats(gs, 0.5f, 2.0f, seed++);
    for (size_t groups : kGroups) {
      // Residual stream of larger magnitude than the normed update (as in the
      // decoder), x of varied scale.
      const std::vector<float> r =
          test::RandomFloats(gs * groups, -20.0f, 20.0f, seed++);
      std::vector<float> x =
          test::RandomFloats(gs * groups, -3.0f, 3.0f, seed++);
      if (groups > 1) {
        for (size_t i = 0; i < gs; ++i) x[gs + i] *= 1e-4f;  // eps matters
      }
      for (float scalar : kScalars) {
        CheckResidualRmsNorm(r, x, gain.data(), scalar, gs, kEps);
        CheckResidualRmsNorm(r, x, nullptr, scalar, gs, kEps);
      }
    }
  }
}

// Special values: an all-zero x gives y = residual * scalar exactly; a residual
// that cancels the normed x gives (+-)0 and tiny differences, still matching
// the unfused sequence bit for bit (CheckResidualRmsNorm).
void TestResidualRmsNormSpecialValues() {
  const size_t n = 40;
  const std::vector<float> r = test::RandomFloats(n, -5.0f, 5.0f, 5);
  const std::vector<float> zeros(n, 0.0f);
  std::vector<float> y(n);
  ResidualRmsNorm(r.data(), zeros.data(), nullptr, 0.5f, y.data(), n, 8, kEps);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(r[i] * 0.5f, y[i]) << i;
  CheckResidualRmsNorm(r, zeros, nullptr, 0.5f, 8, kEps);
  // residual = -RmsNorm(x): exact cancellation.
  const std::vector<float> x = test::RandomFloats(n, -2.0f, 2.0f, 6);
  std::vector<float> neg(n);
  RmsNorm(x.data(), nullptr, neg.data(), n, 20, kEps);
  for (float& v : neg) v = -v;
  ResidualRmsNorm(neg.data(), x.data(), nullptr, 3.0f, y.data(), n, 20, kEps);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(0.0f, y[i]) << i;
  CheckResidualRmsNorm(neg, x, nullptr, 3.0f, 20, kEps);
  // Large residual entries next to small ones, eps = 0.
  std::vector<float> big = r;
  big[3] = 1e30f;
  big[17] = -FLT_MAX / 4;
  CheckResidualRmsNorm(big, x, nullptr, 2.0f, 10, 0.0f);
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
HWY_EXPORT_AND_TEST_P(RmsNormTest, TestResidualRmsNorm);
HWY_EXPORT_AND_TEST_P(RmsNormTest, TestResidualRmsNormSpecialValues);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
