// Tests ops/quantize_legacy.cc (Q4_1, Q5_0, Q5_1) against blocks worked out
// by hand from the format definitions (ggml-common.h) and the reference
// quantizers' rules (quantize_row_q4_1_ref / _q5_0_ref / _q5_1_ref,
// ggml-quants.c): exact grids, constant blocks, rounding ties and the clamps.
// Bit-identity with llama-quantize's own blocks: llama_quantize_blocks_test.

#include "ops/quantize_legacy.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "gtest/gtest.h"
#include "ops/quantize.h"

namespace cortiq {
namespace ops {
namespace {

// Packs 32 quants: low nibbles Q4_0-style into qs, bit 4 of quant j into bit
// j of qh (little-endian).
void Pack(const int* q, uint8_t* qs, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
  }
  for (int j = 0; j < 32; ++j) bits |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  if (qh != nullptr) memcpy(qh, &bits, 4);
}

TEST(QuantizeLegacyTest, Q4_1ExactGrid) {
  // x = 0.25 q - 1.5, q = j % 16: min = -1.5 (q = 0), max = 2.25 (q = 15),
  // d = 3.75 / 15 = 0.25 (f16 0x3400), m = -1.5 (0xBE00), id = 4; every
  // (x - min) * id = q exactly, + 0.5 truncates to q.
  int q[32];
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) {
    q[j] = j % 16;
    x[j] = 0.25f * q[j] - 1.5f;
  }
  BlockQ4_1 expected;
  expected.d = 0x3400;
  expected.m = 0xBE00;
  Pack(q, expected.qs, nullptr);
  BlockQ4_1 got;
  QuantizeRowQ4_1(x.data(), 32, &got);
  EXPECT_EQ(0, memcmp(&expected, &got, sizeof(got)));
}

TEST(QuantizeLegacyTest, Q4_1TiesRoundUpAndConstantBlocks) {
  // min = 0, max = 15: d = 1, id = 1. 2.5 -> (int8)3.0 = 3 (ties go up),
  // 2.4999998 -> 2, 14.5 -> 15, 15 -> (int8)15.5 = 15.
  std::vector<float> x(32, 0.0f);
  x[1] = 15.0f;
  x[2] = 2.5f;
  x[3] = 2.4999998f;
  x[17] = 14.5f;
  int q[32] = {0};
  q[1] = 15;
  q[2] = 3;
  q[3] = 2;
  q[17] = 15;
  BlockQ4_1 expected;
  expected.d = 0x3C00;  // 1
  expected.m = 0x0000;
  Pack(q, expected.qs, nullptr);
  BlockQ4_1 got;
  QuantizeRowQ4_1(x.data(), 32, &got);
  EXPECT_EQ(0, memcmp(&expected, &got, sizeof(got)));
  // Constant block 3: max == min, d = 0, id = 0, every q = (int8)0.5 = 0.
  std::vector<float> c(32, 3.0f);
  QuantizeRowQ4_1(c.data(), 32, &got);
  EXPECT_EQ(0x0000, got.d);
  EXPECT_EQ(0x4200, got.m);  // f16(3)
  for (int j = 0; j < 16; ++j) EXPECT_EQ(0, got.qs[j]);
}

TEST(QuantizeLegacyTest, Q5_0ExactGridAndClamp) {
  // x = 0.5 (q - 16); q_0 = 0 gives the value of largest magnitude, -8, so
  // d = -8 / -16 = 0.5 (0x3800), id = 2, q = (int8)(x * 2 + 16.5) = q. One
  // value +8 (q would be 32) clamps to 31.
  int q[32];
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) {
    q[j] = (j * 7 + 3) % 32;
    if (j == 0) q[j] = 0;
    x[j] = 0.5f * (q[j] - 16);
  }
  x[20] = 8.0f;  // = -max: 8 * 2 + 16.5 = 32.5 -> 32 -> 31
  q[20] = 31;
  BlockQ5_0 expected;
  expected.d = 0x3800;
  Pack(q, expected.qs, expected.qh);
  BlockQ5_0 got;
  QuantizeRowQ5_0(x.data(), 32, &got);
  EXPECT_EQ(0, memcmp(&expected, &got, sizeof(got)));
  // All zero: max = 0, d = -0 (0x8000), every q = (int8)16.5 = 16: qs 0, all
  // qh bits set.
  std::vector<float> z(32, 0.0f);
  QuantizeRowQ5_0(z.data(), 32, &got);
  EXPECT_EQ(0x8000, got.d);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(0, got.qs[j]);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(0xFF, got.qh[j]);
}

