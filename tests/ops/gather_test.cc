// Tests GatherRowF32 / GatherRowBF16 / GatherRowQ8_0 / GatherRowQ4_0
// (ops/gather.cc): the per-target kernels and the dispatched functions on every
// compiled Highway target, against the references.

#include "ops/gather.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "ops/quantize.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/gather_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/gather-inl.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// One f32 multiply per element, like the reference (a double product of two
// floats rounded to f32 is the correctly rounded product): results must match
// bit for bit, and y[count] must stay unwritten. Covers embedding-style full
// rows and PLE-style slices with tails.
template <typename T, class Kernel, class Dispatched, class Reference>
void CheckGather(const std::vector<T>& table, size_t cols, const Kernel& kernel,
                 const Dispatched& dispatched, const Reference& reference) {
  const size_t num_rows = table.size() / cols;
  const size_t kBegins[] = {0, 1, 5, 16, 33};
  const size_t kCounts[] = {0, 1, 7, 16, 17, 64, 256};
  for (size_t row : {size_t{0}, size_t{1}, num_rows - 1}) {
    for (size_t begin : kBegins) {
      for (size_t count : kCounts) {
        if (begin + count > cols) continue;
        for (float scale : {1.0f, 16.0f, 39.25f, 0.7071067811865476f}) {
          std::vector<float> expected(count + 1, test::Sentinel());
          std::vector<float> y(count + 1, test::Sentinel());
          std::vector<float> yd(count + 1, test::Sentinel());
          reference(table.data(), cols, row, begin, count, scale,
                    expected.data());
          kernel(table.data(), cols, row, begin, count, scale, y.data());
          dispatched(table.data(), cols, row, begin, count, scale, yd.data());
          EXPECT_EQ(
              0, memcmp(y.data(), expected.data(), (count + 1) * sizeof(float)))
              << "row " << row << " begin " << begin << " count " << count;
          EXPECT_EQ(0, memcmp(yd.data(), expected.data(),
                              (count + 1) * sizeof(float)))
              << "dispatched, row " << row << " begin " << begin << " count "
              << count;
        }
      }
    }
  }
}

void TestGatherRowF32() {
  for (size_t cols : {size_t{1}, size_t{40}, size_t{300}}) {
    const std::vector<float> table =
        test::RandomFloats(7 * cols, -4.0f, 4.0f, 11 + cols);
    CheckGather(table, cols, &GatherRowF32, &::cortiq::ops::GatherRowF32,
                &GatherRowF32Reference);
  }
}

void TestGatherRowBF16() {
  for (size_t cols : {size_t{1}, size_t{40}, size_t{300}}) {
    const std::vector<hwy::bfloat16_t> table =
        test::ToBF16(test::RandomFloats(7 * cols, -4.0f, 4.0f, 21 + cols));
    CheckGather(table, cols, &GatherRowBF16, &::cortiq::ops::GatherRowBF16,
                &GatherRowBF16Reference);
  }
  // Scale 1 is an exact widening copy: row 2, columns [3, 3 + 20) of a 7 x 40
  // table.
  const std::vector<float> values = test::RandomFloats(7 * 40, -4.0f, 4.0f, 5);
  const std::vector<hwy::bfloat16_t> table = test::ToBF16(values);
  const std::vector<float> widened = test::ToF32(table);
  std::vector<float> y(20);
  GatherRowBF16(table.data(), 40, 2, 3, 20, 1.0f, y.data());
  EXPECT_EQ(0, memcmp(y.data(), &widened[2 * 40 + 3], 20 * sizeof(float)));
}

