// Tests the Q8_0x16 layout (ops/quantize_q8_0x16.h) and LinearQ8_0x16,
// MatMulQ8_0x16, GatherRowQ8_0x16, LinearRowsQ8_0x16 (ops/kernels_q8_0x16.cc):
// the regrouping against the layout's definition byte by byte, and the
// per-target kernels and the dispatched functions on every compiled Highway
// target against the double references of ops/reference.h
// (tests/ops/block_kernels_test-inl.h).

#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <utility>
#include <vector>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/quantize_q8_0x16.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/kernels_q8_0x16_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/block_kernels_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void Offsets(const void* blocks, size_t n, float* o) {
  (void)blocks;
  for (size_t i = 0; i < n; ++i) o[i] = 0.0f;  // no offset
}

BlockKernelCase Case() {
  std::vector<size_t> scales;
  for (size_t j = 0; j < kQ8_0x16Blocks; ++j) scales.push_back(2 * j);
  return {kQ8_0x16BlockWeights,
          kQ8_0x16BlockBytes,
          scales,
          &QuantizeRowQ8_0x16,
          &DequantizeRowQ8_0x16,
          &Offsets,
          &LinearQ8_0x16Reference,
          &::cortiq::ops::LinearQ8_0x16,
          &MatMulQ8_0x16Reference,
          &::cortiq::ops::MatMulQ8_0x16,
          &GatherRowQ8_0x16Reference,
          &::cortiq::ops::GatherRowQ8_0x16};
}

CORTIQ_BLOCK_KERNEL_TESTS(Q8_0x16Format)

// The regrouping puts every byte where ops/quantize_q8_0x16.h says (scale d_j
// at byte 2 j, quant byte 4 z + k of block j at 32 + 64 z + 4 j + k), the
// inverse restores the Q4_0 row, and both dequantize to the same values.
void TestLayout() {
  const size_t n = 2 * kQ8_0x16BlockWeights;
  std::vector<uint8_t> q8_0(Q8_0RowBytes(n));
  for (size_t i = 0; i < q8_0.size(); ++i) q8_0[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {  // finite scales: 1 + b/1024
    const uint16_t d = static_cast<uint16_t>(0x3C00 + b);
    memcpy(q8_0.data() + b * kQ8_0BlockBytes, &d, 2);
  }
  std::vector<uint8_t> grouped(Q8_0x16RowBytes(n));
  ASSERT_EQ(q8_0.size(), grouped.size());
  Q8_0ToQ8_0x16(q8_0.data(), n, grouped.data());
  for (size_t g = 0; g < n / kQ8_0x16BlockWeights; ++g) {
    const uint8_t* group = grouped.data() + g * kQ8_0x16BlockBytes;
    for (size_t j = 0; j < kQ8_0x16Blocks; ++j) {
      const uint8_t* block = q8_0.data() + (16 * g + j) * kQ8_0BlockBytes;
      EXPECT_EQ(block[0], group[2 * j]) << "group " << g << " block " << j;
      EXPECT_EQ(block[1], group[2 * j + 1]) << "group " << g << " block " << j;
      for (size_t v = 0; v < 8; ++v) {
        for (size_t k = 0; k < 4; ++k) {
          EXPECT_EQ(block[2 + 4 * v + k], group[32 + 64 * v + 4 * j + k])
              << "group " << g << " block " << j << " quant " << 4 * v + k;
        }
      }
    }
  }
  std::vector<uint8_t> back(q8_0.size());
  Q8_0x16ToQ8_0(grouped.data(), n, back.data());
  EXPECT_EQ(0, memcmp(back.data(), q8_0.data(), q8_0.size()));
  std::vector<float> expected(n), actual(n);
  DequantizeRowQ8_0(q8_0.data(), n, expected.data());
  DequantizeRowQ8_0x16(grouped.data(), n, actual.data());
  EXPECT_EQ(0, memcmp(expected.data(), actual.data(), n * sizeof(float)));
  // Quantizing gives Q4_0's blocks, regrouped.
  const std::vector<float> x = test::RandomFloats(n, -3.0f, 3.0f, 5);
  std::vector<uint8_t> via_q8_0(q8_0.size()), direct(q8_0.size());
  QuantizeRowQ8_0(x.data(), n, q8_0.data());
  Q8_0ToQ8_0x16(q8_0.data(), n, via_q8_0.data());
  QuantizeRowQ8_0x16(x.data(), n, direct.data());
  EXPECT_EQ(0, memcmp(via_q8_0.data(), direct.data(), direct.size()));
}

// The few-rows kernel gives every token and row the bits of LinearQ8_0x16 on
// that row (the session relies on this to keep a row's result independent of
// how many rows a batch has).
void TestLinearRows() {
  const BlockKernelCase bc = Case();
  for (size_t cols : {kQ8_0x16BlockWeights, size_t{2560}}) {
    const size_t rows = 37;
    const BlockMatrix m = MakeMatrix(bc, rows, cols, false, 60 + cols);
    for (size_t batch : {1, 2, 5}) {
      const size_t x_stride = cols + 5, y_stride = rows + 3;
      const std::vector<float> x = test::RandomFloats(batch * x_stride, -1, 1, 70 + batch);
      for (const auto& range : {std::pair<size_t, size_t>{0, rows}, {3, 21}, {36, 37}}) {
        std::vector<float> y(batch * y_stride, test::Sentinel());
        ::cortiq::ops::LinearRowsQ8_0x16(m.data(), x.data(), x_stride, y.data(), y_stride,
                                         batch, rows, cols, range.first, range.second);
        for (size_t t = 0; t < batch; ++t) {
          std::vector<float> expected(rows, test::Sentinel());
          ::cortiq::ops::LinearQ8_0x16(m.data(), x.data() + t * x_stride, expected.data(),
                                       rows, cols, range.first, range.second);
          for (size_t r = 0; r < rows; ++r) {
            const float got = y[t * y_stride + r];
            if (r < range.first || r >= range.second) {
              EXPECT_TRUE(isnan(got)) << "row " << r << " written";
            } else {
              EXPECT_EQ(0, memcmp(&expected[r], &got, sizeof(float)))
                  << "cols " << cols << " batch " << batch << " token " << t << " row " << r;
            }
          }
        }
      }
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
CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(KernelsQ8_0x16Test);
HWY_EXPORT_AND_TEST_P(KernelsQ8_0x16Test, TestLayout);
HWY_EXPORT_AND_TEST_P(KernelsQ8_0x16Test, TestLinearRows);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
