// Tests ops/quantize_k.cc (Q2_K ... Q6_K) against super-blocks worked out by
// hand from the format definitions (ggml-common.h block_q*_K) and the rules
// of the reference quantizers (quantize_row_q*_K_ref, ggml-quants.c): for
// values on an exact grid (every sub-block x = a q + b with the same a, b,
// its extreme quants present) each quantizer's least-squares fit returns a
// and b up to rounding noise, the super-block scale is then fixed by the f16
// rounding, every sub-block scale is the largest code, and the requantized
// quants are the grid's q; all-zero super-blocks; and the dequantizers on
// hand-built blocks whose scale fields use every packing case.
// Bit-identity with llama-quantize's own blocks: llama_quantize_blocks_test.

#include "ops/quantize_k.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "gtest/gtest.h"

namespace cortiq {
namespace ops {
namespace {

template <typename Block>
void ExpectBlock(const Block& expected, const Block& got) {
  const uint8_t* e = reinterpret_cast<const uint8_t*>(&expected);
  const uint8_t* g = reinterpret_cast<const uint8_t*>(&got);
  for (size_t i = 0; i < sizeof(Block); ++i) {
    EXPECT_EQ(e[i], g[i]) << "byte " << i;
  }
}

// Q2_K / Q3_K low bits: weight i of half h = i / 128 at bits 2 ((i % 128) /
// 32) of qs[32 h + i % 32].
void Pack2(const int* q, uint8_t* qs) {
  memset(qs, 0, 64);
  for (int i = 0; i < 256; ++i) {
    qs[32 * (i / 128) + i % 32] |= static_cast<uint8_t>((q[i] & 3) << (2 * ((i % 128) / 32)));
  }
}

// Q4_K / Q5_K low nibbles: weight i of chunk c = i / 64 in qs[32 c + i % 32],
// low nibble for i % 64 < 32.
void Pack4(const int* q, uint8_t* qs) {
  memset(qs, 0, 128);
  for (int i = 0; i < 256; ++i) {
    qs[32 * (i / 64) + i % 32] |= static_cast<uint8_t>((q[i] & 0xF) << (i % 64 < 32 ? 0 : 4));
  }
}

TEST(QuantizeKTest, Q4_KExactGrid) {
  // x = a q + b, a = 63/64, b = -63/32, q in [0, 15] with 0 and 15 in every
  // sub-block of 32: each sub-block fits scale a, min -b; d = f16(a / 63) =
  // 1/64 (0x2400), dmin = f16(-b / 63) = 1/32 (0x2800), every 6-bit scale and
  // min 63 (all 12 scale bytes 0xFF: 63 | 3 << 6, and 15 | 15 << 4), and the
  // requantized quants ((x + 63/32) / (63/64)) are q.
  int q[256];
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) {
    q[i] = (i % 32 + 3 * (i / 32)) % 16;
    x[i] = 63.0f / 64 * q[i] - 63.0f / 32;
  }
  BlockQ4_K expected;
  expected.d = 0x2400;
  expected.dmin = 0x2800;
  memset(expected.scales, 0xFF, sizeof(expected.scales));
  Pack4(q, expected.qs);
  BlockQ4_K got;
  QuantizeRowQ4_K(x.data(), 256, &got);
  ExpectBlock(expected, got);
}

TEST(QuantizeKTest, Q5_KExactGrid) {
  // As Q4_K with q in [0, 31] (a permutation per sub-block of 32); bit 4 of
  // the quant of weight i goes to bit i / 32 of qh[i % 32].
  int q[256];
  std::vector<float> x(256);
  BlockQ5_K expected;
  memset(&expected, 0, sizeof(expected));
  for (int i = 0; i < 256; ++i) {
    q[i] = (i % 32 * 7 + i / 32) % 32;
    x[i] = 63.0f / 64 * q[i] - 63.0f / 32;
    if (q[i] & 16) expected.qh[i % 32] |= static_cast<uint8_t>(1 << (i / 32));
  }
  expected.d = 0x2400;
  expected.dmin = 0x2800;
  memset(expected.scales, 0xFF, sizeof(expected.scales));
  Pack4(q, expected.qs);
  BlockQ5_K got;
  QuantizeRowQ5_K(x.data(), 256, &got);
  ExpectBlock(expected, got);
}

TEST(QuantizeKTest, Q6_KExactGrid) {
  // x = (q - 32) / 4, q in [0, 63], q = 0 (x = -8, the largest magnitude) in
  // every sub-block of 16: make_qx_quants returns 1/4 for each, so max_scale =
  // 1/4, iscale = -128 / (1/4) = -512, d = f16(-1/512) (0x9800), every scale
  // nearest(-512 / 4) = -128, and the requantized quants x / (d * -128) + 32
  // are q. Low 4 bits of weight i (h = i / 128, t = (i % 128) / 32) in the low
  // (t < 2) or high nibble of ql[64 h + 32 (t % 2) + i % 32], bits 4, 5 at
  // bits 2t of qh[32 h + i % 32].
  int q[256];
  std::vector<float> x(256);
  BlockQ6_K expected;
  memset(&expected, 0, sizeof(expected));
  for (int i = 0; i < 256; ++i) {
    q[i] = i % 16 == 0 ? 0 : (i * 5 + i / 16) % 63 + 1;
    x[i] = (q[i] - 32) / 4.0f;
    const int h = i / 128, t = (i % 128) / 32, l = i % 32;
    expected.ql[64 * h + 32 * (t % 2) + l] |=
        static_cast<uint8_t>((q[i] & 0xF) << (t < 2 ? 0 : 4));
    expected.qh[32 * h + l] |= static_cast<uint8_t>((q[i] >> 4) << (2 * t));
  }
  for (int k = 0; k < 16; ++k) expected.scales[k] = -128;
  expected.d = 0x9800;
  BlockQ6_K got;
  QuantizeRowQ6_K(x.data(), 256, &got);
  ExpectBlock(expected, got);
}

TEST(QuantizeKTest, Q3_KExactGrid) {
  // x = (q - 4) / 2, q in [0, 7], q = 0 (x = -2) in every sub-block of 16:
  // make_q3_quants returns 1/2 for each, iscale = -32 / (1/2) = -64, every
  // 6-bit scale code nearest(-64 / 2) + 32 = 0 (all scale bytes 0),
  // d = f16(-1/64) (0xA400), and the requantized quants x / (d * -32) + 4 are
  // q: bits 0, 1 in qs (Q2_K's layout), bit 2 of weight i at bit i / 32 of
  // hmask[i % 32].
  int q[256];
  std::vector<float> x(256);
  BlockQ3_K expected;
  memset(&expected, 0, sizeof(expected));
  for (int i = 0; i < 256; ++i) {
    q[i] = i % 16 == 3 ? 0 : (i * 3 + i / 16) % 8;
    x[i] = (q[i] - 4) / 2.0f;
    if (q[i] & 4) expected.hmask[i % 32] |= static_cast<uint8_t>(1 << (i / 32));
  }
  Pack2(q, expected.qs);
  expected.d = 0xA400;
  BlockQ3_K got;
  QuantizeRowQ3_K(x.data(), 256, &got);
  ExpectBlock(expected, got);
}

TEST(QuantizeKTest, Q2_KExactGrid) {
  // x = a q + b, a = 15/16, b = -15/8, q in [0, 3] with 0 and 3 in every
  // sub-block of 16: d = f16(a / 15) = 1/16 (0x2C00), dmin = f16(-b / 15) =
  // 1/8 (0x3000), every 4-bit scale and min 15 (scale bytes 0xFF), quants q.
  int q[256];
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) {
    q[i] = i % 16 == 0 ? 0 : (i % 16 == 1 ? 3 : (i * 7 + i / 16) % 4);
    x[i] = 15.0f / 16 * q[i] - 15.0f / 8;
  }
  BlockQ2_K expected;
  memset(expected.scales, 0xFF, sizeof(expected.scales));
  Pack2(q, expected.qs);
  expected.d = 0x2C00;
  expected.dmin = 0x3000;
  BlockQ2_K got;
  QuantizeRowQ2_K(x.data(), 256, &got);
  ExpectBlock(expected, got);
}

TEST(QuantizeKTest, AllZeroSuperBlocks) {
  // Every quantizer sees max == min (Q2_K, Q4_K, Q5_K: scale 0, min 0) or a
  // group below GROUP_MAX_EPS (Q3_K, Q6_K: scale 0); all scales are 0, so d =
  // dmin = 0, nothing is requantized, and the quants stay 0: all bytes 0.
  const std::vector<float> zero(256, 0.0f);
  uint8_t out[kQ6_KBlockBytes];  // the largest of the five
  const auto all_zero = [&](size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) {
      if (out[i] != 0) return false;
    }
    return true;
  };
  memset(out, 0xAB, sizeof(out));
  QuantizeRowQ2_K(zero.data(), 256, out);
  EXPECT_TRUE(all_zero(kQ2_KBlockBytes));
  memset(out, 0xAB, sizeof(out));
  QuantizeRowQ3_K(zero.data(), 256, out);
  EXPECT_TRUE(all_zero(kQ3_KBlockBytes));
  memset(out, 0xAB, sizeof(out));
  QuantizeRowQ4_K(zero.data(), 256, out);
  EXPECT_TRUE(all_zero(kQ4_KBlockBytes));
  memset(out, 0xAB, sizeof(out));
  QuantizeRowQ5_K(zero.data(), 256, out);
  EXPECT_TRUE(all_zero(kQ5_KBlockBytes));
  // Q6_K: values below 1e-15 count as zero too.
  std::vector<float> tiny(256, 1e-16f);
  memset(out, 0xAB, sizeof(out));
  QuantizeRowQ6_K(tiny.data(), 256, out);
  EXPECT_TRUE(all_zero(kQ6_KBlockBytes));
}

