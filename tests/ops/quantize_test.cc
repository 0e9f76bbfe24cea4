// Tests ops/quantize.cc: the f16 conversions against their IEEE definition
// (every half value and every rounding boundary), and the Q8_0 / Q4_0
// quantizers against blocks worked out here from llama.cpp's reference rules
// (quantize_row_q8_0_ref / quantize_row_q4_0_ref, ggml/src/ggml-quants.c):
// by hand for all-zero blocks, one large value, negative maxima, ties for the
// maximum and values exactly at rounding midpoints, and by a test-local
// transcription of the rules (with an independent f16 rounding) for random
// blocks. Expected blocks are compared bit for bit.

#include "ops/quantize.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace cortiq {
namespace ops {
namespace {

uint32_t Bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof(b));
  return b;
}

// The value of half bits h from the IEEE 754 binary16 definition, in double
// (exact): (-1)^s 2^(e-15) (1 + m/1024) for 0 < e < 31, (-1)^s 2^-14 (m/1024)
// for e = 0; inf for e = 31, m = 0; NaN otherwise.
double HalfValue(uint16_t h) {
  const int s = h >> 15;
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  double v;
  if (e == 31) {
    v = m == 0 ? INFINITY : NAN;
  } else if (e == 0) {
    v = ldexp(m, -24);
  } else {
    v = ldexp(1024 + m, e - 25);
  }
  return s ? -v : v;
}

// Nearest half to a finite f (ties to the even bit pattern; |f| >= 65520 goes
// to inf), found by binary search over the ordered positive half values: an
// implementation independent of F32ToF16Bits's bit manipulation.
uint16_t NearestHalf(float f) {
  const uint16_t sign = signbit(f) ? 0x8000 : 0;
  const double a = fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7C00;
  // Largest h in [0, 0x7BFF] with HalfValue(h) <= a.
  uint16_t lo = 0, hi = 0x7BFF;
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (HalfValue(mid) <= a) {
      lo = mid;
    } else {
      hi = static_cast<uint16_t>(mid - 1);
    }
  }
  uint16_t h = lo;
  if (h < 0x7BFF) {
    const double below = a - HalfValue(h);
    const double above = HalfValue(static_cast<uint16_t>(h + 1)) - a;
    if (above < below || (above == below && (h & 1))) ++h;
  }
  return sign | h;
}

TEST(QuantizeTest, F16BitsToF32MatchesDefinitionForAllHalves) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = F16BitsToF32(static_cast<uint16_t>(h));
    const double expected = HalfValue(static_cast<uint16_t>(h));
    if (isnan(expected)) {
      EXPECT_TRUE(isnan(f)) << std::hex << h;
    } else {
      EXPECT_EQ(Bits(static_cast<float>(expected)), Bits(f)) << std::hex << h;
    }
  }
}

// Every half value maps to itself; the midpoint between two neighbours goes to
// the even one, and one f32 ulp either side of it to the nearer one. Together
// these pin down every rounding boundary of the monotonic conversion.
TEST(QuantizeTest, F32ToF16BitsRoundsToNearestEven) {
  for (uint16_t h = 0; h <= 0x7BFF; ++h) {
    const float v = static_cast<float>(HalfValue(h));
    ASSERT_EQ(h, F32ToF16Bits(v)) << std::hex << h;
    ASSERT_EQ(h | 0x8000, F32ToF16Bits(-v)) << std::hex << h;
    const uint16_t next = static_cast<uint16_t>(h + 1);  // 0x7C00 = inf
    // The midpoint has one more significant bit than a half: exact in f32.
    const double mid_d =
        (HalfValue(h) + (next == 0x7C00 ? 65536.0 : HalfValue(next))) / 2;
    const float mid = static_cast<float>(mid_d);
    ASSERT_EQ(mid_d, static_cast<double>(mid));
    ASSERT_EQ((h & 1) ? next : h, F32ToF16Bits(mid)) << std::hex << h;
    ASSERT_EQ(h, F32ToF16Bits(nextafterf(mid, 0.0f))) << std::hex << h;
    ASSERT_EQ(next, F32ToF16Bits(nextafterf(mid, INFINITY))) << std::hex << h;
    ASSERT_EQ(next | 0x8000, F32ToF16Bits(-nextafterf(mid, INFINITY)));
  }
  EXPECT_EQ(0x7BFF, F32ToF16Bits(65519.996f));
  EXPECT_EQ(0x7C00, F32ToF16Bits(65520.0f));  // tie to even = 2^16: inf
  EXPECT_EQ(0x7C00, F32ToF16Bits(1e10f));
  EXPECT_EQ(0xFC00, F32ToF16Bits(-INFINITY));
  EXPECT_EQ(0x7C00, F32ToF16Bits(INFINITY));
  EXPECT_EQ(0x7E00, F32ToF16Bits(NAN));
  EXPECT_EQ(0xFE00, F32ToF16Bits(-NAN));
  EXPECT_EQ(0x8000, F32ToF16Bits(-0.0f));
  EXPECT_EQ(0x0000, F32ToF16Bits(1e-40f));             // f32 subnormal
  EXPECT_EQ(0x0000, F32ToF16Bits(ldexpf(1.0f, -25)));  // tie -> even 0
  EXPECT_EQ(0x0001, F32ToF16Bits(nextafterf(ldexpf(1.0f, -25), 1.0f)));
}

