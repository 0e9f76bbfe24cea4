// Tests MatMulF32 / MatMulBF16 / MatMulQ8_0 / MatMulQ4_0 (ops/matmul_*.cc):
// the per-target kernel (ops/matmul-inl.h MatMulRows) and the dispatched
// function on every compiled Highway target, against the double references
// (ops/reference.h), exactly on integer-valued cases, and row by row against
// the matrix-vector kernels of ops/linear.h.

#include "ops/matmul.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "ops/linear.h"
#include "ops/quantize.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/matmul_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/matmul-inl.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One weight format under test: its encoded matrix, the matching weight view
// of the per-target kernel, and the public functions.
enum class Fmt { kF32, kBF16, kQ8_0, kQ4_0 };

const char* FmtName(Fmt f) {
  switch (f) {
    case Fmt::kF32:
      return "f32";
    case Fmt::kBF16:
      return "bf16";
    case Fmt::kQ8_0:
      return "q8_0";
    case Fmt::kQ4_0:
      return "q4_0";
  }
  return "?";
}

bool IsBlockFormat(Fmt f) { return f == Fmt::kQ8_0 || f == Fmt::kQ4_0; }

// A [rows, cols] weight matrix in format f plus its exact f32 decoding.
struct TestWeights {
  Fmt fmt;
  size_t rows, cols;
  std::vector<uint8_t> bytes;  // the encoded matrix (+1 byte for offsetting)
  size_t offset;               // bytes.data() + offset is the matrix
  std::vector<float> f32;      // decoded, [rows, cols]
  const void* data() const { return bytes.data() + offset; }
};

// Random weights: f32 / bf16 uniform in [-1, 1); quantized from uniform values
// with a random magnitude 2^-6..2^2 per block (so scales vary). If `integer`,
// small integers instead (f32 / bf16 in [-8, 8]; quantized blocks with d = 1
// and random quants), so every product and partial sum of small-integer
// activations is exact. `misalign` shifts the matrix by one element (f32 /
// bf16) or byte (quantized).
TestWeights MakeWeights(Fmt fmt, size_t rows, size_t cols, uint32_t seed,
                        bool integer, bool misalign) {
  TestWeights tw{fmt, rows, cols, {}, 0, {}};
  std::mt19937 rng(seed);
  std::vector<float> values = test::RandomFloats(rows * cols, -1, 1, seed);
  if (integer) {
    std::uniform_int_distribution<int> small(-8, 8);
    for (float& v : values) v = static_cast<float>(small(rng));
  }
  switch (fmt) {
    case Fmt::kF32: {
      tw.offset = misalign ? sizeof(float) : 0;
      tw.bytes.resize(tw.offset + values.size() * sizeof(float));
      memcpy(tw.bytes.data() + tw.offset, values.data(),
             values.size() * sizeof(float));
      tw.f32 = values;
      break;
    }
    case Fmt::kBF16: {
      const std::vector<hwy::bfloat16_t> b = test::ToBF16(values);
      tw.offset = misalign ? sizeof(hwy::bfloat16_t) : 0;
      tw.bytes.resize(tw.offset + b.size() * sizeof(hwy::bfloat16_t));
      memcpy(tw.bytes.data() + tw.offset, b.data(),
             b.size() * sizeof(hwy::bfloat16_t));
      tw.f32 = test::ToF32(b);
      break;
    }
    case Fmt::kQ8_0:
    case Fmt::kQ4_0: {
      const bool q8 = fmt == Fmt::kQ8_0;
      const size_t block_bytes = q8 ? kQ8_0BlockBytes : kQ4_0BlockBytes;
      const size_t num_blocks = rows * cols / kQuantBlockSize;
      tw.offset = misalign ? 1 : 0;
      tw.bytes.resize(tw.offset + num_blocks * block_bytes);
      uint8_t* w = tw.bytes.data() + tw.offset;
      if (integer) {
        std::uniform_int_distribution<int> byte(0, 255);
        const uint16_t one = 0x3C00;  // f16 1.0
        for (size_t b = 0; b < num_blocks; ++b) {
          uint8_t* block = w + b * block_bytes;
          memcpy(block, &one, sizeof(one));
          for (size_t i = 2; i < block_bytes; ++i) {
            // Q8_0 quants in [-16, 15] keep the exact sums small.
            const int v = byte(rng);
            block[i] = static_cast<uint8_t>(q8 ? (v % 32) - 16 : v);
          }
        }
      } else {
        std::uniform_int_distribution<int> exponent(-6, 2);
        for (size_t b = 0; b < num_blocks; ++b) {
          const float s = ldexpf(1.0f, exponent(rng));
          for (size_t j = 0; j < kQuantBlockSize; ++j) {
            values[b * kQuantBlockSize + j] *= s;
          }
        }
        if (q8) {
          QuantizeRowQ8_0(values.data(), values.size(), w);
        } else {
          QuantizeRowQ4_0(values.data(), values.size(), w);
        }
      }
      tw.f32.resize(rows * cols);
      if (q8) {
        DequantizeRowQ8_0(w, rows * cols, tw.f32.data());
      } else {
        DequantizeRowQ4_0(w, rows * cols, tw.f32.data());
      }
      break;
    }
  }
  return tw;
}