TEST(QuantizeKTest, KScaleMinUnpacksEveryField) {
  // Sub-blocks 0..3: low 6 bits of scales[k] / scales[k + 4]; 4..7: low /
  // high nibble of scales[k + 4] plus bits 6, 7 of scales[k - 4] /
  // scales[k] as bits 4, 5.
  uint8_t s[12] = {0xC7, 0x41, 0x3F, 0x80, 0x81, 0x00, 0xFF, 0x42,
                   0x2A, 0x5B, 0xF0, 0x0F};
  int sc, m;
  KScaleMin(s, 0, &sc, &m);
  EXPECT_EQ(7, sc);   // 0xC7 & 63
  EXPECT_EQ(1, m);    // 0x81 & 63
  KScaleMin(s, 3, &sc, &m);
  EXPECT_EQ(0, sc);   // 0x80 & 63
  EXPECT_EQ(2, m);    // 0x42 & 63
  KScaleMin(s, 4, &sc, &m);
  EXPECT_EQ(0xA | (3 << 4), sc);  // scales[8] & 15 | (0xC7 >> 6) << 4 = 58
  EXPECT_EQ(0x2 | (2 << 4), m);   // scales[8] >> 4 | (0x81 >> 6) << 4 = 34
  KScaleMin(s, 6, &sc, &m);
  EXPECT_EQ(0x0 | (0 << 4), sc);  // 0xF0 & 15 | (0x3F >> 6) << 4
  EXPECT_EQ(0xF | (3 << 4), m);   // 0xF0 >> 4 | (0xFF >> 6) << 4 = 63
  // Q3_K: low 4 bits from scales[k] (k < 8) or scales[k - 8] >> 4, high 2
  // bits from bits 2 (k / 4) of scales[8 + k % 4]; value - 32.
  uint8_t t[12] = {0x21, 0, 0, 0, 0, 0, 0, 0x9F, 0xE4, 0, 0, 0xC3};
  EXPECT_EQ((1 | (0 << 4)) - 32, Q3_KScale(t, 0));   // 0x21 & 15, 0xE4 & 3
  EXPECT_EQ((0 | (3 << 4)) - 32, Q3_KScale(t, 3));   // 0, 0xC3 & 3
  EXPECT_EQ((2 | (2 << 4)) - 32, Q3_KScale(t, 8));   // 0x21 >> 4, (0xE4 >> 4) & 3
  EXPECT_EQ((9 | (3 << 4)) - 32, Q3_KScale(t, 15));  // 0x9F >> 4, (0xC3 >> 6) & 3
}

