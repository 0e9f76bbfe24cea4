// Tests ops/quantize_iq4.cc (IQ4_NL, IQ4_XS) against blocks worked out by hand
// from the format definitions (ggml-common.h block_iq4_nl / block_iq4_xs,
// kvalues_iq4nl) and the rules of llama.cpp's quantize_iq4_nl /
// quantize_iq4_xs without an importance matrix: values on an exact grid
// (x = s * level, the level -127 present) fit scale s exactly, all-zero
// blocks, and the dequantizers. Bit-identity with llama-quantize's own blocks:
// llama_quantize_blocks_test.

#include "ops/quantize_iq4.h"

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
  for (size_t i = 0; i < sizeof(Block); ++i) EXPECT_EQ(e[i], g[i]) << "byte " << i;
}

// Indices of 32 weights in Q4_0's nibble layout.
void PackIndices(const int* idx, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(idx[j] | (idx[j + 16] << 4));
}

TEST(QuantizeIQ4Test, IQ4_NLExactGrid) {
  // x = kIQ4NLValues[q] / 64 with q = 0 (level -127, the largest magnitude)
  // at j = 5: the first candidate scale max / 127 is negative, but the
  // candidate 1 / id = max / (0 - 127) = 1/64 puts every x on its level, which
  // maximizes (sum w q x)^2 / sum w q^2; d = f16(1/64) (0x2400), indices q.
  int q[32];
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) {
    q[j] = j == 5 ? 0 : (j * 7 + 2) % 15 + 1;
    x[j] = kIQ4NLValues[q[j]] / 64.0f;
  }
  BlockIQ4_NL expected;
  expected.d = 0x2400;
  PackIndices(q, expected.qs);
  BlockIQ4_NL got;
  QuantizeRowIQ4_NL(x.data(), 32, &got);
  ExpectBlock(expected, got);
  // All zero: scale 0, and every index is the level nearest to 0 (1, index 8).
  std::vector<float> z(32, 0.0f);
  QuantizeRowIQ4_NL(z.data(), 32, &got);
  EXPECT_EQ(0x0000, got.d);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(0x88, got.qs[j]);
}

TEST(QuantizeIQ4Test, IQ4_XSExactGrid) {
  // Every sub-block x = kIQ4NLValues[q] / 16 (level -127 present): each
  // sub-block scale is 1/16, d = -max_scale / 32 = -1/512 (0x9800), every
  // 6-bit scale nearest((1/16) / d) + 32 = 0, and the indices are requantized
  // with d * -32 = 1/16: q.
  int q[256];
  std::vector<float> x(256);
  BlockIQ4_XS expected;
  memset(&expected, 0, sizeof(expected));
  for (int i = 0; i < 256; ++i) {
    q[i] = i % 32 == 9 ? 0 : (i * 5 + i / 32) % 16;
    x[i] = kIQ4NLValues[q[i]] / 16.0f;
  }
  for (int k = 0; k < 8; ++k) PackIndices(q + 32 * k, expected.qs + 16 * k);
  expected.d = 0x9800;
  BlockIQ4_XS got;
  QuantizeRowIQ4_XS(x.data(), 256, &got);
  ExpectBlock(expected, got);
  // All zero: d = f16(-0 / 32) = 0x8000, every scale code 0 + 32 (low
  // nibbles 0, high bits 2 = 0b10 per sub-block: scales_h 0xAAAA), indices 8.
  std::vector<float> z(256, 0.0f);
  QuantizeRowIQ4_XS(z.data(), 256, &got);
  EXPECT_EQ(0x8000, got.d);
  EXPECT_EQ(0xAAAA, got.scales_h);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(0, got.scales_l[k]);
  for (int j = 0; j < 128; ++j) EXPECT_EQ(0x88, got.qs[j]);
}

TEST(QuantizeIQ4Test, DequantizersFollowTheBlockDefinitions) {
  BlockIQ4_NL nl;
  memset(&nl, 0, sizeof(nl));
  nl.d = 0x3800;  // 1/2
  nl.qs[3] = 0xF2;  // weight 3: level 2 (-83); weight 19: level 15 (113)
  float y[256];
  DequantizeRowIQ4_NL(&nl, 32, y);
  EXPECT_EQ(-41.5f, y[3]);
  EXPECT_EQ(56.5f, y[19]);
  EXPECT_EQ(-63.5f, y[0]);  // index 0: -127 / 2
  // IQ4_XS: sub-block 5 has ls = (scales_l[2] >> 4) | ((scales_h >> 10) & 3)
  // << 4 = 0xC | 1 << 4 = 28 -> 28 - 32 = -4; d = 1/4.
  BlockIQ4_XS xs;
  memset(&xs, 0, sizeof(xs));
  xs.d = 0x3400;
  xs.scales_l[2] = 0xC0;
  xs.scales_h = 1 << 10;
  xs.qs[16 * 5 + 7] = 0xA9;  // weight 167: level 9 (13); weight 183: 10 (25)
  DequantizeRowIQ4_XS(&xs, 256, y);
  EXPECT_EQ(0.25f * -4 * 13, y[32 * 5 + 7]);
  EXPECT_EQ(0.25f * -4 * 25, y[32 * 5 + 16 + 7]);
  EXPECT_EQ(0.25f * -32 * -127, y[0]);  // sub-block 0: ls 0 -> -32, index 0
  EXPECT_EQ(-4, IQ4_XSScale(xs, 5));
  EXPECT_EQ(-32, IQ4_XSScale(xs, 4));  // low nibble of scales_l[2], bits 8, 9: 0
}

}  // namespace
}  // namespace ops
}  // namespace cortiq