// The per-target kernel (variant 0), the dispatched function (1), the double
// reference (2) and the matrix-vector kernel of ops/linear.h on one token row
// (3, batch = 1 with x and y of that row).
void Run(const TestWeights& tw, int variant, const float* x, size_t x_stride,
         float* y, size_t y_stride, size_t batch, size_t rb, size_t re) {
  const size_t rows = tw.rows, cols = tw.cols;
  const float* wf = static_cast<const float*>(tw.data());
  const hwy::bfloat16_t* wb = static_cast<const hwy::bfloat16_t*>(tw.data());
  const uint8_t* wq = static_cast<const uint8_t*>(tw.data());
  switch (tw.fmt) {
    case Fmt::kF32:
      if (variant == 0) {
        MatMulRows(F32Weights{wf, cols}, x, x_stride, y, y_stride, batch, rows,
                   cols, rb, re);
      } else if (variant == 1) {
        ::cortiq::ops::MatMulF32(wf, x, x_stride, y, y_stride, batch, rows,
                                 cols, rb, re);
      } else if (variant == 2) {
        MatMulF32Reference(wf, x, x_stride, y, y_stride, batch, rows, cols, rb,
                           re);
      } else {
        ::cortiq::ops::LinearF32(wf, x, y, rows, cols, rb, re);
      }
      break;
    case Fmt::kBF16:
      if (variant == 0) {
        MatMulRows(BF16Weights{wb, cols}, x, x_stride, y, y_stride, batch, rows,
                   cols, rb, re);
      } else if (variant == 1) {
        ::cortiq::ops::MatMulBF16(wb, x, x_stride, y, y_stride, batch, rows,
                                  cols, rb, re);
      } else if (variant == 2) {
        MatMulBF16Reference(wb, x, x_stride, y, y_stride, batch, rows, cols, rb,
                            re);
      } else {
        ::cortiq::ops::LinearBF16(wb, x, y, rows, cols, rb, re);
      }
      break;
    case Fmt::kQ8_0:
      if (variant == 0) {
        MatMulRows(QuantWeights<Q8_0Format>{wq, Q8_0RowBytes(cols)}, x,
                   x_stride, y, y_stride, batch, rows, cols, rb, re);
      } else if (variant == 1) {
        ::cortiq::ops::MatMulQ8_0(wq, x, x_stride, y, y_stride, batch, rows,
                                  cols, rb, re);
      } else if (variant == 2) {
        MatMulQ8_0Reference(wq, x, x_stride, y, y_stride, batch, rows, cols, rb,
                            re);
      } else {
        ::cortiq::ops::LinearQ8_0(wq, x, y, rows, cols, rb, re);
      }
      break;
    case Fmt::kQ4_0:
      if (variant == 0) {
        MatMulRows(QuantWeights<Q4_0Format>{wq, Q4_0RowBytes(cols)}, x,
                   x_stride, y, y_stride, batch, rows, cols, rb, re);
      } else if (variant == 1) {
        ::cortiq::ops::MatMulQ4_0(wq, x, x_stride, y, y_stride, batch, rows,
                                  cols, rb, re);
      } else if (variant == 2) {
        MatMulQ4_0Reference(wq, x, x_stride, y, y_stride, batch, rows, cols, rb,
                            re);
      } else {
        ::cortiq::ops::LinearQ4_0(wq, x, y, rows, cols, rb, re);
      }
      break;
  }
}

