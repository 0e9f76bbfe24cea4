// Per-target checks of one block format's Linear, MatMul and GatherRow
// kernels (ops/block_kernels-inl.h: the per-target templates, and the
// dispatched public functions), shared by the tests/ops/kernels_<format>_test.cc
// files. A test file describes its format with a BlockKernelCase (quantizer,
// dequantizer, offsets, references, dispatched kernels) and calls the Test*
// functions below with its format tag.
//
// Against the double references (ops/reference.h, which dequantize with the
// format's DequantizeRow*, itself checked bit for bit against llama.cpp by
// llama_quantize_blocks_test): within a stated error bound on random blocks,
// bit for bit where every operation is exact; the matrix-matrix kernel bit for
// bit against the f32 one on the dequantized matrix; row gathers bit for bit.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_TESTS_OPS_BLOCK_KERNELS_TEST_INL_H_) == \
    defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_TESTS_OPS_BLOCK_KERNELS_TEST_INL_H_
#undef CORTIQ_TESTS_OPS_BLOCK_KERNELS_TEST_INL_H_
#else
#define CORTIQ_TESTS_OPS_BLOCK_KERNELS_TEST_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/highway.h"
#include "ops/block_kernels-inl.h"
#include "ops/quantize.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using BlockLinearFn = void (*)(const void*, const float*, float*, size_t,
                               size_t, size_t, size_t);
using BlockMatMulFn = void (*)(const void*, const float*, size_t, float*,
                               size_t, size_t, size_t, size_t, size_t, size_t);
using BlockGatherFn = void (*)(const void*, size_t, size_t, size_t, size_t,
                               float, float*);

// One block format under test.
struct BlockKernelCase {
  size_t block_weights;  // 32 or 256
  size_t block_bytes;
  // Byte offsets of the block's f16 scale fields (d, and dmin / m).
  std::vector<size_t> f16_fields;
  void (*quantize)(const float*, size_t, void*);
  void (*dequantize)(const void*, size_t, float*);
  // o[i]: the part of weight i the kernel adds through a precomputed sum of
  // x (Q4_1 / Q5_1: m; Q2_K, Q4_K, Q5_K: -dmin * m_k; Q3_K: -4 d s_k; Q6_K:
  // -32 d sc_k; 0 otherwise), so weight i enters as the two terms w - o and
  // o (ops/linear.h).
  void (*offsets)(const void*, size_t, float*);
  BlockLinearFn linear_reference, linear;
  BlockMatMulFn matmul_reference, matmul;
  BlockGatherFn gather_reference, gather;
};

// A [rows, cols] matrix in the format, with its dequantized weights and the
// magnitudes T_i = |w_i - o_i| + |o_i| of the terms the kernels sum.
struct BlockMatrix {
  size_t rows, cols;
  std::vector<uint8_t> bytes;  // +1 byte so the data can start unaligned
  size_t offset;
  std::vector<float> w, terms;
  const uint8_t* data() const { return bytes.data() + offset; }
};