// Quantized tables: each entry d * q is exact in f32 and the kernel multiplies
// it by scale once, so results equal the reference bit for bit. Column ranges
// start and end inside blocks, on block boundaries, span one to many blocks,
// and cover whole rows; y[count] must stay unwritten.
template <class Kernel, class Dispatched, class Reference>
void CheckGatherQuant(const std::vector<uint8_t>& table, size_t num_rows,
                      size_t cols, const Kernel& kernel,
                      const Dispatched& dispatched,
                      const Reference& reference) {
  const size_t kBegins[] = {0, 1, 5, 16, 31, 32, 33, 100, 256};
  const size_t kCounts[] = {0, 1, 7, 16, 17, 31, 32, 33, 64, 95, 256};
  for (size_t row : {size_t{0}, size_t{1}, num_rows - 1}) {
    for (size_t begin : kBegins) {
      for (size_t count : kCounts) {
        if (begin + count > cols) continue;
        for (float scale : {1.0f, 16.0f, 0.7071067811865476f}) {
          std::vector<float> expected(count + 1, test::Sentinel());
          std::vector<float> y(count + 1, test::Sentinel());
          std::vector<float> yd(count + 1, test::Sentinel());
          reference(table.data(), cols, row, begin, count, scale,
                    expected.data());
          kernel(table.data(), cols, row, begin, count, scale, y.data());
          dispatched(table.data(), cols, row, begin, count, scale, yd.data());
          EXPECT_EQ(
              0, memcmp(y.data(), expected.data(), (count + 1) * sizeof(float)))
              << "row " << row << " begin " << begin << " count " << count;
          EXPECT_EQ(0, memcmp(yd.data(), expected.data(),
                              (count + 1) * sizeof(float)))
              << "dispatched, row " << row << " begin " << begin << " count "
              << count;
        }
      }
    }
  }
  // A whole row with scale 1 is the dequantized row.
  std::vector<float> row_f32(cols), y(cols);
  const size_t block_bytes = table.size() / (num_rows * cols / 32);
  kernel(table.data(), cols, 2, 0, cols, 1.0f, y.data());
  if (block_bytes == kQ8_0BlockBytes) {
    DequantizeRowQ8_0(&table[2 * Q8_0RowBytes(cols)], cols, row_f32.data());
  } else {
    DequantizeRowQ4_0(&table[2 * Q4_0RowBytes(cols)], cols, row_f32.data());
  }
  EXPECT_EQ(0, memcmp(y.data(), row_f32.data(), cols * sizeof(float)));
}

// Random table of `num_rows` rows of `cols` weights in [-4, 4), quantized.
std::vector<uint8_t> QuantTable(size_t num_rows, size_t cols, bool q8,
                                uint32_t seed) {
  const std::vector<float> values =
      test::RandomFloats(num_rows * cols, -4.0f, 4.0f, seed);
  std::vector<uint8_t> table(num_rows *
                             (q8 ? Q8_0RowBytes(cols) : Q4_0RowBytes(cols)));
  if (q8) {
    QuantizeRowQ8_0(values.data(), values.size(), table.data());
  } else {
    QuantizeRowQ4_0(values.data(), values.size(), table.data());
  }
  return table;
}

void TestGatherRowQ8_0() {
  for (size_t cols : {size_t{32}, size_t{96}, size_t{512}}) {
    CheckGatherQuant(QuantTable(7, cols, true, 31 + cols), 7, cols,
                     &GatherRowQ8_0, &::cortiq::ops::GatherRowQ8_0,
                     &GatherRowQ8_0Reference);
  }
}

void TestGatherRowQ4_0() {
  for (size_t cols : {size_t{32}, size_t{96}, size_t{512}}) {
    CheckGatherQuant(QuantTable(7, cols, false, 41 + cols), 7, cols,
                     &GatherRowQ4_0, &::cortiq::ops::GatherRowQ4_0,
                     &GatherRowQ4_0Reference);
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
HWY_BEFORE_TEST(GatherTest);
HWY_EXPORT_AND_TEST_P(GatherTest, TestGatherRowF32);
HWY_EXPORT_AND_TEST_P(GatherTest, TestGatherRowBF16);
HWY_EXPORT_AND_TEST_P(GatherTest, TestGatherRowQ8_0);
HWY_EXPORT_AND_TEST_P(GatherTest, TestGatherRowQ4_0);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
