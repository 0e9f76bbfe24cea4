// MatMulQ8_0Q8Activations / MatMulQ4_0Q8Activations (ops/matmul_q8_activations.h) against the
// scalar reference of their formula, bit for bit, on the AMX and VNNI paths (where the CPU has
// them) and on the portable one: shapes around the 16-row groups, 64-row blocks, 6- and 16-token
// tiles, 512-column chunks and 256-token blocks, row ranges that start and end inside a group,
// strided x and y.
// And how far the result is from the exact product (the quantization error the option trades).
#include "ops/matmul_q8_activations.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/quantize.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q8_0x16.h"
#include "ops/reference.h"

namespace cortiq {
namespace ops {
namespace {

struct Shape {
  size_t batch, rows, cols, row_begin, row_end;
};

std::vector<float> Random(size_t n, std::mt19937* rng, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(*rng);
  return v;
}

void CheckShape(bool q4_0, const Shape& s, Q8ActivationsPath limit) {
  LimitQ8ActivationsPathForTest(limit);
  const Q8ActivationsPath path = DispatchedQ8ActivationsPath();
  SCOPED_TRACE(testing::Message() << (q4_0 ? "Q4_0" : "Q8_0") << " batch " << s.batch
                                  << " rows " << s.rows << " cols " << s.cols << " range ["
                                  << s.row_begin << ", " << s.row_end << ")"
                                  << " path " << static_cast<int>(path));
  std::mt19937 rng(static_cast<uint32_t>(s.batch * 7919 + s.rows * 31 + s.cols + q4_0));
  const std::vector<float> weights = Random(s.rows * s.cols, &rng, 0.05f);
  const size_t row_bytes = q4_0 ? Q4_0RowBytes(s.cols) : Q8_0RowBytes(s.cols);
  std::vector<uint8_t> w(s.rows * row_bytes);
  for (size_t r = 0; r < s.rows; ++r) {
    if (q4_0) {
      QuantizeRowQ4_0(weights.data() + r * s.cols, s.cols, w.data() + r * row_bytes);
    } else {
      QuantizeRowQ8_0(weights.data() + r * s.cols, s.cols, w.data() + r * row_bytes);
    }
  }
  const size_t x_stride = s.cols + 3, y_stride = s.rows + 5;
  std::vector<float> x = Random(s.batch * x_stride, &rng, 1.0f);
  // Outliers and an all-zero block, as real activations have.
  x[0] = 40.0f;
  if (s.cols >= 64) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
  std::vector<float> y(s.batch * y_stride, -7.0f), expected = y;
  (q4_0 ? MatMulQ4_0Q8Activations : MatMulQ8_0Q8Activations)(
      w.data(), x.data(), x_stride, y.data(), y_stride, s.batch, s.rows, s.cols, s.row_begin,
      s.row_end);
  LimitQ8ActivationsPathForTest(Q8ActivationsPath::kAmx);
  MatMulQ8ActivationsReference(q4_0, w.data(), x.data(), x_stride, expected.data(), y_stride,
                               s.batch, s.rows, s.cols, s.row_begin, s.row_end);
  size_t mismatches = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (memcmp(&y[i], &expected[i], sizeof(float)) != 0 && ++mismatches <= 5) {
      ADD_FAILURE() << "token " << i / y_stride << " row " << i % y_stride << ": " << y[i]
                    << " != " << expected[i];
    }
  }
  EXPECT_EQ(mismatches, 0u);
  // The regrouped layouts (rows of whole 512-weight groups) give the same bits as the rows they
  // were made from.
  if (s.cols % kQ4_0x16BlockWeights == 0) {
    const size_t x16_bytes = q4_0 ? Q4_0x16RowBytes(s.cols) : Q8_0x16RowBytes(s.cols);
    ASSERT_EQ(x16_bytes, row_bytes);
    std::vector<uint8_t> w16(w.size());
    for (size_t r = 0; r < s.rows; ++r) {
      if (q4_0) {
        Q4_0ToQ4_0x16(w.data() + r * row_bytes, s.cols, w16.data() + r * row_bytes);
      } else {
        Q8_0ToQ8_0x16(w.data() + r * row_bytes, s.cols, w16.data() + r * row_bytes);
      }
    }
    LimitQ8ActivationsPathForTest(limit);
    std::vector<float> y16(s.batch * y_stride, -7.0f);
    (q4_0 ? MatMulQ4_0x16Q8Activations : MatMulQ8_0x16Q8Activations)(
        w16.data(), x.data(), x_stride, y16.data(), y_stride, s.batch, s.rows, s.cols,
        s.row_begin, s.row_end);
    LimitQ8ActivationsPathForTest(Q8ActivationsPath::kAmx);
    EXPECT_EQ(0, memcmp(y16.data(), y.data(), y.size() * sizeof(float))) << "x16 layout";
  }
}

TEST(MatMulQ8ActivationsTest, MatchesTheReferenceBitForBit) {
  const Shape shapes[] = {
      {1, 1, 32, 0, 1},         {1, 16, 32, 0, 16},       {7, 17, 64, 0, 17},
      {6, 64, 512, 0, 64},      {13, 70, 544, 3, 69},     {5, 130, 1056, 16, 129},
      {300, 40, 96, 0, 40},     {2, 33, 2048, 1, 32},     {12, 256, 640, 100, 230},
      {40, 48, 1024, 0, 48},    {17, 16, 96, 0, 16},      {33, 80, 160, 5, 75},
      {9, 21, 1536, 2, 20},
  };
  for (const bool q4_0 : {false, true}) {
    for (const Shape& s : shapes) {
      for (const Q8ActivationsPath limit :
           {Q8ActivationsPath::kAmx, Q8ActivationsPath::kVnni, Q8ActivationsPath::kPortable}) {
        CheckShape(q4_0, s, limit);
      }
    }
  }
}

TEST(MatMulQ8ActivationsTest, QuantizerMatchesTheFormula) {
  std::mt19937 rng(5);
  std::vector<float> x = Random(256, &rng, 3.0f);
  x[5] = 0.5f * 127.0f / 127.0f;  // exact ties appear below through the scale
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);
  std::vector<int8_t> q(256);
  std::vector<float> d(8);
  std::vector<int32_t> sum(8);
  for (const Q8ActivationsPath limit : {Q8ActivationsPath::kAmx, Q8ActivationsPath::kPortable}) {
    LimitQ8ActivationsPathForTest(limit);
    QuantizeActivationsQ8_0(x.data(), x.size(), q.data(), d.data(), sum.data());
    LimitQ8ActivationsPathForTest(Q8ActivationsPath::kAmx);
    for (size_t b = 0; b < 8; ++b) {
      float amax = 0.0f;
      for (size_t j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(x[b * 32 + j]));
      EXPECT_EQ(d[b], amax / 127.0f) << b;
      int32_t s = 0;
      for (size_t j = 0; j < 32; ++j) {
        const float scaled = amax == 0.0f ? 0.0f : x[b * 32 + j] * (127.0f / amax);
        EXPECT_EQ(q[b * 32 + j], static_cast<int8_t>(nearbyintf(scaled))) << b << " " << j;
        EXPECT_LE(abs(q[b * 32 + j]), 127);
        s += q[b * 32 + j];
      }
      EXPECT_EQ(sum[b], s) << b;
    }
  }
}

// The price of the option: against the exact product of the same weights (float64), the error
// is a small fraction of the outputs' scale. (The end-to-end deviation on the logits is measured
// in tests/e2e and bench/README.md.)
TEST(MatMulQ8ActivationsTest, StaysCloseToTheExactProduct) {
  std::mt19937 rng(11);
  const size_t batch = 8, rows = 64, cols = 1024;
  const std::vector<float> weights = Random(rows * cols, &rng, 0.05f);
  std::vector<uint8_t> w(rows * Q8_0RowBytes(cols));
  for (size_t r = 0; r < rows; ++r) {
    QuantizeRowQ8_0(weights.data() + r * cols, cols, w.data() + r * Q8_0RowBytes(cols));
  }
  std::vector<float> dequantized(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    DequantizeRowQ8_0(w.data() + r * Q8_0RowBytes(cols), cols, dequantized.data() + r * cols);
  }
  const std::vector<float> x = Random(batch * cols, &rng, 1.0f);
  std::vector<float> y(batch * rows);
  MatMulQ8_0Q8Activations(w.data(), x.data(), cols, y.data(), rows, batch, rows, cols, 0, rows);
  double err2 = 0, ref2 = 0;
  for (size_t t = 0; t < batch; ++t) {
    for (size_t r = 0; r < rows; ++r) {
      double exact = 0;
      for (size_t c = 0; c < cols; ++c) {
        exact += static_cast<double>(dequantized[r * cols + c]) * x[t * cols + c];
      }
      err2 += (y[t * rows + r] - exact) * (y[t * rows + r] - exact);
      ref2 += exact * exact;
    }
  }
  // Each activation moves by at most d / 2 = amax / 254 (about 1% of a Gaussian block's
  // largest value, ~0.4% of its typical one): a relative RMS error of a few parts per thousand.
  EXPECT_LT(sqrt(err2 / ref2), 0.01);
  EXPECT_GT(sqrt(err2 / ref2), 1e-4);  // it is not the exact path
}

}  // namespace
}  // namespace ops
}  // namespace cortiq
