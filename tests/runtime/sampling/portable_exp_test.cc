// Tests of runtime/sampling/portable_exp.cc: accuracy against libm's f64 exp, the special
// values, bit-identity of the array form with the scalar one, and pinned bits computed by an
// emulation of the same f32 algorithm in Python (each operation in f64, rounded to f32 — exact
// for +, -, *, since f64 has more than 2 * 24 + 2 bits), so a platform that rounds differently
// fails here.
#include "runtime/sampling/portable_exp.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace cortiq {
namespace sampling {
namespace {

uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

TEST(PortableExpTest, RelativeErrorBelowTwoToMinus22) {
  double worst = 0;
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -87.0f * static_cast<float>(i) / 2000000.0f;
    const double exact = std::exp(static_cast<double>(x));
    const double error = std::fabs(PortableExp(x) - exact) / exact;
    worst = error > worst ? error : worst;
  }
  EXPECT_LT(worst, 0x1.0p-22) << worst;
}

TEST(PortableExpTest, SpecialValues) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(PortableExp(0.0f), 1.0f);
  EXPECT_EQ(PortableExp(-0.0f), 1.0f);
  EXPECT_EQ(PortableExp(3.0f), 1.0f);  // clamped to 0
  EXPECT_EQ(PortableExp(-kInf), 0.0f);
  EXPECT_EQ(PortableExp(-87.01f), 0.0f);
  EXPECT_EQ(PortableExp(-1000.0f), 0.0f);
  EXPECT_GT(PortableExp(-87.0f), std::numeric_limits<float>::min());  // normal, not subnormal
}

TEST(PortableExpTest, MonotoneOverASweep) {
  float previous = 0.0f;
  for (int i = -870000; i <= 0; ++i) {
    const float value = PortableExp(static_cast<float>(i) * 1e-4f);
    ASSERT_GE(value, previous) << i;
    previous = value;
  }
}

TEST(PortableExpTest, PinnedBits) {
  struct Case {
    float x;
    uint32_t bits;
  };
  const Case cases[] = {
      {0.0f, 0x3F800000u},
      {-1.0000000116860974e-07f, 0x3F7FFFFEu},
      {-0.5f, 0x3F1B4598u},
      {-1.0f, 0x3EBC5AB2u},
      {-2.3025848865509033f, 0x3DCCCCD0u},
      {-10.0f, 0x383E6BCEu},
      {-33.29999923706055f, 0x2778B2EAu},
      {-50.0f, 0x1B692BEBu},
      {-86.98999786376953f, 0x00B503B6u},
      {-87.0f, 0x00B33687u},
      {-87.01000213623047f, 0x00000000u},
  };
  for (const Case& c : cases) EXPECT_EQ(Bits(PortableExp(c.x)), c.bits) << c.x;
}

TEST(PortableExpTest, ArrayFormMatchesScalarBitForBit) {
  std::mt19937 gen(5);
  std::vector<float> x(10007);
  for (float& v : x) v = static_cast<float>(gen() >> 8) * 0x1.0p-24f * 60.0f - 45.0f;
  x[3] = -std::numeric_limits<float>::infinity();
  for (float divisor : {1.0f, 0.7f, 2.5f}) {
    const float shift = 15.0f;
    std::vector<float> out(x.size());
    PortableExpShifted(x.data(), static_cast<int64_t>(x.size()), shift, divisor, out.data());
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(Bits(out[i]), Bits(PortableExp((x[i] - shift) / divisor))) << i;
    }
  }
  // In place.
  std::vector<float> y = x;
  PortableExpShifted(y.data(), static_cast<int64_t>(y.size()), 15.0f, 1.0f, y.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(Bits(y[i]), Bits(PortableExp(x[i] - 15.0f)));
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
