// Tests GeluTanh, GeluTanhMul, Mul, Add, Scale and Softcap
// (ops/elementwise.cc): the per-target kernels and the dispatched functions on
// every compiled Highway target, against the double references; GeluTanhMul
// also bit for bit against GeluTanh followed by Mul.

#include "ops/elementwise.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/elementwise_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/elementwise-inl.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

const size_t kSizes[] = {0, 1, 3, 7, 8, 15, 16, 17, 33, 100, 1000, 2560};

// Random values in [-12, 12] (covering GELU's saturation on both sides)
// followed by special values, to make n elements in total.
std::vector<float> Inputs(size_t n, uint32_t seed) {
  const float kSpecial[] = {0.0f,   -0.0f,   1.0f,     -1.0f,   1e4f,
                            -1e4f,  -9.9f,   -10.0f,   -20.0f,  20.0f,
                            1e-30f, -1e-30f, 1e-40f,   -1e-40f, 1e30f,
                            -1e30f, FLT_MAX, -FLT_MAX, 3.0f,    -3.0f};
  std::vector<float> x = test::RandomFloats(n, -12.0f, 12.0f, seed);
  for (size_t i = 0; i < n && i < sizeof(kSpecial) / sizeof(kSpecial[0]); ++i) {
    x[(i * 7) % n] = kSpecial[i];
  }
  return x;
}

// Runs `kernel` out of place and in place and `dispatched` out of place on x;
// checks each output against `expected` with tol(x_i, expected_i), and that
// nothing past n is written.
template <class Kernel, class Dispatched, class Tol>
void CheckUnary(const std::vector<float>& x, const Kernel& kernel,
                const Dispatched& dispatched,
                const std::vector<float>& expected, const Tol& tol,
                const char* name) {
  const size_t n = x.size();
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<float> y(n + 1, test::Sentinel());
    if (variant == 0) kernel(x.data(), y.data(), n);
    if (variant == 1) {
      memcpy(y.data(), x.data(), n * sizeof(float));
      kernel(y.data(), y.data(), n);  // in place
    }
    if (variant == 2) dispatched(x.data(), y.data(), n);
    EXPECT_TRUE(isnan(y[n])) << name << ": wrote past n = " << n;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(isfinite(y[i])) << name << "(" << x[i] << ") = " << y[i];
      ASSERT_NEAR(y[i], expected[i], tol(x[i], expected[i]))
          << name << "(" << x[i] << "), n " << n << " variant " << variant;
    }
  }
}

// GeluTanh tolerance (see GeluTanhV): y = x / (1 + e^t), t = -2 sqrt(2/pi)(x +
// 0.044715 x^3). t carries a relative error <= 4 u (four f32 operations), which
// changes y by the relative amount |dt| e^t / (1 + e^t); Exp (1 ulp), the add
// and the divide add 3 u, the reference's rounding 1 u. Where the kernel
// flushes (t >= 88) or Exp underflows, |y| < 1e-36.
double GeluTol(float xf, float expected) {
  const double x = xf;
  const double t =
      -2.0 * sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
  const double sig = t > 700 ? 1.0 : exp(t) / (1.0 + exp(t));
  return (4.0 * test::kU * fabs(t) * sig + 5.0 * test::kU) * fabs(expected) +
         1e-36;
}

void TestGeluTanh() {
  uint32_t seed = 1;
  for (size_t n : kSizes) {
    const std::vector<float> x = Inputs(n, seed++);
    std::vector<float> expected(n);
    GeluTanhReference(x.data(), expected.data(), n);
    CheckUnary(
        x, [](const float* a, float* y, size_t m) { GeluTanh(a, y, m); },
        [](const float* a, float* y, size_t m) {
          ::cortiq::ops::GeluTanh(a, y, m);
        },
        expected, GeluTol, "GeluTanh");
  }
  // Exact saturation values.
  const float x[5] = {0.0f, 1e4f, -1e4f, FLT_MAX, -FLT_MAX};
  float y[5];
  GeluTanh(x, y, 5);
  EXPECT_EQ(0.0f, y[0]);
  EXPECT_EQ(1e4f, y[1]);
  EXPECT_EQ(0.0f, y[2]);
  EXPECT_EQ(FLT_MAX, y[3]);
  EXPECT_EQ(0.0f, y[4]);
}

