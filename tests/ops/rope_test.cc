// Tests RopeCosSin and ApplyRope (ops/rope.cc): the cos/sin table against a
// long double computation, and ApplyRope (per-target kernel and dispatched
// function, on every compiled Highway target) against ApplyRopeReference
// (double).

#include "ops/rope.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/rope_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/rope-inl.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// Applies the per-target and the dispatched kernel to copies of x and checks:
// rotated coordinates within 3 u (|a| + |b|) of the reference (one FMA and one
// product, plus the reference's rounding); every other coordinate bit-identical
// to the input.
void CheckApplyRope(const std::vector<float>& x, size_t num_heads,
                    size_t head_dim, size_t rotated_pairs, const float* cos,
                    const float* sin) {
  std::vector<float> expected = x;
  ApplyRopeReference(expected.data(), num_heads, head_dim, rotated_pairs, cos,
                     sin);
  const size_t half = head_dim / 2;
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<float> y = x;
    if (variant == 0) {
      ApplyRope(y.data(), num_heads, head_dim, rotated_pairs, cos, sin);
    } else {
      ::cortiq::ops::ApplyRope(y.data(), num_heads, head_dim, rotated_pairs,
                               cos, sin);
    }
    for (size_t h = 0; h < num_heads; ++h) {
      const size_t base = h * head_dim;
      for (size_t i = 0; i < half; ++i) {
        const size_t lo = base + i, hi = base + i + half;
        if (i < rotated_pairs) {
          const double tol = 3.0 * test::kU * (fabs(x[lo]) + fabs(x[hi]));
          EXPECT_NEAR(y[lo], expected[lo], tol)
              << "head " << h << " pair " << i;
          EXPECT_NEAR(y[hi], expected[hi], tol)
              << "head " << h << " pair " << i;
        } else {
          EXPECT_EQ(0, memcmp(&y[lo], &x[lo], sizeof(float)))
              << "unrotated coordinate " << i << " of head " << h << " changed";
          EXPECT_EQ(0, memcmp(&y[hi], &x[hi], sizeof(float)))
              << "unrotated coordinate " << i + half << " of head " << h
              << " changed";
        }
      }
    }
  }
}

// Gemma-4 shapes (sliding: d 256, all 128 pairs, theta 1e4; full/proportional:
// d 512, 64 pairs, theta 1e6) and odd sizes exercising the vector tails,
// several positions.
void TestApplyRopeShapes() {
  struct Case {
    size_t heads, head_dim, pairs;
    double theta;
  };
  const Case kCases[] = {{8, 256, 128, 1e4}, {2, 512, 64, 1e6},
                         {8, 512, 64, 1e6},  {1, 512, 256, 1e6},
                         {3, 10, 5, 1e4},    {3, 10, 3, 1e4},
                         {4, 70, 33, 1e4},   {2, 66, 1, 1e4},
                         {2, 64, 0, 1e4},    {1, 2, 1, 1e4}};
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    for (int64_t pos : {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{100000}}) {
      std::vector<float> cos(c.pairs + 1), sin(c.pairs + 1);
      RopeCosSin(pos, c.theta, c.head_dim, c.pairs, cos.data(), sin.data());
      const std::vector<float> x =
          test::RandomFloats(c.heads * c.head_dim, -2.0f, 2.0f, seed++);
      CheckApplyRope(x, c.heads, c.head_dim, c.pairs, cos.data(), sin.data());
    }
  }
}

// Exact cases: position 0 (cos 1, sin 0) is the identity; a quarter turn (cos
// 0, sin 1) maps (a, b) to (-b, a) exactly.
void TestApplyRopeExactAngles() {
  const size_t heads = 3, head_dim = 38, pairs = 19;
  const std::vector<float> x =
      test::RandomFloats(heads * head_dim, -5.0f, 5.0f, 9);
  std::vector<float> cos(pairs), sin(pairs);
  RopeCosSin(0, 1e4, head_dim, pairs, cos.data(), sin.data());
  std::vector<float> y = x;
  ApplyRope(y.data(), heads, head_dim, pairs, cos.data(), sin.data());
  EXPECT_EQ(0, memcmp(y.data(), x.data(), x.size() * sizeof(float)));

  const std::vector<float> c0(pairs, 0.0f), s1(pairs, 1.0f);
  y = x;
  ApplyRope(y.data(), heads, head_dim, pairs, c0.data(), s1.data());
  for (size_t h = 0; h < heads; ++h) {
    for (size_t i = 0; i < pairs; ++i) {
      EXPECT_EQ(y[h * head_dim + i], -x[h * head_dim + i + pairs]);
      EXPECT_EQ(y[h * head_dim + i + pairs], x[h * head_dim + i]);
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
HWY_BEFORE_TEST(ApplyRopeTest);
HWY_EXPORT_AND_TEST_P(ApplyRopeTest, TestApplyRopeShapes);
HWY_EXPORT_AND_TEST_P(ApplyRopeTest, TestApplyRopeExactAngles);

// RopeCosSin is scalar (not per target). Each entry is checked against
// powl/cosl/sinl in 80-bit long double: the f32 result must be the rounding of
// the true value up to 2^-24 absolute (|cos|, |sin| <= 1: half an f32 ulp is <=
// 2^-25, plus the double evaluation's error, which is ~1e-16 * angle).
TEST(RopeCosSinTest, MatchesLongDouble) {
  struct Case {
    double theta;
    size_t head_dim, pairs;
  };
  const Case kCases[] = {
      {1e4, 256, 128}, {1e6, 512, 64}, {1e6, 512, 256}, {1e4, 10, 5}};
  for (const Case& c : kCases) {
    for (int64_t pos :
         {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{511}, int64_t{4096},
          int64_t{32767}, int64_t{100000}, int64_t{1} << 20}) {
      std::vector<float> cos(c.pairs), sin(c.pairs);
      RopeCosSin(pos, c.theta, c.head_dim, c.pairs, cos.data(), sin.data());
      for (size_t i = 0; i < c.pairs; ++i) {
        const long double inv_freq =
            powl(static_cast<long double>(c.theta),
                 -2.0L * static_cast<long double>(i) /
                     static_cast<long double>(c.head_dim));
        const long double angle = static_cast<long double>(pos) * inv_freq;
        EXPECT_NEAR(cos[i], static_cast<double>(cosl(angle)), test::kU)
            << "pos " << pos << " i " << i << " theta " << c.theta;
        EXPECT_NEAR(sin[i], static_cast<double>(sinl(angle)), test::kU)
            << "pos " << pos << " i " << i << " theta " << c.theta;
      }
    }
  }
}

// The proportional RoPE divides the exponent by the full head_dim (spec §5.1
// item 1): omega_63 = 1e6^(-126/512) ~= 0.03338, not 1e6^(-126/128) ~= 1.3e-6.
TEST(RopeCosSinTest, ProportionalUsesFullHeadDim) {
  float c[64], s[64];
  RopeCosSin(1, 1e6, 512, 64, c, s);
  EXPECT_NEAR(s[63], 0.0333700506,
              1e-8);  // sin(1e6^(-126/512)) = sin(0.0333762469)
  EXPECT_NEAR(s[0], 0.8414709848, 1e-7);  // sin(1)
  RopeCosSin(0, 1e6, 512, 64, c, s);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(1.0f, c[i]);
    EXPECT_EQ(0.0f, s[i]);
  }
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