// Quantized random weights (uniform in [-1, 1) times a random power of two
// 2^-6..2^2 per 256 weights, so scales vary; with a random offset per row half
// of the time, so mins are exercised), or, if raw, random bytes with the f16
// fields set to `raw_f16` (random finite values in +-[2^-9, 2^-2] if empty):
// every bit pattern of quants and sub-block scales occurs.
BlockMatrix MakeMatrix(const BlockKernelCase& bc, size_t rows, size_t cols,
                       bool raw, uint32_t seed, bool misalign = false,
                       const std::vector<uint16_t>& raw_f16 = {}) {
  BlockMatrix m{rows, cols, {}, misalign ? size_t{1} : size_t{0}, {}, {}};
  const size_t num_blocks = rows * cols / bc.block_weights;
  m.bytes.resize(m.offset + num_blocks * bc.block_bytes);
  uint8_t* w = m.bytes.data() + m.offset;
  std::mt19937 rng(seed);
  if (raw) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> mag(-9.0f, -2.0f);
    for (size_t i = 0; i < num_blocks * bc.block_bytes; ++i) {
      w[i] = static_cast<uint8_t>(byte(rng));
    }
    for (size_t b = 0; b < num_blocks; ++b) {
      for (size_t f = 0; f < bc.f16_fields.size(); ++f) {
        uint16_t h;
        if (raw_f16.empty()) {
          const float v = exp2f(mag(rng)) * (byte(rng) % 2 ? 1.0f : -1.0f);
          h = F32ToF16Bits(v);
        } else {
          h = raw_f16[(b * bc.f16_fields.size() + f) % raw_f16.size()];
        }
        memcpy(w + b * bc.block_bytes + bc.f16_fields[f], &h, sizeof(h));
      }
    }
  } else {
    std::vector<float> values = test::RandomFloats(rows * cols, -1, 1, seed);
    std::uniform_int_distribution<int> exponent(-6, 2);
    for (size_t i = 0; i < values.size(); i += 256) {
      const float s = ldexpf(1.0f, exponent(rng));
      const float shift = (rng() % 2) ? 0.0f : s * 0.75f;
      for (size_t j = i; j < i + 256 && j < values.size(); ++j) {
        values[j] = values[j] * s + shift;
      }
    }
    bc.quantize(values.data(), values.size(), w);
  }
  m.w.resize(rows * cols);
  bc.dequantize(w, rows * cols, m.w.data());
  std::vector<float> o(rows * cols);
  bc.offsets(w, rows * cols, o.data());
  m.terms.resize(rows * cols);
  for (size_t i = 0; i < m.w.size(); ++i) {
    m.terms[i] = static_cast<float>(fabs(static_cast<double>(m.w[i]) - o[i]) + fabs(o[i]));
  }
  return m;
}

// Bound on |Linear - exact| (ops/linear.h): chains of S / N products per
// sub-block (S = 32), a chain of <= cols / 16 scale FMAs plus, per
// super-block, 16 / N FMAs of the sums (or one per 32-weight block), log2 N
// for the horizontal sum, S / N + log2 N for the precomputed sums, + 8 for the
// reference's rounding and slack. Returns gamma_k * sum_i T_i |x_i|.
double BlockLinearBound(size_t cols, size_t lanes, double term_sum) {
  const size_t n = HWY_MIN(lanes, size_t{16});
  double k = static_cast<double>(cols / 16) + static_cast<double>(cols / 256 * (16 / n)) +
             2.0 * static_cast<double>(32 / n) + 8.0;
  for (size_t l = n; l > 1; l /= 2) k += 2.0;
  return k * test::kU / (1.0 - k * test::kU) * term_sum;
}

// Runs the per-target kernel and the dispatched one on rows [rb, re) of m x
// and checks both: rows in the range against the reference within
// BlockLinearBound, rows outside still hold the NaN sentinel.
template <class Format>
void CheckLinear(const BlockKernelCase& bc, const BlockMatrix& m,
                 const float* x, size_t rb, size_t re) {
  const QuantDF df;
  const size_t rows = m.rows, cols = m.cols;
  std::vector<float> expected(rows, test::Sentinel());
  bc.linear_reference(m.data(), x, expected.data(), rows, cols, rb, re);
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<float> y(rows, test::Sentinel());
    if (variant == 0) {
      LinearBlockRows(Format(), m.data(), x, y.data(), rows, cols, rb, re);
    } else {
      bc.linear(m.data(), x, y.data(), rows, cols, rb, re);
    }
    for (size_t r = 0; r < rows; ++r) {
      if (r < rb || r >= re) {
        EXPECT_TRUE(isnan(y[r])) << "row " << r << " outside [" << rb << ", "
                                 << re << ") was written";
        continue;
      }
      double term_sum = 0.0;
      for (size_t c = 0; c < cols; ++c) {
        term_sum += static_cast<double>(m.terms[r * cols + c]) * fabs(x[c]);
      }
      const double tol = BlockLinearBound(cols, hn::Lanes(df), term_sum);
      EXPECT_NEAR(y[r], expected[r], tol)
          << "row " << r << " rows " << rows << " cols " << cols << " range ["
          << rb << ", " << re << ") variant "
          << (variant == 0 ? "per-target" : "dispatched");
    }
  }
}