TEST(QuantizeKTest, DequantizersFollowTheBlockDefinitions) {
  std::vector<float> y(256);
  // Q4_K: d = 1/2, dmin = 1/4, sub-block 5 has sc = 58, m = 34 (scales as in
  // KScaleMinUnpacksEveryField, k = 4 there: bytes 1, 5, 9 for k = 5).
  BlockQ4_K b4;
  memset(&b4, 0, sizeof(b4));
  b4.d = 0x3800;
  b4.dmin = 0x3400;
  b4.scales[1] = 0xC7;  // sc_1 = 7, bits 4, 5 of sc_5 = 3
  b4.scales[5] = 0x81;  // m_1 = 1, bits 4, 5 of m_5 = 2
  b4.scales[9] = 0x2A;  // sc_5 low = 10, m_5 low = 2
  b4.qs[64 + 3] = 0x90;  // weight 163 = 64 * 2 + 32 + 3: high nibble 9
  b4.qs[32 + 4] = 0x05;  // weight 68 = 64 + 4 (sub-block 2: sc = m = 0)
  b4.qs[0 + 40 - 32] = 0xC0;  // weight 40 (sub-block 1): high nibble of qs[8]
  DequantizeRowQ4_K(&b4, 256, y.data());
  EXPECT_EQ(0.5f * 58 * 9 - 0.25f * 34, y[163]);  // 252.5
  EXPECT_EQ(0.5f * 58 * 0 - 0.25f * 34, y[160]);
  EXPECT_EQ(0.5f * 7 * 12 - 0.25f * 1, y[40]);
  EXPECT_EQ(0.0f, y[68]);
  // Q5_K: the same plus bit 4 of weight 163 = bit 5 of qh[3].
  BlockQ5_K b5;
  memset(&b5, 0, sizeof(b5));
  b5.d = 0x3800;
  b5.dmin = 0x3400;
  b5.scales[1] = 0xC7;
  b5.scales[5] = 0x81;
  b5.scales[9] = 0x2A;
  b5.qs[64 + 3] = 0x90;
  b5.qh[3] = 1 << 5;
  DequantizeRowQ5_K(&b5, 256, y.data());
  EXPECT_EQ(0.5f * 58 * (9 + 16) - 0.25f * 34, y[163]);
  EXPECT_EQ(0.0f, y[99]);  // sub-block 3: sc = m = 0
  // Q6_K: d = 1/8; weight 200 = 128 + 64 + 8 (h = 1, t = 2, l = 8): high
  // nibble of ql[64 + 8], bits 4, 5 of qh[32 + 8]; sub-block 12.
  BlockQ6_K b6;
  memset(&b6, 0, sizeof(b6));
  b6.d = 0x3000;
  b6.ql[64 + 8] = 0x70;
  b6.qh[32 + 8] = 0x20;  // bits 4, 5 = 2
  b6.scales[12] = -3;
  DequantizeRowQ6_K(&b6, 256, y.data());
  EXPECT_EQ(0.125f * -3 * ((7 | (2 << 4)) - 32), y[200]);  // 0.125 * -3 * 7
  EXPECT_EQ(0.125f * -3 * -32, y[201]);  // quant 0: 0 - 32
  // Q3_K: d = 1/4; weight 70 (h = 0, t = 2, l = 6): bits 4, 5 of qs[6], bit 2
  // of hmask[6]; sub-block 4 with scale code 0x1F (low nibble of scales[4] =
  // 15, high bits (scales[8] >> 2) & 3 = 1): 31 - 32 = -1.
  BlockQ3_K b3;
  memset(&b3, 0, sizeof(b3));
  b3.d = 0x3400;
  b3.qs[6] = 0x30;    // low bits 3
  b3.hmask[6] = 0x04;  // bit 2 (weight 70 / 32 = 2): high bit set, no -4
  b3.scales[4] = 0x0F;
  b3.scales[8] = 0x04;
  DequantizeRowQ3_K(&b3, 256, y.data());
  EXPECT_EQ(0.25f * -1 * 3, y[70]);
  EXPECT_EQ(0.25f * -1 * -4, y[71]);  // quant 0, high bit clear: 0 - 4
  // Q2_K: d = 1, dmin = 1/2; weight 255 (h = 1, t = 3, l = 31): bits 6, 7 of
  // qs[63]; sub-block 15: scale 5, min 9.
  BlockQ2_K b2;
  memset(&b2, 0, sizeof(b2));
  b2.d = 0x3C00;
  b2.dmin = 0x3800;
  b2.qs[63] = 0x80;  // bits 6, 7 = 2
  b2.scales[15] = 0x95;
  DequantizeRowQ2_K(&b2, 256, y.data());
  EXPECT_EQ(1.0f * 5 * 2 - 0.5f * 9, y[255]);
  EXPECT_EQ(1.0f * 5 * 0 - 0.5f * 9, y[254]);
}

TEST(QuantizeKDeathTest, LengthMustBeAMultipleOf256) {
  std::vector<float> x(288, 1.0f);
  std::vector<uint8_t> out(2 * kQ6_KBlockBytes);
  EXPECT_DEATH(QuantizeRowQ4_K(x.data(), 288, out.data()), "");
  EXPECT_DEATH(QuantizeRowQ6_K(x.data(), 288, out.data()), "");
  std::vector<float> y(288);
  EXPECT_DEATH(DequantizeRowQ2_K(out.data(), 288, y.data()), "");
}

}  // namespace
}  // namespace ops
}  // namespace cortiq