TEST(QuantizeLegacyTest, Q5_1ExactGrid) {
  // x = 0.125 q + 2, q a permutation of 0..31: min 2 (0x4000), max 5.875,
  // d = 3.875 / 31 = 0.125 (0x3000), id = 8.
  int q[32];
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) {
    q[j] = (j * 13 + 5) % 32;
    x[j] = 0.125f * q[j] + 2.0f;
  }
  BlockQ5_1 expected;
  expected.d = 0x3000;
  expected.m = 0x4000;
  Pack(q, expected.qs, expected.qh);
  BlockQ5_1 got;
  QuantizeRowQ5_1(x.data(), 32, &got);
  EXPECT_EQ(0, memcmp(&expected, &got, sizeof(got)));
}

TEST(QuantizeLegacyTest, DequantizersFollowTheBlockDefinitions) {
  // Q4_1: d = 0.5, m = -2: weight 0 (low nibble 9) = 2.5, weight 16 (high
  // nibble 3) = -0.5.
  BlockQ4_1 b41;
  memset(&b41, 0, sizeof(b41));
  b41.d = 0x3800;
  b41.m = 0xC000;
  b41.qs[0] = 0x39;
  float y[32];
  DequantizeRowQ4_1(&b41, 32, y);
  EXPECT_EQ(2.5f, y[0]);
  EXPECT_EQ(-0.5f, y[16]);
  EXPECT_EQ(-2.0f, y[1]);
  // Q4_1 rounds d * q + m once: d = 1, m = 2^-24 (the smallest f16
  // subnormal); 1 + 2^-24 is halfway between 1 and 1 + 2^-23 and rounds to
  // the even 1; q = 3 gives 3 + 2^-24, which rounds to 3.
  b41.d = 0x3C00;
  b41.m = 0x0001;
  b41.qs[0] = 0x01;
  b41.qs[1] = 0x03;
  DequantizeRowQ4_1(&b41, 32, y);
  EXPECT_EQ(1.0f, y[0]);
  EXPECT_EQ(3.0f, y[1]);
  EXPECT_EQ(0x1p-24f, y[2]);
  // Q5_0: d = -0.25; weight 5: nibble 3 | qh bit 5 -> 19, (19 - 16) * -0.25;
  // weight 21: high nibble of qs[5] = 0xA, qh bit 21 clear -> (10 - 16) * -0.25.
  BlockQ5_0 b50;
  memset(&b50, 0, sizeof(b50));
  b50.d = 0xB400;
  b50.qs[5] = 0xA3;
  const uint32_t qh = 1u << 5;
  memcpy(b50.qh, &qh, 4);
  DequantizeRowQ5_0(&b50, 32, y);
  EXPECT_EQ(-0.75f, y[5]);
  EXPECT_EQ(1.5f, y[21]);
  EXPECT_EQ(4.0f, y[0]);  // q = 0: -16 * -0.25
  // Q5_1: d = 2, m = 1; weight 31: high nibble of qs[15] = 0xF with qh bit 31
  // -> q = 31: 63.
  BlockQ5_1 b51;
  memset(&b51, 0, sizeof(b51));
  b51.d = 0x4000;
  b51.m = 0x3C00;
  b51.qs[15] = 0xF0;
  const uint32_t qh51 = 1u << 31;
  memcpy(b51.qh, &qh51, 4);
  DequantizeRowQ5_1(&b51, 32, y);
  EXPECT_EQ(63.0f, y[31]);
  EXPECT_EQ(1.0f, y[15]);
}

TEST(QuantizeLegacyDeathTest, LengthMustBeAMultipleOf32) {
  std::vector<float> x(48, 1.0f);
  std::vector<uint8_t> out(64);
  EXPECT_DEATH(QuantizeRowQ4_1(x.data(), 48, out.data()), "");
  EXPECT_DEATH(QuantizeRowQ5_0(x.data(), 48, out.data()), "");
  EXPECT_DEATH(QuantizeRowQ5_1(x.data(), 48, out.data()), "");
}

}  // namespace
}  // namespace ops
}  // namespace cortiq