// Column counts: one to five blocks and the model widths 2560 and 10240 (for
// 32-weight blocks also 672 = 21 blocks, a 16-block scale chunk and a tail);
// row counts covering the 4-row passes and 1..3 leftover rows; quantized and
// raw random blocks.
template <class Format>
void TestBlockLinearSizes(const BlockKernelCase& bc) {
  const size_t B = bc.block_weights;
  std::vector<size_t> cols_list = {B, 2 * B, 3 * B, 5 * B, 2560, 10240};
  if (B == 32) cols_list.push_back(672);
  const size_t kRows[] = {1, 3, 4, 5, 8, 11};
  uint32_t seed = 1;
  for (size_t cols : cols_list) {
    for (size_t rows : kRows) {
      if (cols == 10240 && rows > 5) continue;  // keeps the test fast
      for (bool raw : {false, true}) {
        const BlockMatrix m = MakeMatrix(bc, rows, cols, raw, seed++);
        const std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, seed++);
        CheckLinear<Format>(bc, m, x.data(), 0, rows);
      }
    }
  }
}

// Sub-ranges of the rows: only y[row_begin, row_end) is written.
template <class Format>
void TestBlockLinearRowRanges(const BlockKernelCase& bc) {
  const size_t rows = 13;
  const size_t kRanges[][2] = {{0, 0},  {0, 13},  {3, 4}, {5, 13},
                               {2, 11}, {12, 13}, {7, 7}, {1, 6}};
  for (size_t cols : {bc.block_weights, 2560 / bc.block_weights * bc.block_weights}) {
    const BlockMatrix m = MakeMatrix(bc, rows, cols, false, 100 + cols);
    const std::vector<float> x = test::RandomFloats(cols, -2.0f, 2.0f, 200 + cols);
    for (const auto& range : kRanges) {
      CheckLinear<Format>(bc, m, x.data(), range[0], range[1]);
    }
  }
}

// A row's result does not depend on the range it is computed in (on how the
// session splits rows between threads): every sub-range [rb, re) of 13 rows,
// per-target and dispatched, reproduces the bits of the same function's
// full-range call.
template <class Format>
void TestBlockLinearRangeIndependent(const BlockKernelCase& bc) {
  const size_t rows = 13;
  for (size_t cols : {bc.block_weights, 3 * bc.block_weights, size_t{2560}}) {
    const BlockMatrix m = MakeMatrix(bc, rows, cols, false, 800 + cols);
    const std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 900 + cols);
    // The dispatched function may take another path than the per-target
    // kernel (ops/linear_vnni.h), so each is held to its own bits.
    std::vector<float> full(rows), full_dispatched(rows);
    LinearBlockRows(Format(), m.data(), x.data(), full.data(), rows, cols, 0, rows);
    bc.linear(m.data(), x.data(), full_dispatched.data(), rows, cols, 0, rows);
    for (size_t rb = 0; rb < rows; ++rb) {
      for (size_t re = rb + 1; re <= rows; ++re) {
        std::vector<float> y1(rows), y2(rows);
        LinearBlockRows(Format(), m.data(), x.data(), y1.data(), rows, cols, rb, re);
        bc.linear(m.data(), x.data(), y2.data(), rows, cols, rb, re);
        for (size_t r = rb; r < re; ++r) {
          EXPECT_EQ(0, memcmp(&full[r], &y1[r], sizeof(float)))
              << "cols " << cols << " row " << r << " range [" << rb << ", "
              << re << ") per-target";
          EXPECT_EQ(0, memcmp(&full_dispatched[r], &y2[r], sizeof(float)))
              << "cols " << cols << " row " << r << " range [" << rb << ", "
              << re << ") dispatched";
        }
      }
    }
  }
}