TEST(QuantizeTest, F32ToF16BitsMatchesNearestHalfOnRandomValues) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits(0, 0xFFFFFFFFu);
  for (int i = 0; i < 200000; ++i) {
    // Magnitudes from 2^-30 to 2^17 with random significands and signs.
    uint32_t b = bits(rng);
    b = (b & 0x807FFFFFu) | ((97u + (b >> 23) % 48u) << 23);
    float f;
    memcpy(&f, &b, sizeof(f));
    ASSERT_EQ(NearestHalf(f), F32ToF16Bits(f)) << f;
  }
}

BlockQ8_0 Q8Block(uint16_t d, const std::vector<int>& q) {
  BlockQ8_0 b;
  b.d = d;
  for (size_t j = 0; j < kQuantBlockSize; ++j) {
    b.qs[j] = static_cast<int8_t>(j < q.size() ? q[j] : 0);
  }
  return b;
}

// Nibbles q[0..31] (missing ones = 8) packed as qs[j] = q[j] | q[j + 16] << 4.
BlockQ4_0 Q4Block(uint16_t d, const std::vector<int>& q) {
  BlockQ4_0 b;
  b.d = d;
  for (size_t j = 0; j < kQuantBlockSize / 2; ++j) {
    const int lo = j < q.size() ? q[j] : 8;
    const int hi = j + 16 < q.size() ? q[j + 16] : 8;
    b.qs[j] = static_cast<uint8_t>(lo | (hi << 4));
  }
  return b;
}

void ExpectQ8(const std::vector<float>& x, const BlockQ8_0& expected) {
  ASSERT_EQ(kQuantBlockSize, x.size());
  BlockQ8_0 got;
  memset(&got, 0xAB, sizeof(got));
  QuantizeRowQ8_0(x.data(), x.size(), &got);
  EXPECT_EQ(expected.d, got.d) << std::hex << expected.d << " vs " << got.d;
  for (size_t j = 0; j < kQuantBlockSize; ++j) {
    EXPECT_EQ(expected.qs[j], got.qs[j]) << "j " << j << " x " << x[j];
  }
}

void ExpectQ4(const std::vector<float>& x, const BlockQ4_0& expected) {
  ASSERT_EQ(kQuantBlockSize, x.size());
  BlockQ4_0 got;
  memset(&got, 0xAB, sizeof(got));
  QuantizeRowQ4_0(x.data(), x.size(), &got);
  EXPECT_EQ(expected.d, got.d) << std::hex << expected.d << " vs " << got.d;
  for (size_t j = 0; j < kQuantBlockSize / 2; ++j) {
    EXPECT_EQ(expected.qs[j] & 0xF, got.qs[j] & 0xF)
        << "j " << j << " x " << x[j];
    EXPECT_EQ(expected.qs[j] >> 4, got.qs[j] >> 4)
        << "j " << j + 16 << " x " << x[j + 16];
  }
}