// GeluTanhMul against its double reference, in and out of place, and bit for
// bit against the unfused sequence GeluTanh, Mul (per target and dispatched).
// Tolerance: GeluTanh's (GeluTol, relative to gelu(gate)) carried through the
// product, plus one rounding of the product: GeluTol(g, gelu(g)) * |up| +
// u * |y| (+ 1e-36 absolute where GeluTanh flushes to 0).
void TestGeluTanhMul() {
  uint32_t seed = 50;
  for (size_t n : kSizes) {
    const std::vector<float> gate = Inputs(n, seed++);
    std::vector<float> up = test::RandomFloats(n, -3.0f, 3.0f, seed++);
    // Special factors, not where the product would overflow (gate up to
    // FLT_MAX).
    const float kSpecialUp[] = {0.0f, -0.0f, 1.0f, 1e20f, -1e-20f};
    for (size_t i = 0; i < n && i < 5; ++i) {
      const size_t at = (i * 11 + 3) % n;
      if (fabs(gate[at]) < 1e5f) up[at] = kSpecialUp[i];
    }
    std::vector<float> gelu(n), expected(n);
    GeluTanhReference(gate.data(), gelu.data(), n);
    GeluTanhMulReference(gate.data(), up.data(), expected.data(), n);
    // The unfused sequence, per target and dispatched.
    std::vector<float> unfused(n), unfused_dispatched(n);
    GeluTanh(gate.data(), unfused.data(), n);
    Mul(unfused.data(), up.data(), unfused.data(), n);
    ::cortiq::ops::GeluTanh(gate.data(), unfused_dispatched.data(), n);
    ::cortiq::ops::Mul(unfused_dispatched.data(), up.data(),
                       unfused_dispatched.data(), n);
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<float> y(n + 1, test::Sentinel());
      const char* name = "out of place";
      if (variant == 0) GeluTanhMul(gate.data(), up.data(), y.data(), n);
      if (variant == 1) {
        name = "in place (y == gate)";
        memcpy(y.data(), gate.data(), n * sizeof(float));
        GeluTanhMul(y.data(), up.data(), y.data(), n);
      }
      if (variant == 2) {
        name = "in place (y == up)";
        memcpy(y.data(), up.data(), n * sizeof(float));
        GeluTanhMul(gate.data(), y.data(), y.data(), n);
      }
      if (variant == 3) {
        name = "dispatched";
        ::cortiq::ops::GeluTanhMul(gate.data(), up.data(), y.data(), n);
      }
      EXPECT_TRUE(isnan(y[n])) << name << ": wrote past n = " << n;
      const std::vector<float>& same =
          variant == 3 ? unfused_dispatched : unfused;
      EXPECT_EQ(0, memcmp(y.data(), same.data(), n * sizeof(float)))
          << name << ": differs from GeluTanh then Mul, n " << n;
      for (size_t i = 0; i < n; ++i) {
        const double tol = GeluTol(gate[i], gelu[i]) * fabs(up[i]) +
                           test::kU * fabs(expected[i]) + 1e-36;
        if (isinf(expected[i])) {  // FLT_MAX * |up| > 1 overflows in both
          ASSERT_EQ(expected[i], y[i]) << gate[i] << " * " << up[i];
          continue;
        }
        ASSERT_TRUE(isfinite(y[i])) << gate[i] << " * " << up[i];
        ASSERT_NEAR(y[i], expected[i], tol)
            << "gelu(" << gate[i] << ") * " << up[i] << ", n " << n << " "
            << name;
      }
    }
  }
  // gate == up == y (the square of nothing in particular, but legal).
  std::vector<float> v = test::RandomFloats(37, -4.0f, 4.0f, 9);
  std::vector<float> expected(37);
  GeluTanhMulReference(v.data(), v.data(), expected.data(), 37);
  GeluTanhMul(v.data(), v.data(), v.data(), 37);
  for (size_t i = 0; i < 37; ++i) {
    EXPECT_NEAR(v[i], expected[i], 1e-6 * fabs(expected[i]) + 1e-36);
  }
}

// Softcap tolerance: x / cap (0.5 u), Tanh (<= 4 ulp), * cap (0.5 u), reference
// (0.5 u).
double SoftcapTol(float /*x*/, float expected) {
  return 6.0 * test::kU * fabs(expected) + 1e-37;
}

