// Tests of runtime/sampling/xoshiro256.cc against the outputs of an independent implementation
// (xoshiro256_vectors.py, Python integers, from the authors' reference code).
#include "runtime/sampling/xoshiro256.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace cortiq {
namespace sampling {
namespace {

TEST(SplitMix64Test, MatchesReferenceOutputs) {
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(&state), 0xE220A8397B1DCDAFu);
  EXPECT_EQ(SplitMix64(&state), 0x6E789E6AA1B965F4u);
  EXPECT_EQ(SplitMix64(&state), 0x06C45D188009454Fu);
}

TEST(Xoshiro256StarStarTest, SeedsStateFromSplitMix64) {
  Xoshiro256StarStar g(42);
  EXPECT_EQ(g.state()[0], 0xBDD732262FEB6E95u);
  EXPECT_EQ(g.state()[1], 0x28EFE333B266F103u);
  EXPECT_EQ(g.state()[2], 0x47526757130F9F52u);
  EXPECT_EQ(g.state()[3], 0x581CE1FF0E4AE394u);
}

TEST(Xoshiro256StarStarTest, MatchesReferenceOutputs) {
  struct Case {
    uint64_t seed;
    uint64_t first[5];
  };
  const Case cases[] = {
      {0,
       {0x99EC5F36CB75F2B4u, 0xBF6E1F784956452Au, 0x1A5F849D4933E6E0u, 0x6AA594F1262D2D2Cu,
        0xBBA5AD4A1F842E59u}},
      {42,
       {0x15780B2E0C2EC716u, 0x6104D9866D113A7Eu, 0xAE17533239E499A1u, 0xECB8AD4703B360A1u,
        0xFDE6DC7FE2EC5E64u}},
      {0xFFFFFFFFFFFFFFFFu,
       {0x8F5520D52A7EAD08u, 0xC476A018CAA1802Du, 0x81DE31C0D260469Eu, 0xBF658D7E065F3C2Fu,
        0x913593FDA1BCA32Au}},
  };
  for (const Case& c : cases) {
    Xoshiro256StarStar g(c.seed);
    for (uint64_t expected : c.first) EXPECT_EQ(g.Next(), expected) << c.seed;
  }
  Xoshiro256StarStar g(42);
  for (int i = 0; i < 999; ++i) g.Next();
  EXPECT_EQ(g.Next(), 0x8DE5848C61AB8968u);
}

TEST(Xoshiro256StarStarTest, UniformIsTopBitsTimesTwoToMinus53) {
  Xoshiro256StarStar g(7);
  EXPECT_EQ(g.NextUniform(), 0.7005764821796896);
  EXPECT_EQ(g.NextUniform(), 0.2787512294737843);
  EXPECT_EQ(g.NextUniform(), 0.8396274618764198);
}

TEST(Xoshiro256StarStarTest, UniformStaysInHalfOpenUnitInterval) {
  Xoshiro256StarStar g(1);
  double lo = 1, hi = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = g.NextUniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
  }
  EXPECT_LT(lo, 1e-3);
  EXPECT_GT(hi, 1 - 1e-3);
}

TEST(Xoshiro256StarStarTest, CopyContinuesTheSameSequence) {
  Xoshiro256StarStar a(123);
  a.Next();
  Xoshiro256StarStar b = a;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.Next(), b.Next());
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