std::vector<float> Block(std::vector<float> head) {
  head.resize(kQuantBlockSize, 0.0f);
  return head;
}

TEST(QuantizeTest, Q8_0HandWorkedBlocks) {
  // All zero (and all -0): amax 0, d = 0, id = 0, every quant 0.
  ExpectQ8(Block({}), Q8Block(0x0000, {}));
  ExpectQ8(std::vector<float>(32, -0.0f), Q8Block(0x0000, {}));
  // amax 127: d = 1 (f16 0x3C00), id = 1; roundf rounds halfway cases away
  // from zero.
  ExpectQ8(Block({127, 2.5f, -2.5f, 0.5f, -0.5f, 1.4999999f, -126.5f, 3.5f}),
           Q8Block(0x3C00, {127, 3, -3, 1, -1, 1, -127, 4}));
  // Negative maximum -63.5: d = 0.5 (0x3800), id = 2.
  ExpectQ8(Block({0.25f, -0.25f, 0.2f, 0, 0, -63.5f, 31.75f, -0.75f}),
           Q8Block(0x3800, {1, -1, 0, 0, 0, -127, 64, -2}));
  // One large value 8128 = 127 * 64 among small ones: d = 64 (0x5400), id =
  // 1/64; +-32 are at the midpoint +-0.5 and round away from zero.
  std::vector<float> x = Block({1.0f, -1.0f, 32.0f, -32.0f, 31.99f, 96.0f});
  x[17] = 8128.0f;
  BlockQ8_0 expected = Q8Block(0x5400, {0, 0, 1, -1, 0, 2});
  expected.qs[17] = 127;
  ExpectQ8(x, expected);
  // d = 1/127 is not a half: f16 rounds 1/127 = 2^-7 * 1.00787... to 2^-7 *
  // (1 + 8/1024) = 0x2008; the quants use the f32 id (127.00000x), not the
  // rounded d.
  ExpectQ8(Block({1.0f, -1.0f, 0.6f / 127, 0.4f / 127}),
           Q8Block(0x2008, {127, -127, 1, 0}));
  // amax / 127 below 2^-128: id overflows to inf (undefined in C; 0 on x86
  // llama.cpp builds) and d rounds to a zero half.
  ExpectQ8(Block({1e-38f, -5e-39f, 0.0f}), Q8Block(0x0000, {}));
}

TEST(QuantizeTest, Q4_0HandWorkedBlocks) {
  // All zero: max = 0, d = 0 / -8 = -0 (f16 0x8000), id = 0, every nibble
  // (int8_t)(0 + 8.5) = 8.
  ExpectQ4(Block({}), Q4Block(0x8000, {}));
  ExpectQ4(std::vector<float>(32, -0.0f), Q4Block(0x8000, {}));
  // max = -8 (first of the two magnitude-8 values): d = 1 (0x3C00), id = 1,
  // nibble = trunc(x + 8.5): midpoints round up, 8 clamps to 15.
  std::vector<float> x =
      Block({-8, 0.5f, -0.5f, 1.5f, -1.5f, 7.5f, 8, 0.49f, -7.6f, 6.5f, 5.5f});
  x[16] = 3;
  x[17] = -3;
  x[31] = -7.5f;
  std::vector<int> q = {0, 9, 8, 10, 7, 15, 15, 8, 0, 15, 14};
  q.resize(32, 8);
  q[16] = 11;
  q[17] = 5;
  q[31] = 1;
  ExpectQ4(x, Q4Block(0x3C00, q));
  // max = +8 first: d = -1 (0xBC00), id = -1; -8 maps to 16.5 -> 15.
  ExpectQ4(Block({8, -8, 0.5f, -0.5f, 2}), Q4Block(0xBC00, {0, 15, 8, 9, 6}));
  // One large negative value -1024: d = 128 (0x5800), id = 1/128.
  // 64 -> 9; -64 -> 8; 63.9 -> 8.999 -> 8; 1 -> 8.5078 -> 8; -1 -> 8.4921875
  // -> 8; -65 -> 7.99 -> 7; 1000 -> 16.3 -> 15.
  x = Block({64, -64, 63.9f, 1, -1, -65, 1000});
  x[20] = -1024;
  q = {9, 8, 8, 8, 8, 7, 15};
  q.resize(32, 8);
  q[20] = 0;
  ExpectQ4(x, Q4Block(0x5800, q));
  // |max| / 8 below 2^-128: id = -inf, every x * id + 8.5 is +-inf or NaN,
  // nibbles 0 (as on x86), d a negative zero half.
  ExpectQ4(Block({1e-38f, -5e-39f}), Q4Block(0x8000, std::vector<int>(32, 0)));
}