// Weights at an odd byte address, x and y one float off: no alignment is
// assumed anywhere.
template <class Format>
void TestBlockLinearUnaligned(const BlockKernelCase& bc) {
  const size_t rows = 9;
  for (size_t cols : {bc.block_weights, 5 * bc.block_weights}) {
    const BlockMatrix m = MakeMatrix(bc, rows, cols, true, 300 + cols, true);
    const std::vector<float> x = test::RandomFloats(cols + 1, -1.0f, 1.0f, 400 + cols);
    CheckLinear<Format>(bc, m, x.data() + 1, 1, rows);
  }
}

// Raw blocks with d = 1/2 and dmin / m = 1/4 in every block and small integer
// activations in [-2, 2]: every product and partial sum of kernel, reference
// and the f32 kernel on the dequantized matrix is a multiple of 1/4 below
// 2^22 (each term, also a split one, at most 1/2 * 128 * 64 * 2 = 2^13, and
// 512 terms), i.e. below 2^24 quarters, hence exact, so all agree bit for
// bit. Catches a dropped, doubled or misplaced quant, scale or min
// independently of any tolerance.
template <class Format>
void TestBlockLinearExact(const BlockKernelCase& bc) {
  const size_t rows = 7;
  for (size_t cols : {bc.block_weights, 2 * bc.block_weights}) {
    std::vector<uint16_t> f16 = {0x3800};  // d = 1/2
    if (bc.f16_fields.size() > 1) f16.push_back(0x3400);  // dmin / m = 1/4
    const BlockMatrix m = MakeMatrix(bc, rows, cols, true, 500 + cols, false, f16);
    std::vector<float> x(cols);
    for (size_t c = 0; c < cols; ++c) {
      x[c] = static_cast<float>(static_cast<int>((c * 7) % 5) - 2);
    }
    std::vector<float> expected(rows), y1(rows), y2(rows), y3(rows);
    bc.linear_reference(m.data(), x.data(), expected.data(), rows, cols, 0, rows);
    LinearBlockRows(Format(), m.data(), x.data(), y1.data(), rows, cols, 0, rows);
    bc.linear(m.data(), x.data(), y2.data(), rows, cols, 0, rows);
    LinearRows(m.w.data(), x.data(), y3.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      EXPECT_EQ(expected[r], y1[r]) << "cols " << cols << " row " << r;
      EXPECT_EQ(expected[r], y2[r]) << "cols " << cols << " row " << r;
      EXPECT_EQ(expected[r], y3[r]) << "cols " << cols << " row " << r;
    }
  }
}

// Every kind of finite f16 value in the scale fields: zeros of both signs,
// the smallest and largest subnormals, the smallest normal, the largest
// finite value, negative values. The kernels decode them exactly, so they
// agree with the reference within the bound.
template <class Format>
void TestBlockLinearSpecialScales(const BlockKernelCase& bc) {
  const std::vector<uint16_t> kScales = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF,
                                         0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xB555,
                                         0x0200, 0x1234, 0x83FF};
  const size_t rows = 5;
  for (size_t cols : {bc.block_weights, size_t{2560}}) {
    const BlockMatrix m = MakeMatrix(bc, rows, cols, true, 1000 + cols, false, kScales);
    const std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 1100 + cols);
    CheckLinear<Format>(bc, m, x.data(), 0, rows);
  }
}