// Error bound of one MatMul output (ops/matmul.h): k ~ ceil(min(cols, kc) / N)
// + 1 (tail) + log2 N (lane reduction) + ceil(cols / kc) (chunk sums) + 2 (the
// reference's rounding, slack). Returns gamma_k * abs_sum.
double MatMulErrorBound(size_t cols, size_t lanes, double abs_sum) {
  const size_t kc = kMatMulColChunk;
  double k = static_cast<double>((HWY_MIN(cols, kc) + lanes - 1) / lanes) +
             static_cast<double>((cols + kc - 1) / kc) + 3.0;
  for (size_t l = lanes; l > 1; l /= 2) k += 1.0;
  return k * test::kU / (1.0 - k * test::kU) * abs_sum;
}

// Error bound of the Linear kernels (ops/linear.h): f32 / bf16 DotRows4
// (test::SumErrorBound with 2 chains of N lanes); Q8_0 / Q4_0 per-block
// chains of 32 / Nq FMAs, cols / 32 block sums, log2 Nq (Nq <= 16 lanes).
double LinearErrorBound(Fmt fmt, size_t cols, size_t lanes, double abs_sum) {
  if (!IsBlockFormat(fmt)) return test::SumErrorBound(cols, lanes, 2, abs_sum);
  const size_t ql = HWY_MIN(lanes, size_t{16});
  double k = static_cast<double>(cols / kQuantBlockSize) +
             static_cast<double>(kQuantBlockSize / ql) + 4.0;
  for (size_t l = ql; l > 1; l /= 2) k += 1.0;
  return k * test::kU / (1.0 - k * test::kU) * abs_sum;
}

// Runs variants 0 and 1 on tokens [0, batch) and rows [rb, re) with strides
// x_stride >= cols, y_stride >= rows, and checks:
// (a) every output against the double reference within MatMulErrorBound
//     (exactly if `exact`);
// (b) every other element of y (rows outside the range, the padding between
//     rows, the rows past the batch) still holds the NaN sentinel;
// (c) every output against the Linear kernel on that token row within the sum
//     of both bounds (exactly if `exact`).
void CheckMatMul(const TestWeights& tw, const std::vector<float>& x,
                 size_t x_stride, size_t batch, size_t y_stride, size_t rb,
                 size_t re, bool exact) {
  const hn::ScalableTag<float> df;
  const size_t lanes = hn::Lanes(df);
  const size_t rows = tw.rows, cols = tw.cols;
  const size_t y_size = (batch + 2) * y_stride;  // 2 rows past the batch
  std::vector<float> expected(y_size, test::Sentinel());
  Run(tw, 2, x.data(), x_stride, expected.data(), y_stride, batch, rb, re);
  std::vector<float> linear(y_size, test::Sentinel());
  for (size_t t = 0; t < batch; ++t) {
    Run(tw, 3, x.data() + t * x_stride, x_stride, linear.data() + t * y_stride,
        y_stride, 1, rb, re);
  }
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<float> y(y_size, test::Sentinel());
    Run(tw, variant, x.data(), x_stride, y.data(), y_stride, batch, rb, re);
    size_t failures = 0;
    for (size_t t = 0; t < batch + 2 && failures < 10; ++t) {
      for (size_t r = 0; r < y_stride && failures < 10; ++r) {
        const float v = y[t * y_stride + r];
        const auto where = [&] {
          return ::testing::Message()
                 << FmtName(tw.fmt) << " token " << t << " row " << r
                 << " batch " << batch << " rows " << rows << " cols " << cols
                 << " range [" << rb << ", " << re << ") strides " << x_stride
                 << "/" << y_stride << " variant "
                 << (variant == 0 ? "per-target" : "dispatched");
        };
        if (t >= batch || r < rb || r >= re) {
          if (!isnan(v)) {
            ADD_FAILURE() << "written outside the output: " << where();
            ++failures;
          }
          continue;
        }
        double abs_sum = 0.0;
        for (size_t c = 0; c < cols; ++c) {
          abs_sum += fabs(static_cast<double>(tw.f32[r * cols + c]) *
                          x[t * x_stride + c]);
        }
        const double tol = exact ? 0.0 : MatMulErrorBound(cols, lanes, abs_sum);
        const double tol_linear =
            exact ? 0.0 : tol + LinearErrorBound(tw.fmt, cols, lanes, abs_sum);
        const float ref = expected[t * y_stride + r];
        const float lin = linear[t * y_stride + r];
        if (!(fabs(v - ref) <= tol)) {
          ADD_FAILURE() << "vs reference: " << v << " expected " << ref
                        << " tol " << tol << " " << where();
          ++failures;
        }
        if (!(fabs(v - lin) <= tol_linear)) {
          ADD_FAILURE() << "vs Linear: " << v << " linear " << lin << " tol "
                        << tol_linear << " " << where();
          ++failures;
        }
      }
    }
  }
}

