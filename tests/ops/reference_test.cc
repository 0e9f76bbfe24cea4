// Tests the scalar references (ops/reference.cc) on small cases with values
// worked out by hand or from independent double computations (Python math), so
// that the kernel tests, which compare against these references, rest on
// checked ground.

#include "ops/reference.h"

#include <math.h>
#include <stddef.h>

#include <vector>

#include "gtest/gtest.h"
#include "hwy/base.h"
#include "ops/quantize.h"

namespace cortiq {
namespace ops {
namespace {

TEST(ReferenceTest, Linear) {
  // [[1, 2, 3], [4, 5, 6], [-1, 0, 1]] * [1, -1, 2] = [5, 11, 1]; only rows [1,
  // 3) written.
  const float w[9] = {1, 2, 3, 4, 5, 6, -1, 0, 1};
  const float x[3] = {1, -1, 2};
  float y[3] = {-7, -7, -7};
  LinearF32Reference(w, x, y, 3, 3, 1, 3);
  EXPECT_EQ(-7.0f, y[0]);
  EXPECT_EQ(11.0f, y[1]);
  EXPECT_EQ(1.0f, y[2]);
  hwy::bfloat16_t wb[9];
  for (int i = 0; i < 9; ++i) wb[i] = F32ToBF16(w[i]);
  float yb[3];
  LinearBF16Reference(wb, x, yb, 3, 3, 0, 3);
  EXPECT_EQ(5.0f, yb[0]);
  EXPECT_EQ(11.0f, yb[1]);
  EXPECT_EQ(1.0f, yb[2]);
  // Accumulates in double: 1e8 + 1 - 1e8 is 1 (it would be 0 in f32).
  const float w2[3] = {1e8f, 1.0f, -1e8f};
  const float ones[3] = {1, 1, 1};
  float y2;
  LinearF32Reference(w2, ones, &y2, 1, 3, 0, 1);
  EXPECT_EQ(1.0f, y2);
}

// Quantized rows built by hand from the block definitions (ops/quantize.h).
TEST(ReferenceTest, LinearAndGatherQuantized) {
  // Q8_0, two rows of one block: row 0 d = 0.5 (f16 0x3800), q = [2, -4, 6,
  // 0...]; row 1 d = -2 (0xC000), q = [1, 1, 0, ..., 0, 3 at j = 31].
  BlockQ8_0 q8[2] = {};
  q8[0].d = 0x3800;
  q8[0].qs[0] = 2;
  q8[0].qs[1] = -4;
  q8[0].qs[2] = 6;
  q8[1].d = 0xC000;
  q8[1].qs[0] = 1;
  q8[1].qs[1] = 1;
  q8[1].qs[31] = 3;
  float x[32] = {};
  x[0] = 1;
  x[1] = 2;
  x[2] = 3;
  x[31] = -1;
  float y[2];
  // Row 0: 0.5 * (2 - 8 + 18) = 6; row 1: -2 * (1 + 2 - 3) = 0.
  LinearQ8_0Reference(q8, x, y, 2, 32, 0, 2);
  EXPECT_EQ(6.0f, y[0]);
  EXPECT_EQ(0.0f, y[1]);
  float g[3];
  GatherRowQ8_0Reference(q8, 32, 1, 30, 2, 0.5f, g);  // 0.5 * -2 * [0, 3]
  EXPECT_EQ(0.0f, g[0]);
  EXPECT_EQ(-3.0f, g[1]);
  // Q4_0, one block: d = 0.25 (0x3400); byte 0 = 0xA3: weight 0 = 0.25 * (3 -
  // 8) = -1.25, weight 16 = 0.25 * (10 - 8) = 0.5; the others nibble 8 (0).
  BlockQ4_0 q4 = {};
  q4.d = 0x3400;
  for (int j = 0; j < 16; ++j) q4.qs[j] = 0x88;
  q4.qs[0] = 0xA3;
  float x4[32] = {};
  x4[0] = 4;
  x4[16] = -2;
  LinearQ4_0Reference(&q4, x4, y, 1, 32, 0, 1);
  EXPECT_EQ(-6.0f, y[0]);  // -1.25 * 4 + 0.5 * -2
  GatherRowQ4_0Reference(&q4, 32, 0, 15, 3, 2.0f, g);  // 2 * [0, 0.5, 0]
  EXPECT_EQ(0.0f, g[0]);
  EXPECT_EQ(1.0f, g[1]);
  EXPECT_EQ(0.0f, g[2]);
}

TEST(ReferenceTest, RmsNorm) {
  // Group [3, 4]: mean square 12.5; group [0, 0]: 0 (eps keeps it finite).
  const float x[4] = {3, 4, 0, 0};
  const float gain[2] = {2, -1};
  float y[4];
  RmsNormReference(x, gain, y, 4, 2, 0.0f);
  EXPECT_FLOAT_EQ(2 * 3 / sqrtf(12.5f), y[0]);
  EXPECT_FLOAT_EQ(-4 / sqrtf(12.5f), y[1]);
  RmsNormReference(x, nullptr, y, 4, 2, 1e-6f);
  EXPECT_NEAR(y[0], 3 / sqrt(12.5 + 1e-6), 1e-7);
  EXPECT_EQ(0.0f, y[2]);
  // In place, plain gain (never 1 + gain).
  float z[2] = {1, 1};
  const float g[2] = {0.5f, 0.25f};
  RmsNormReference(z, g, z, 2, 2, 0.0f);
  EXPECT_EQ(0.5f, z[0]);
  EXPECT_EQ(0.25f, z[1]);
}

TEST(ReferenceTest, ResidualRmsNorm) {
  // Group [3, 4] (mean square 12.5), gain [2, -1], residual [1, 10], scalar
  // 0.5: y = (r + x / sqrt(12.5) * gain) * 0.5. Group [0, 0] gives r * 0.5.
  const float r[4] = {1, 10, -6, 8};
  const float x[4] = {3, 4, 0, 0};
  const float gain[2] = {2, -1};
  float y[4];
  ResidualRmsNormReference(r, x, gain, 0.5f, y, 4, 2, 0.0f);
  EXPECT_FLOAT_EQ((1 + 6 / sqrt(12.5)) * 0.5, y[0]);
  EXPECT_FLOAT_EQ((10 - 4 / sqrt(12.5)) * 0.5, y[1]);
  ResidualRmsNormReference(r, x, nullptr, 1.0f, y, 4, 2, 1e-6f);
  EXPECT_FLOAT_EQ(1 + 3 / sqrt(12.5 + 1e-6), y[0]);
  EXPECT_EQ(-6.0f, y[2]);
  EXPECT_EQ(8.0f, y[3]);
  // In place on the residual and on x.
  float rr[2] = {1, 2}, xx[2] = {3, 4};
  ResidualRmsNormReference(rr, xx, nullptr, 2.0f, rr, 2, 2, 0.0f);
  EXPECT_FLOAT_EQ((1 + 3 / sqrt(12.5)) * 2, rr[0]);
  EXPECT_FLOAT_EQ((2 + 4 / sqrt(12.5)) * 2, rr[1]);
  const float r2[2] = {1, 2};
  ResidualRmsNormReference(r2, xx, nullptr, 1.0f, xx, 2, 2, 0.0f);
  EXPECT_FLOAT_EQ(1 + 3 / sqrt(12.5), xx[0]);
  EXPECT_FLOAT_EQ(2 + 4 / sqrt(12.5), xx[1]);
}

TEST(ReferenceTest, ApplyRope) {
  // head_dim 6, 2 of 3 pairs rotated: pair i is (x[i], x[i + 3]).
  float x[6] = {1, 2, 3, 4, 5, 6};
  const float cos[2] = {0.0f, 0.6f};
  const float sin[2] = {1.0f, 0.8f};
  ApplyRopeReference(x, 1, 6, 2, cos, sin);
  EXPECT_EQ(-4.0f, x[0]);                      // 1*0 - 4*1
  EXPECT_EQ(1.0f, x[3]);                       // 4*0 + 1*1
  EXPECT_FLOAT_EQ(2 * 0.6f - 5 * 0.8f, x[1]);  // -2.8
  EXPECT_FLOAT_EQ(5 * 0.6f + 2 * 0.8f, x[4]);  // 4.6
  EXPECT_EQ(3.0f, x[2]);                       // pair 2 untouched
  EXPECT_EQ(6.0f, x[5]);
}

TEST(ReferenceTest, Attention) {
  // One head, head_dim 2, two rows with scores 0 and ln 3: weights 1/4 and 3/4.
  const float q[2] = {1.0f, 0.0f};
  const float k[4] = {0.0f, 5.0f, static_cast<float>(log(3.0)), -2.0f};
  const float v[4] = {4.0f, 8.0f, 0.0f, -4.0f};
  float out[2];
  AttentionReference(q, k, v, 2, 1, 1, 2, 1.0f, out);
  EXPECT_NEAR(out[0], 0.25 * 4.0, 1e-6);
  EXPECT_NEAR(out[1], 0.25 * 8.0 + 0.75 * -4.0, 1e-6);
  // GQA: 4 q heads over 2 kv heads, one row, head_dim 1: out_h = v[h / 2].
  const float q4[4] = {1, 2, 3, 4};
  const float k2[2] = {1, 1};
  const float v2[2] = {10, 20};
  float out4[4];
  AttentionReference(q4, k2, v2, 1, 4, 2, 1, 1.0f, out4);
  EXPECT_EQ(10.0f, out4[0]);
  EXPECT_EQ(10.0f, out4[1]);
  EXPECT_EQ(20.0f, out4[2]);
  EXPECT_EQ(20.0f, out4[3]);
}

TEST(ReferenceTest, Elementwise) {
  // gelu_pytorch_tanh values from Python: 0.5 x (1 + tanh(sqrt(2/pi)(x +
  // 0.044715 x^3))).
  const float x[5] = {1.0f, -1.0f, 2.0f, -3.0f, 0.5f};
  const double gelu[5] = {0.8411919906082768, -0.15880800939172324,
                          1.954597694087775, -0.0036373920817729943,
                          0.34571400982514394};
  float y[5];
  GeluTanhReference(x, y, 5);
  for (int i = 0; i < 5; ++i)
    EXPECT_FLOAT_EQ(static_cast<float>(gelu[i]), y[i]);
  // Far negative tail, values from 60-digit mpmath with the literal formula (in
  // double the literal formula would return 0 for both).
  const float tail[2] = {-7.0f, -10.0f};
  GeluTanhReference(tail, y, 2);
  EXPECT_FLOAT_EQ(-2.3154422620725489632e-15f, y[0]);
  EXPECT_FLOAT_EQ(-1.2040923482098059937e-37f, y[1]);
  const float big[3] = {1e4f, -1e4f, 0.0f};
  GeluTanhReference(big, y, 3);
  EXPECT_EQ(1e4f, y[0]);
  EXPECT_EQ(0.0f, y[1]);
  EXPECT_EQ(0.0f, y[2]);

  // GeluTanhMul: gelu(gate) * up, rounded once.
  const float up[5] = {2.0f, -4.0f, 0.5f, 1e3f, 0.0f};
  GeluTanhMulReference(x, up, y, 5);
  for (int i = 0; i < 5; ++i)
    EXPECT_FLOAT_EQ(static_cast<float>(gelu[i] * up[i]), y[i]);

  const float logits[3] = {30.0f, 100.0f, -1e4f};
  SoftcapReference(logits, 30.0f, y, 3);
  EXPECT_FLOAT_EQ(22.847824678672946f, y[0]);  // 30 tanh(1)
  EXPECT_FLOAT_EQ(29.92373902421512f, y[1]);   // 30 tanh(10/3)
  EXPECT_EQ(-30.0f, y[2]);

  const float a[2] = {1.5f, -2.0f}, b[2] = {4.0f, 0.25f};
  MulReference(a, b, y, 2);
  EXPECT_EQ(6.0f, y[0]);
  EXPECT_EQ(-0.5f, y[1]);
  AddReference(a, b, y, 2);
  EXPECT_EQ(5.5f, y[0]);
  EXPECT_EQ(-1.75f, y[1]);
  ScaleReference(a, -2.0f, y, 2);
  EXPECT_EQ(-3.0f, y[0]);
  EXPECT_EQ(4.0f, y[1]);
}

TEST(ReferenceTest, Gather) {
  // Table 3 x 4 = 0..11; row 2, columns [1, 3), scale 0.5 -> [4.5, 5].
  std::vector<float> t(12);
  for (int i = 0; i < 12; ++i) t[i] = static_cast<float>(i);
  float y[2];
  GatherRowF32Reference(t.data(), 4, 2, 1, 2, 0.5f, y);
  EXPECT_EQ(4.5f, y[0]);
  EXPECT_EQ(5.0f, y[1]);
  std::vector<hwy::bfloat16_t> tb(12);
  for (int i = 0; i < 12; ++i) tb[i] = F32ToBF16(t[i]);
  GatherRowBF16Reference(tb.data(), 4, 1, 0, 2, 16.0f, y);
  EXPECT_EQ(64.0f, y[0]);
  EXPECT_EQ(80.0f, y[1]);
}

TEST(ReferenceTest, BF16Conversion) {
  EXPECT_EQ(0x3F80, F32ToBF16(1.0f).bits);
  EXPECT_EQ(0xC000, F32ToBF16(-2.0f).bits);
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(0x3F80, F32ToBF16(1.0f + 1.0f / 256).bits);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (1 +
  // 2^-6).
  EXPECT_EQ(0x3F82, F32ToBF16(1.0f + 3.0f / 256).bits);
  // Just above the halfway point rounds up.
  EXPECT_EQ(0x3F81, F32ToBF16(1.0f + 1.0f / 256 + 1.0f / 65536).bits);
  EXPECT_TRUE(isnan(BF16ToF32(F32ToBF16(NAN))));
  hwy::bfloat16_t b;
  b.bits = 0x4049;  // 3.140625
  EXPECT_EQ(3.140625f, BF16ToF32(b));
}

}  // namespace
}  // namespace ops
}  // namespace cortiq