void TestSoftcap() {
  uint32_t seed = 100;
  for (float cap : {30.0f, 1.0f, 15.5f}) {
    for (size_t n : kSizes) {
      std::vector<float> x = Inputs(n, seed++);
      for (float& v : x) v *= 5.0f;  // logits up to ~60, beyond the cap
      std::vector<float> expected(n);
      SoftcapReference(x.data(), cap, expected.data(), n);
      CheckUnary(
          x,
          [cap](const float* a, float* y, size_t m) { Softcap(a, cap, y, m); },
          [cap](const float* a, float* y, size_t m) {
            ::cortiq::ops::Softcap(a, cap, y, m);
          },
          expected, SoftcapTol, "Softcap");
    }
  }
  // Saturation, including infinities; 0 stays 0.
  const float x[6] = {1e4f, -1e4f, INFINITY, -INFINITY, 0.0f, 30.0f};
  float y[6];
  Softcap(x, 30.0f, y, 6);
  EXPECT_EQ(30.0f, y[0]);
  EXPECT_EQ(-30.0f, y[1]);
  EXPECT_EQ(30.0f, y[2]);
  EXPECT_EQ(-30.0f, y[3]);
  EXPECT_EQ(0.0f, y[4]);
  EXPECT_NEAR(y[5], 22.847824678672946, 6 * test::kU * 23);  // 30 tanh(1)
}

// Mul, Add and Scale round once, like the reference (a double product or sum of
// two floats rounded to f32 is the correctly rounded f32 result), so they must
// match bit for bit; also in place with y == a, y == b and a == b == y.
void TestMulAddScale() {
  uint32_t seed = 200;
  using BinaryFn = void (*)(const float*, const float*, float*, size_t);
  struct Op {
    const char* name;
    BinaryFn kernel, dispatched, reference;
  };
  const Op kOps[] = {
      {"Mul",
       [](const float* a, const float* b, float* y, size_t n) {
         Mul(a, b, y, n);
       },
       &::cortiq::ops::Mul, &MulReference},
      {"Add",
       [](const float* a, const float* b, float* y, size_t n) {
         Add(a, b, y, n);
       },
       &::cortiq::ops::Add, &AddReference},
      {"Scale(a, b[0])",
       [](const float* a, const float* b, float* y, size_t n) {
         Scale(a, b[0], y, n);
       },
       [](const float* a, const float* b, float* y, size_t n) {
         ::cortiq::ops::Scale(a, b[0], y, n);
       },
       [](const float* a, const float* b, float* y, size_t n) {
         ScaleReference(a, b[0], y, n);
       }},
  };
  for (const Op& op : kOps) {
    for (size_t n : kSizes) {
      const std::vector<float> a =
          test::RandomFloats(n + 1, -100.0f, 100.0f, seed++);
      const std::vector<float> b =
          test::RandomFloats(n + 1, -3.0f, 3.0f, seed++);
      std::vector<float> expected(n + 1, test::Sentinel());
      op.reference(a.data(), b.data(), expected.data(), n);
      std::vector<float> y(n + 1, test::Sentinel());
      op.kernel(a.data(), b.data(), y.data(), n);
      EXPECT_EQ(0, memcmp(y.data(), expected.data(), (n + 1) * sizeof(float)))
          << op.name << " n " << n;
      y.assign(n + 1, test::Sentinel());
      op.dispatched(a.data(), b.data(), y.data(), n);
      EXPECT_EQ(0, memcmp(y.data(), expected.data(), (n + 1) * sizeof(float)))
          << op.name << " dispatched, n " << n;
      // In place: y == a.
      std::vector<float> ya = a;
      op.kernel(ya.data(), b.data(), ya.data(), n);
      EXPECT_EQ(0, memcmp(ya.data(), expected.data(), n * sizeof(float)))
          << op.name << " in place (y == a), n " << n;
      // In place: y == b (for Scale the scalar is read before the loop).
      std::vector<float> yb = b;
      op.kernel(a.data(), yb.data(), yb.data(), n);
      EXPECT_EQ(0, memcmp(yb.data(), expected.data(), n * sizeof(float)))
          << op.name << " in place (y == b), n " << n;
      // a == b == y.
      std::vector<float> sq(n), yy = a;
      op.reference(a.data(), a.data(), sq.data(), n);
      op.kernel(yy.data(), yy.data(), yy.data(), n);
      EXPECT_EQ(0, memcmp(yy.data(), sq.data(), n * sizeof(float)))
          << op.name << " in place (a == b == y), n " << n;
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
HWY_BEFORE_TEST(ElementwiseTest);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestGeluTanh);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestGeluTanhMul);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestSoftcap);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestMulAddScale);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