// The rules of quantize_row_q8_0_ref / quantize_row_q4_0_ref transcribed for
// one block, with NearestHalf for the scale; inputs are finite and large enough
// that id is finite.
BlockQ8_0 ExpectedQ8(const float* x) {
  float amax = 0.0f;
  for (size_t j = 0; j < 32; ++j)
    amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
  const float d = amax / 127;
  const float id = d ? 1.0f / d : 0.0f;
  BlockQ8_0 b;
  b.d = NearestHalf(d);
  for (size_t j = 0; j < 32; ++j) {
    const float v = x[j] * id;  // rounded to f32
    // Round half away from zero: split |v| into its integer part and the
    // (exactly computed) fraction.
    const float a = fabsf(v);
    const float whole = floorf(a);
    const int q = static_cast<int>(whole) + (a - whole >= 0.5f ? 1 : 0);
    b.qs[j] = static_cast<int8_t>(v < 0 ? -q : q);
  }
  return b;
}

BlockQ4_0 ExpectedQ4(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (size_t j = 0; j < 32; ++j) {
    if (fabsf(x[j]) > amax) {
      amax = fabsf(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8;
  const float id = d ? 1.0f / d : 0.0f;
  BlockQ4_0 b;
  b.d = NearestHalf(d);
  for (size_t j = 0; j < 16; ++j) {
    int q[2];
    for (int h = 0; h < 2; ++h) {
      const volatile float prod = x[j + 16 * h] * id;  // rounded to f32
      const volatile float sum = prod + 8.5f;          // rounded to f32
      q[h] = static_cast<int>(truncf(sum));
      if (q[h] > 15) q[h] = 15;
    }
    b.qs[j] = static_cast<uint8_t>(q[0] | (q[1] << 4));
  }
  return b;
}

TEST(QuantizeTest, RandomBlocksMatchTheReferenceRules) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 12);
  const size_t kBlocks = 2000;
  std::vector<float> x(kBlocks * 32);
  for (size_t b = 0; b < kBlocks; ++b) {
    const float scale = ldexpf(1.0f, exponent(rng));
    for (size_t j = 0; j < 32; ++j) x[b * 32 + j] = unit(rng) * scale;
    if (b % 3 == 0) x[b * 32 + b % 32] *= 50.0f;  // an outlier
  }
  std::vector<BlockQ8_0> q8(kBlocks);
  std::vector<BlockQ4_0> q4(kBlocks);
  QuantizeRowQ8_0(x.data(), x.size(), q8.data());
  QuantizeRowQ4_0(x.data(), x.size(), q4.data());
  for (size_t b = 0; b < kBlocks; ++b) {
    const BlockQ8_0 e8 = ExpectedQ8(&x[b * 32]);
    const BlockQ4_0 e4 = ExpectedQ4(&x[b * 32]);
    ASSERT_EQ(0, memcmp(&e8, &q8[b], sizeof(e8))) << "Q8_0 block " << b;
    ASSERT_EQ(0, memcmp(&e4, &q4[b], sizeof(e4))) << "Q4_0 block " << b;
  }
}

TEST(QuantizeTest, DequantizeFollowsTheBlockDefinition) {
  // Q8_0: d = -0.5 (0xB800); w = d * q.
  std::vector<BlockQ8_0> q8 = {Q8Block(0xB800, {1, -2, 127, -128}),
                               Q8Block(0x0001, {3})};  // d = 2^-24
  std::vector<float> y(64, NAN);
  DequantizeRowQ8_0(q8.data(), 64, y.data());
  EXPECT_EQ(-0.5f, y[0]);
  EXPECT_EQ(1.0f, y[1]);
  EXPECT_EQ(-63.5f, y[2]);
  EXPECT_EQ(64.0f, y[3]);
  EXPECT_EQ(0.0f, y[4]);
  EXPECT_EQ(ldexpf(3.0f, -24), y[32]);
  // Q4_0: d = 2 (0x4000); byte j holds weights j (low) and j + 16 (high).
  std::vector<int> q(32, 8);
  q[0] = 0;
  q[1] = 15;
  q[16] = 9;
  q[31] = 3;
  const BlockQ4_0 q4 = Q4Block(0x4000, q);
  DequantizeRowQ4_0(&q4, 32, y.data());
  EXPECT_EQ(-16.0f, y[0]);
  EXPECT_EQ(14.0f, y[1]);
  EXPECT_EQ(0.0f, y[2]);
  EXPECT_EQ(2.0f, y[16]);
  EXPECT_EQ(-10.0f, y[31]);
}

// Round trip: |x - dequant(quant(x))| <= d/2 per weight for Q8_0 (plus the f16
// rounding of d, <= 2^-11 |d| per unit of q), and <= |d| for Q4_0 (the clamp
// of the opposite-sign end loses up to one step).
TEST(QuantizeTest, RoundTripErrorIsWithinOneStep) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-3.0f, 3.0f);
  std::vector<float> x(32 * 64);
  for (float& v : x) v = unit(rng);
  std::vector<BlockQ8_0> q8(64);
  std::vector<BlockQ4_0> q4(64);
  std::vector<float> y8(x.size()), y4(x.size());
  QuantizeRowQ8_0(x.data(), x.size(), q8.data());
  QuantizeRowQ4_0(x.data(), x.size(), q4.data());
  DequantizeRowQ8_0(q8.data(), x.size(), y8.data());
  DequantizeRowQ4_0(q4.data(), x.size(), y4.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double d8 = F16BitsToF32(q8[i / 32].d);
    const double d4 = fabs(F16BitsToF32(q4[i / 32].d));
    EXPECT_LE(fabs(x[i] - y8[i]), d8 * (0.5 + 128 * ldexp(1.0, -11))) << i;
    EXPECT_LE(fabs(x[i] - y4[i]), d4 * (1.0 + 16 * ldexp(1.0, -11))) << i;
  }
}