// Y = X W^T for batches 1..64 and row ranges: the per-target kernel and the
// dispatched one equal MatMulRows on the dequantized f32 matrix bit for bit
// (the decode is exact and the f32 micro-kernel is the same), agree with the
// double reference within the f32 kernel's bound (ops/matmul.h), and write
// nothing outside the output rows.
template <class Format>
void TestBlockMatMul(const BlockKernelCase& bc) {
  const hn::ScalableTag<float> df;
  const size_t B = bc.block_weights;
  struct Shape {
    size_t rows, cols, batch, rb, re;
  };
  const Shape kShapes[] = {{5, B, 1, 0, 5},          {37, 2 * B, 7, 3, 36},
                           {33, 1536 / B * B, 17, 0, 33}, {9, 3 * B, 64, 1, 8},
                           {4, 5 * B, 3, 0, 4}};
  uint32_t seed = 7000;
  for (const Shape& s : kShapes) {
    for (bool raw : {false, true}) {
      const BlockMatrix m = MakeMatrix(bc, s.rows, s.cols, raw, seed++, raw);
      const size_t x_stride = s.cols + 3, y_stride = s.rows + 2;
      std::vector<float> x(s.batch * x_stride, test::Sentinel());
      const std::vector<float> v = test::RandomFloats(s.batch * s.cols, -1, 1, seed++);
      for (size_t t = 0; t < s.batch; ++t) {
        memcpy(&x[t * x_stride], &v[t * s.cols], s.cols * sizeof(float));
      }
      const size_t y_size = (s.batch + 1) * y_stride;
      std::vector<float> expected(y_size, test::Sentinel());
      bc.matmul_reference(m.data(), x.data(), x_stride, expected.data(), y_stride,
                          s.batch, s.rows, s.cols, s.rb, s.re);
      std::vector<float> f32(y_size, test::Sentinel());
      MatMulRows(F32Weights{m.w.data(), s.cols}, x.data(), x_stride, f32.data(),
                 y_stride, s.batch, s.rows, s.cols, s.rb, s.re);
      for (int variant = 0; variant < 2; ++variant) {
        std::vector<float> y(y_size, test::Sentinel());
        if (variant == 0) {
          MatMulBlockRows(Format(), m.data(), x.data(), x_stride, y.data(), y_stride,
                          s.batch, s.rows, s.cols, s.rb, s.re);
        } else {
          bc.matmul(m.data(), x.data(), x_stride, y.data(), y_stride, s.batch,
                    s.rows, s.cols, s.rb, s.re);
        }
        EXPECT_EQ(0, memcmp(y.data(), f32.data(), y_size * sizeof(float)))
            << "not the f32 kernel's bits: rows " << s.rows << " cols " << s.cols
            << " batch " << s.batch << " variant " << variant;
        size_t failures = 0;
        for (size_t t = 0; t < s.batch && failures < 5; ++t) {
          for (size_t r = s.rb; r < s.re; ++r) {
            double abs_sum = 0.0;
            for (size_t c = 0; c < s.cols; ++c) {
              abs_sum += fabs(static_cast<double>(m.w[r * s.cols + c]) * x[t * x_stride + c]);
            }
            const size_t kc = kMatMulColChunk;
            double k = static_cast<double>((HWY_MIN(s.cols, kc) + hn::Lanes(df) - 1) /
                                           hn::Lanes(df)) +
                       static_cast<double>((s.cols + kc - 1) / kc) + 3.0;
            for (size_t l = hn::Lanes(df); l > 1; l /= 2) k += 1.0;
            const double tol = k * test::kU / (1.0 - k * test::kU) * abs_sum;
            const float got = y[t * y_stride + r], want = expected[t * y_stride + r];
            if (!(fabs(got - want) <= tol)) {
              ADD_FAILURE() << got << " vs reference " << want << " tol " << tol
                            << " token " << t << " row " << r << " cols " << s.cols;
              ++failures;
            }
          }
        }
        for (size_t i = 0; i < y_size; ++i) {
          const size_t t = i / y_stride, r = i % y_stride;
          if (t >= s.batch || r < s.rb || r >= s.re) {
            EXPECT_TRUE(isnan(y[i])) << "written outside the output: token " << t
                                     << " row " << r;
          }
        }
      }
    }
  }
}