// x: batch rows of `cols` values in [-1, 1) (small integers in [-6, 6] if
// integer), x_stride apart; the padding between rows is NaN (must not be
// read). If `misalign`, the data starts one float into the vector.
std::vector<float> MakeActivations(size_t batch, size_t cols, size_t x_stride,
                                   uint32_t seed, bool integer) {
  std::vector<float> x(batch * x_stride, test::Sentinel());
  const std::vector<float> v = test::RandomFloats(batch * cols, -1, 1, seed);
  for (size_t t = 0; t < batch; ++t) {
    for (size_t c = 0; c < cols; ++c) {
      const float f = v[t * cols + c];
      x[t * x_stride + c] =
          integer ? static_cast<float>(static_cast<int>(f * 6.5f)) : f;
    }
  }
  return x;
}

// Batch sizes: 1, around and past the 6- (3-) token tile, past a tile row.
constexpr size_t kBatches[] = {1, 2, 3, 5, 8, 17, 64};

void TestFormat(Fmt fmt) {
  // Column counts: f32 / bf16 any (1, below / above one vector, 130 and 257
  // with tails, 1100 = two 512-column chunks + a 76-column tail); block
  // formats multiples of 32 (one, three and nine blocks, 1088 = two chunks +
  // two blocks).
  const std::vector<size_t> cols_list =
      IsBlockFormat(fmt) ? std::vector<size_t>{32, 96, 288, 1088}
                         : std::vector<size_t>{1, 7, 33, 130, 257, 1100};
  // Row counts: below one 4-row tile, odd, past one 32-row block.
  const size_t kRows[] = {3, 13, 37};
  uint32_t seed = 1;
  for (size_t cols : cols_list) {
    for (size_t rows : kRows) {
      const bool misalign = (seed % 3) == 0;
      const TestWeights tw =
          MakeWeights(fmt, rows, cols, seed++, false, misalign);
      for (size_t batch : kBatches) {
        // Strides larger than cols / rows (an odd number of extra floats).
        const size_t x_stride = cols + 3;
        const size_t y_stride = rows + 5;
        const std::vector<float> x =
            MakeActivations(batch, cols, x_stride, seed++, false);
        const size_t ranges[][2] = {{0, rows}, {1, rows - 1}, {2, 2}};
        for (const auto& range : ranges) {
          CheckMatMul(tw, x, x_stride, batch, y_stride, range[0], range[1],
                      false);
        }
      }
    }
  }
}

// Small integers: every summation order is exact, so the kernel, the
// reference and the Linear kernel agree bit for bit. Catches a dropped,
// doubled or misplaced weight or activation independently of any tolerance.
void TestFormatExact(Fmt fmt) {
  const std::vector<size_t> cols_list =
      IsBlockFormat(fmt) ? std::vector<size_t>{32, 288, 1088}
                         : std::vector<size_t>{1, 33, 257, 1100};
  uint32_t seed = 1000;
  for (size_t cols : cols_list) {
    const size_t rows = 37;
    const TestWeights tw = MakeWeights(fmt, rows, cols, seed++, true, true);
    for (size_t batch : {size_t{1}, size_t{7}, size_t{17}}) {
      const size_t x_stride = cols + 1;
      const std::vector<float> x =
          MakeActivations(batch, cols, x_stride, seed++, true);
      CheckMatMul(tw, x, x_stride, batch, rows, 0, rows, true);
      CheckMatMul(tw, x, x_stride, batch, rows + 2, 5, 31, true);
    }
  }
}