TEST(QuantizeTest, RowOfSeveralBlocksIsBlockByBlock) {
  std::vector<float> x(96);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 40.0f;
  std::vector<uint8_t> row8(3 * kQ8_0BlockBytes), row4(3 * kQ4_0BlockBytes);
  QuantizeRowQ8_0(x.data(), 96, row8.data());
  QuantizeRowQ4_0(x.data(), 96, row4.data());
  for (size_t b = 0; b < 3; ++b) {
    BlockQ8_0 one8;
    BlockQ4_0 one4;
    QuantizeRowQ8_0(&x[b * 32], 32, &one8);
    QuantizeRowQ4_0(&x[b * 32], 32, &one4);
    EXPECT_EQ(0, memcmp(&one8, &row8[b * kQ8_0BlockBytes], kQ8_0BlockBytes));
    EXPECT_EQ(0, memcmp(&one4, &row4[b * kQ4_0BlockBytes], kQ4_0BlockBytes));
  }
  EXPECT_EQ(3 * 34u, Q8_0RowBytes(96));
  EXPECT_EQ(3 * 18u, Q4_0RowBytes(96));
}

TEST(QuantizeDeathTest, LengthMustBeAMultipleOf32) {
  std::vector<float> x(33, 1.0f);
  std::vector<uint8_t> out(64);
  EXPECT_DEATH(QuantizeRowQ8_0(x.data(), 33, out.data()), "");
  EXPECT_DEATH(QuantizeRowQ4_0(x.data(), 33, out.data()), "");
}

}  // namespace
}  // namespace ops
}  // namespace cortiq