// GatherRow: each entry the f32 weight times scale, rounded once, so kernel,
// dispatched function and reference agree bit for bit for column ranges that
// start and end inside blocks, on block boundaries and cover whole rows;
// y[count] stays unwritten; a whole row with scale 1 is the dequantized row.
template <class Format>
void TestBlockGather(const BlockKernelCase& bc) {
  const size_t B = bc.block_weights;
  for (size_t cols : {B, 3 * B, 1536 / B * B}) {
    for (bool raw : {false, true}) {
      const size_t num_rows = 5;
      const BlockMatrix m = MakeMatrix(bc, num_rows, cols, raw, 31 + cols + raw);
      const size_t kBegins[] = {0, 1, 5, 16, 31, 32, 33, 100, 255, 256, 257, 700};
      const size_t kCounts[] = {0, 1, 7, 16, 17, 31, 32, 33, 95, 256, 257, 300};
      for (size_t row : {size_t{0}, size_t{2}, num_rows - 1}) {
        for (size_t begin : kBegins) {
          for (size_t count : kCounts) {
            if (begin + count > cols) continue;
            for (float scale : {1.0f, 16.0f, 0.7071067811865476f}) {
              std::vector<float> expected(count + 1, test::Sentinel());
              std::vector<float> y(count + 1, test::Sentinel());
              std::vector<float> yd(count + 1, test::Sentinel());
              bc.gather_reference(m.data(), cols, row, begin, count, scale, expected.data());
              GatherRowQuant(Format(), m.data(), cols, row, begin, count, scale, y.data());
              bc.gather(m.data(), cols, row, begin, count, scale, yd.data());
              EXPECT_EQ(0, memcmp(y.data(), expected.data(), (count + 1) * sizeof(float)))
                  << "cols " << cols << " row " << row << " begin " << begin
                  << " count " << count;
              EXPECT_EQ(0, memcmp(yd.data(), expected.data(), (count + 1) * sizeof(float)))
                  << "dispatched, cols " << cols << " row " << row << " begin "
                  << begin << " count " << count;
            }
          }
        }
      }
      std::vector<float> y(cols);
      GatherRowQuant(Format(), m.data(), cols, 3, 0, cols, 1.0f, y.data());
      EXPECT_EQ(0, memcmp(y.data(), &m.w[3 * cols], cols * sizeof(float)));
    }
  }
}

// The test list of a format's file (inside namespace HWY_NAMESPACE, after
// its `BlockKernelCase Case()`), and its registration (in `#if HWY_ONCE`).
#ifndef CORTIQ_BLOCK_KERNEL_TESTS
#define CORTIQ_BLOCK_KERNEL_TESTS(FORMAT)                                       \
  void TestLinearSizes() { TestBlockLinearSizes<FORMAT>(Case()); }             \
  void TestLinearRowRanges() { TestBlockLinearRowRanges<FORMAT>(Case()); }     \
  void TestLinearRangeIndependent() {                                          \
    TestBlockLinearRangeIndependent<FORMAT>(Case());                           \
  }                                                                            \
  void TestLinearUnaligned() { TestBlockLinearUnaligned<FORMAT>(Case()); }     \
  void TestLinearExact() { TestBlockLinearExact<FORMAT>(Case()); }             \
  void TestLinearSpecialScales() {                                             \
    TestBlockLinearSpecialScales<FORMAT>(Case());                              \
  }                                                                            \
  void TestMatMul() { TestBlockMatMul<FORMAT>(Case()); }                       \
  void TestGather() { TestBlockGather<FORMAT>(Case()); }
#define CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(SUITE)                                 \
  HWY_BEFORE_TEST(SUITE);                                                      \
  HWY_EXPORT_AND_TEST_P(SUITE, TestLinearSizes);                               \
  HWY_EXPORT_AND_TEST_P(SUITE, TestLinearRowRanges);                           \
  HWY_EXPORT_AND_TEST_P(SUITE, TestLinearRangeIndependent);                    \
  HWY_EXPORT_AND_TEST_P(SUITE, TestLinearUnaligned);                           \
  HWY_EXPORT_AND_TEST_P(SUITE, TestLinearExact);                               \
  HWY_EXPORT_AND_TEST_P(SUITE, TestLinearSpecialScales);                       \
  HWY_EXPORT_AND_TEST_P(SUITE, TestMatMul);                                    \
  HWY_EXPORT_AND_TEST_P(SUITE, TestGather)
#endif

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_TESTS_OPS_BLOCK_KERNELS_TEST_INL_H_