// More tokens than one token block (kMatMulTokenBlock), so the weights are
// decoded twice, with a column count of several chunks.
void TestLargeBatch(Fmt fmt) {
  const size_t batch = kMatMulTokenBlock + 7;
  const size_t rows = 9;
  const size_t cols = IsBlockFormat(fmt) ? 1056 : 1031;
  const TestWeights tw = MakeWeights(fmt, rows, cols, 77, false, false);
  const std::vector<float> x = MakeActivations(batch, cols, cols, 78, false);
  CheckMatMul(tw, x, cols, batch, rows, 0, rows, false);
  CheckMatMul(tw, x, cols, batch, rows + 1, 3, 8, false);
}

void TestF32() { TestFormat(Fmt::kF32); }
void TestBF16() { TestFormat(Fmt::kBF16); }
void TestQ8_0() { TestFormat(Fmt::kQ8_0); }
void TestQ4_0() { TestFormat(Fmt::kQ4_0); }
void TestExact() {
  for (Fmt fmt : {Fmt::kF32, Fmt::kBF16, Fmt::kQ8_0, Fmt::kQ4_0}) {
    TestFormatExact(fmt);
  }
}
void TestLargeBatches() {
  for (Fmt fmt : {Fmt::kF32, Fmt::kBF16, Fmt::kQ8_0, Fmt::kQ4_0}) {
    TestLargeBatch(fmt);
  }
}

// bf16 and the quantized formats decode exactly to f32, so each equals
// MatMulF32 on its decoded matrix bit for bit (same summation order).
void TestMatchesF32OnDecoded() {
  for (Fmt fmt : {Fmt::kBF16, Fmt::kQ8_0, Fmt::kQ4_0}) {
    const size_t rows = 21, cols = 1088, batch = 11;
    const TestWeights tw = MakeWeights(fmt, rows, cols, 90, false, true);
    const std::vector<float> x = MakeActivations(batch, cols, cols, 91, false);
    std::vector<float> y(batch * rows), yf(batch * rows);
    Run(tw, 0, x.data(), cols, y.data(), rows, batch, 0, rows);
    MatMulRows(F32Weights{tw.f32.data(), cols}, x.data(), cols, yf.data(), rows,
               batch, rows, cols, 0, rows);
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_EQ(yf[i], y[i]) << FmtName(fmt) << " element " << i;
    }
  }
}

// Splitting the rows between threads (the session splits at multiples of 16) does not change
// any output: each row computed in a range of its own equals the whole-range result bit for bit.
void TestRowRangesAreBitIdentical() {
  for (Fmt fmt : {Fmt::kF32, Fmt::kBF16, Fmt::kQ8_0, Fmt::kQ4_0}) {
    const size_t rows = 75, cols = 1088, batch = 13;
    const TestWeights tw = MakeWeights(fmt, rows, cols, 95, false, false);
    const std::vector<float> x = MakeActivations(batch, cols, cols, 96, false);
    std::vector<float> whole(batch * rows), split(batch * rows);
    Run(tw, 0, x.data(), cols, whole.data(), rows, batch, 0, rows);
    for (size_t begin : {size_t{0}, size_t{16}, size_t{32}, size_t{48}, size_t{64}}) {
      Run(tw, 0, x.data(), cols, split.data(), rows, batch, begin, std::min(rows, begin + 16));
    }
    for (size_t i = 0; i < whole.size(); ++i) {
      ASSERT_EQ(whole[i], split[i]) << FmtName(fmt) << " element " << i;
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
HWY_BEFORE_TEST(MatMulTest);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestF32);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestBF16);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestQ8_0);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestQ4_0);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestExact);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestLargeBatches);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestMatchesF32OnDecoded);
HWY_EXPORT_AND_TEST_P(MatMulTest, TestRowRangesAreBitIdentical);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
