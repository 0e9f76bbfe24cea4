// Tests of formats/dtype: dtype names and sizes, and the f32/bf16/f16 conversions
// (exhaustive round trips, rounding ties, overflow, subnormals, NaN).
#include "formats/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace cortiq {
namespace {

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

TEST(DTypeTest, NamesAndSizes) {
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kUnsupported), 0u);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    EXPECT_EQ(DTypeFromName(DTypeName(dtype)), dtype);
    EXPECT_EQ(SafetensorsDTypeSize(DTypeName(dtype)), DTypeSize(dtype));
  }
  EXPECT_EQ(DTypeFromName("I8"), DType::kUnsupported);
  EXPECT_EQ(DTypeFromName("bf16"), DType::kUnsupported);  // The format is case-sensitive.
  EXPECT_EQ(SafetensorsDTypeSize("I8"), 1u);
  EXPECT_EQ(SafetensorsDTypeSize("F64"), 8u);
  EXPECT_EQ(SafetensorsDTypeSize("F8_E4M3"), 1u);
  EXPECT_EQ(SafetensorsDTypeSize("F4"), 0u);
  EXPECT_EQ(SafetensorsDTypeSize("nonsense"), 0u);
}

TEST(DTypeTest, Bf16RoundTripsEveryValue) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = Bf16ToF32(static_cast<uint16_t>(bits));
    EXPECT_EQ(Bits(value), bits << 16);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(value))));
    } else {
      ASSERT_EQ(F32ToBf16(value), bits) << bits;
    }
  }
}

TEST(DTypeTest, F32ToBf16RoundsToNearestEven) {
  EXPECT_EQ(F32ToBf16(FromBits(0x3f808000u)), 0x3f80u);              // tie, even below
  EXPECT_EQ(F32ToBf16(FromBits(0x3f818000u)), 0x3f82u);              // tie, even above
  EXPECT_EQ(F32ToBf16(FromBits(0x3f808001u)), 0x3f81u);              // above the tie
  EXPECT_EQ(F32ToBf16(FromBits(0x3f807fffu)), 0x3f80u);              // below the tie
  EXPECT_EQ(F32ToBf16(std::numeric_limits<float>::max()), 0x7f80u);  // rounds up to +inf
  EXPECT_EQ(F32ToBf16(-std::numeric_limits<float>::infinity()), 0xff80u);
  EXPECT_EQ(F32ToBf16(-0.0f), 0x8000u);
  // A NaN whose payload sits only in the low bits must not become inf.
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(FromBits(0x7f800001u)))));
}

TEST(DTypeTest, F16RoundTripsEveryValue) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = F16ToF32(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(value))));
    } else {
      ASSERT_EQ(F32ToF16(value), bits) << bits;
    }
  }
}

TEST(DTypeTest, F16KnownValues) {
  EXPECT_EQ(F16ToF32(0x3c00u), 1.0f);
  EXPECT_EQ(F16ToF32(0xc000u), -2.0f);
  EXPECT_EQ(F16ToF32(0x7bffu), 65504.0f);
  EXPECT_EQ(F16ToF32(0x0001u), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(F16ToF32(0x0400u), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isinf(F16ToF32(0x7c00u)));
  EXPECT_TRUE(std::isnan(F16ToF32(0x7e00u)));

  EXPECT_EQ(F32ToF16(65519.0f), 0x7bffu);  // rounds down to max
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00u);  // tie at max rounds to inf
  EXPECT_EQ(F32ToF16(1e10f), 0x7c00u);     // overflow
  EXPECT_EQ(F32ToF16(-1e10f), 0xfc00u);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000u);  // tie to even zero
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25) * 1.0001f), 0x0001u);
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -25)), 0x0002u);         // 1.5 ulp tie → even 2
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00u);  // tie → even
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(3.0f, -11)), 0x3c02u);  // tie → even
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -14) * (1.0f - std::ldexp(1.0f, -12))), 0x0400u);
  EXPECT_EQ(F32ToF16(1e-30f), 0x0000u);
  EXPECT_EQ(F32ToF16(-0.0f), 0x8000u);
}

#if defined(__FLT16_MAX__) && !defined(__clang__)
// Cross-check against the compiler's own f32 → _Float16 conversion on random bit patterns.
TEST(DTypeTest, F32ToF16MatchesCompiler) {
  std::mt19937 rng(42);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    // Every other sample: an exponent near the f16 range (2^-27 .. 2^16), where rounding matters.
    if (i % 2 == 1) bits = (bits & 0x807fffffu) | ((100u + bits % 44u) << 23);
    const float value = FromBits(bits);
    if (std::isnan(value)) continue;
    const _Float16 reference = static_cast<_Float16>(value);
    uint16_t reference_bits;
    std::memcpy(&reference_bits, &reference, sizeof(reference_bits));
    ASSERT_EQ(F32ToF16(value), reference_bits) << Bits(value);
  }
}
#endif

}  // namespace
}  // namespace cortiq
