// Tests the exact integer decode products of Q4_0x16 and Q8_0x16 weights
// (ops/linear_vnni.h): the activation digits against their definition, the
// scalar implementations against the double references (LinearQ4_0x16Reference,
// LinearQ8_0x16Reference) within the header's bound, and the integer kernels
// (AVX-512 VNNI, AVX2; where the CPU has them) against the scalar ones bit for
// bit, alone, in row ranges, batched (LinearRows) and as the dispatched
// LinearQ4_0x16 / LinearQ8_0x16.

#include "ops/linear_vnni.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <limits>
#include <string>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/aligned_allocator.h"
#include "ops/cpu_features.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/quantize.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q8_0x16.h"
#include "ops/reference.h"
#include "tests/ops/test_util.h"

namespace cortiq {
namespace ops {
namespace {

// Owns the three arrays of an ActivationDigitsView.
struct Digits {
  explicit Digits(size_t cols)
      : digits(hwy::AllocateAligned<int8_t>(ActivationDigitBytes(cols))),
        sums(hwy::AllocateAligned<int32_t>(ActivationDigitSumBytes(cols) / 4)),
        scale(hwy::AllocateAligned<float>(ActivationDigitScaleBytes(cols) / 4)) {}
  ActivationDigitsView view() const { return {digits.get(), sums.get(), scale.get()}; }
  hwy::AlignedFreeUniquePtr<int8_t[]> digits;
  hwy::AlignedFreeUniquePtr<int32_t[]> sums;
  hwy::AlignedFreeUniquePtr<float[]> scale;
};

int BlockExponent(const float* b) {
  float max = 0.0f;
  for (int i = 0; i < 32; ++i) max = fmaxf(max, fabsf(b[i]));
  return max > 0.0f ? std::max(ilogbf(max), -97) : -97;
}

// Each column's four digits, read back by the layout formula of the header,
// reassemble X with X * scale within 2^(e - 30) of x (equal when |x| >=
// 2^(e - 6)); digit ranges and the per-block digit sums as documented.
TEST(ActivationDigitsTest, DigitsReassembleTheActivations) {
  for (size_t cols : {size_t{512}, size_t{1536}, size_t{6144}}) {
    const std::vector<float> x = test::HardActivations(cols, static_cast<uint32_t>(cols));
    Digits d(cols);
    ActivationDigitsScalar(x.data(), cols, d.view());
    for (size_t s = 0; s < cols / 512; ++s) {
      for (size_t j = 0; j < 16; ++j) {
        const float* xb = &x[512 * s + 32 * j];
        const int e = BlockExponent(xb);
        ASSERT_EQ(d.scale[16 * s + j], ldexpf(1.0f, e - 29)) << "group " << s << " block " << j;
        int64_t sums[4] = {};
        for (size_t v = 0; v < 8; ++v) {
          for (size_t b = 0; b < 4; ++b) {
            const size_t c = 4 * v + b;
            int64_t X = 0;
            for (int k = 3; k >= 0; --k) {
              const int a = d.digits[2048 * s + 64 * (4 * v + k) + 4 * j + b];
              if (k == 3) {
                EXPECT_LE(abs(a), 64);
              }
              sums[k] += a;
              X = X * 256 + a;
            }
            EXPECT_LE(llabs(X), int64_t{1} << 30);
            const double value = static_cast<double>(X) * ldexp(1.0, e - 29);
            const double error = fabs(value - static_cast<double>(xb[c]));
            EXPECT_LE(error, ldexp(1.0, e - 30)) << "column " << 512 * s + 32 * j + c;
            if (fabsf(xb[c]) >= ldexpf(1.0f, e - 6)) {
              EXPECT_EQ(value, static_cast<double>(xb[c])) << "column " << 512 * s + 32 * j + c;
            }
          }
        }
        for (int k = 0; k < 4; ++k) EXPECT_EQ(sums[k], d.sums[64 * s + 16 * k + j]);
      }
    }
  }
}

TEST(ActivationDigitsTest, NonFiniteActivationsMakeTheBlockScaleNaN) {
  std::vector<float> x(512, 0.5f);
  x[40] = std::numeric_limits<float>::infinity();    // block 1
  x[300] = std::numeric_limits<float>::quiet_NaN();  // block 9
  Digits d(512);
  ActivationDigitsScalar(x.data(), 512, d.view());
  for (size_t j = 0; j < 16; ++j) {
    EXPECT_EQ(isnan(d.scale[j]), j == 1 || j == 9) << "block " << j;
  }
}

// One of the two regrouped formats and its functions.
struct Format {
  const char* name;
  size_t group_bytes;  // per 512 weights
  void (*quantize)(const float*, size_t, void*);
  void (*dequantize)(const void*, size_t, float*);
  void (*reference)(const void*, const float*, float*, size_t, size_t, size_t, size_t);
  void (*scalar)(const void*, const float*, float*, size_t, size_t, size_t, size_t);
  void (*dispatched)(const void*, const float*, float*, size_t, size_t, size_t, size_t);
  void (*rows_dispatched)(const void*, const float*, size_t, float*, size_t, size_t, size_t,
                          size_t, size_t, size_t);
};

const Format kFormats[] = {
    {"q4_0x16", kQ4_0x16BlockBytes, &QuantizeRowQ4_0x16, &DequantizeRowQ4_0x16,
     &LinearQ4_0x16Reference, &LinearQ4_0x16DigitsScalar, &LinearQ4_0x16, &LinearRowsQ4_0x16},
    {"q8_0x16", kQ8_0x16BlockBytes, &QuantizeRowQ8_0x16, &DequantizeRowQ8_0x16,
     &LinearQ8_0x16Reference, &LinearQ8_0x16DigitsScalar, &LinearQ8_0x16, &LinearRowsQ8_0x16},
};

// A matrix of the format: quantized random values (blocks of differing
// scale) or raw random bytes with finite f16 scales.
std::vector<uint8_t> MakeMatrix(const Format& f, size_t rows, size_t cols, bool raw,
                                uint32_t seed) {
  std::vector<uint8_t> w(rows * cols / 512 * f.group_bytes);
  std::mt19937 rng(seed);
  if (raw) {
    for (uint8_t& byte : w) byte = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> mag(-12.0f, 4.0f);
    for (size_t g = 0; g < w.size(); g += f.group_bytes) {
      for (size_t j = 0; j < 16; ++j) {
        const uint16_t h = F32ToF16Bits(exp2f(mag(rng)) * (rng() % 2 ? 1.0f : -1.0f));
        memcpy(&w[g + 2 * j], &h, 2);
      }
    }
  } else {
    std::vector<float> values = test::RandomFloats(rows * cols, -1.0f, 1.0f, seed);
    for (size_t i = 0; i < values.size(); i += 32) {
      const float s = ldexpf(1.0f, static_cast<int>(rng() % 9) - 6);
      for (size_t k = i; k < i + 32; ++k) values[k] *= s;
    }
    for (size_t r = 0; r < rows; ++r) {
      f.quantize(&values[r * cols], cols, &w[r * cols / 512 * f.group_bytes]);
    }
  }
  return w;
}

// The header's bound: 2^-30 sum_c |w_c| max(max_block |x|, 2^-97) + k 2^-24
// sum_c |w_c x_c|, k = cols / 512 + 3 + 4 (+ 8 for the reference's own
// rounding and slack).
double DigitsBound(const float* w_row, const float* x, size_t cols) {
  double weight_term = 0.0, product_term = 0.0;
  for (size_t block = 0; block < cols / 32; ++block) {
    double max = 0.0;
    for (size_t c = 32 * block; c < 32 * block + 32; ++c) max = fmax(max, fabs(x[c]));
    for (size_t c = 32 * block; c < 32 * block + 32; ++c) {
      weight_term += fabs(w_row[c]) * fmax(max, ldexp(1.0, -97));
      product_term += fabs(static_cast<double>(w_row[c]) * x[c]);
    }
  }
  const double k = static_cast<double>(cols / 512) + 15.0;
  return ldexp(weight_term, -30) + k * test::kU / (1.0 - k * test::kU) * product_term;
}

class DigitsTest : public ::testing::TestWithParam<Format> {};

TEST_P(DigitsTest, ScalarMatchesTheDoubleReference) {
  const Format& f = GetParam();
  uint32_t seed = 1;
  for (size_t cols : {size_t{512}, size_t{1536}, size_t{3072}, size_t{10240}}) {
    for (size_t rows : {size_t{1}, size_t{5}, size_t{16}}) {
      for (bool raw : {false, true}) {
        const std::vector<uint8_t> w = MakeMatrix(f, rows, cols, raw, seed++);
        std::vector<float> dequantized(rows * cols);
        f.dequantize(w.data(), rows * cols, dequantized.data());
        for (bool hard : {false, true}) {
          const std::vector<float> x =
              hard ? test::HardActivations(cols, seed++) : test::RandomFloats(cols, -2.0f, 2.0f, seed++);
          std::vector<float> expected(rows), y(rows, test::Sentinel());
          f.reference(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
          f.scalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
          for (size_t r = 0; r < rows; ++r) {
            EXPECT_NEAR(y[r], expected[r], DigitsBound(&dequantized[r * cols], x.data(), cols))
                << f.name << " cols " << cols << " rows " << rows << " raw " << raw << " hard "
                << hard << " row " << r;
          }
        }
      }
    }
  }
}

// Small integer activations and d = 1/2: every digit sum and f32 step is
// exact, so the result equals the double reference exactly.
TEST_P(DigitsTest, SmallIntegersAreExact) {
  const Format& f = GetParam();
  const size_t rows = 7, cols = 1024;
  std::vector<uint8_t> w = MakeMatrix(f, rows, cols, true, 77);
  for (size_t g = 0; g < w.size(); g += f.group_bytes) {
    for (size_t j = 0; j < 16; ++j) {
      const uint16_t half = 0x3800;
      memcpy(&w[g + 2 * j], &half, 2);
    }
  }
  std::vector<float> x(cols);
  for (size_t c = 0; c < cols; ++c) x[c] = static_cast<float>(static_cast<int>((c * 7) % 5) - 2);
  std::vector<float> expected(rows), y(rows), dispatched(rows);
  f.reference(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
  f.scalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
  f.dispatched(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_EQ(expected[r], y[r]) << f.name << " row " << r;
    EXPECT_EQ(expected[r], dispatched[r]) << f.name << " row " << r;
  }
}

TEST_P(DigitsTest, NonFiniteActivationsGiveNaN) {
  const Format& f = GetParam();
  const size_t rows = 3, cols = 1024;
  const std::vector<uint8_t> w = MakeMatrix(f, rows, cols, false, 5);
  std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 6);
  x[700] = -std::numeric_limits<float>::infinity();
  std::vector<float> y(rows), dispatched(rows);
  f.scalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
  f.dispatched(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(isnan(y[r])) << f.name << " row " << r;
    // The f32 path gives +-inf or NaN here; both paths give a non-finite value.
    EXPECT_FALSE(isfinite(dispatched[r])) << f.name << " row " << r;
  }
}

using test::SameBits;

// One integer kernel: a format, the path it runs on, its Linear and LinearRows.
struct IntegerKernel {
  const char* name;
  const Format* format;
  DecodeLinearPath path;
  const char* path_name;  // DecodeLinearPathName(path), spelled out
  void (*linear)(const void*, const float*, float*, size_t, size_t, size_t, size_t);
  void (*rows)(const void*, const float*, size_t, float*, size_t, size_t, size_t, size_t,
               size_t, size_t);
};

const IntegerKernel kIntegerKernels[] = {
    {"q4_0x16_vnni", &kFormats[0], DecodeLinearPath::kVnni, "AVX-512 VNNI (exact integer digits)",
     &LinearQ4_0x16Vnni, &LinearRowsQ4_0x16Vnni},
    {"q8_0x16_vnni", &kFormats[1], DecodeLinearPath::kVnni, "AVX-512 VNNI (exact integer digits)",
     &LinearQ8_0x16Vnni, &LinearRowsQ8_0x16Vnni},
    {"q4_0x16_avx2", &kFormats[0], DecodeLinearPath::kAvx2, "AVX2 (exact integer digits)",
     &LinearQ4_0x16Avx2, &LinearRowsQ4_0x16Avx2},
};

// Runs where the CPU has the kernel's path, with the dispatch limited to it
// (on an AVX-512 VNNI CPU the AVX2 kernel is then what LinearQ4_0x16 runs).
class IntegerKernelTest : public ::testing::TestWithParam<IntegerKernel> {
 protected:
  void SetUp() override {
    if (static_cast<int>(DispatchedDecodeLinearPath()) > static_cast<int>(GetParam().path)) {
      GTEST_SKIP() << "this CPU has no " << GetParam().path_name
                   << " kernel: the f32 kernels are tested by ops_kernels_q4_0x16_test and "
                      "ops_kernels_q8_0x16_test";
    }
    LimitDecodeLinearPathForTest(GetParam().path);
    PreferFloatDecodeForTest(false);  // the dispatched Linear is this kernel on every shape
  }
  void TearDown() override {
    LimitDecodeLinearPathForTest(DecodeLinearPath::kVnni);
    PreferFloatDecodeForTest(true);
    SetDecodePrefetchIntoL2ForTest(-1);  // also after a failed ASSERT
  }
};

// The kernel, the dispatched Linear and every row range give the scalar
// implementation's bits.
TEST_P(IntegerKernelTest, MatchesTheScalarBits) {
  const IntegerKernel& kernel = GetParam();
  const Format& f = *kernel.format;
  EXPECT_STREQ(kernel.path_name, DecodeLinearPathName(DispatchedDecodeLinearPath()));
  // Both row streamings of the VNNI kernels (DecodePrefetchIntoL2; the AVX2
  // ones have one): in pairs, 4096 columns and up go through the column blocks (two of 4 groups,
  // three of 3, ...) in row blocks of 16, 37 rows making two whole blocks and
  // a part; four at a time, 37 rows are 9 passes and one row, and the ranges
  // below leave 0, 1, 2 and 3 rows after the last pass (7 rows: a pass, a
  // pair and one).
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    uint32_t seed = 100;
    for (size_t cols : {size_t{512}, size_t{1536}, size_t{4096}, size_t{4608}, size_t{6144},
                        size_t{12288}}) {
      const size_t rows = 37;
      for (bool raw : {false, true}) {
        const std::vector<uint8_t> w = MakeMatrix(f, rows, cols, raw, seed++);
        for (bool hard : {false, true}) {
          const std::vector<float> x = hard ? test::HardActivations(cols, seed++)
                                            : test::RandomFloats(cols, -3.0f, 3.0f, seed++);
          std::vector<float> scalar(rows), got(rows), dispatched(rows);
          f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
          kernel.linear(w.data(), x.data(), got.data(), rows, cols, 0, rows);
          f.dispatched(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
          for (size_t r = 0; r < rows; ++r) {
            EXPECT_TRUE(SameBits(scalar[r], got[r]))
                << kernel.name << " cols " << cols << " row " << r << ": " << scalar[r]
                << " vs " << got[r];
            EXPECT_TRUE(SameBits(scalar[r], dispatched[r]))
                << kernel.name << " cols " << cols << " row " << r;
          }
          test::ExpectRowRangesMatch(
              scalar,
              [&](size_t rb, size_t re, float* y) {
                kernel.linear(w.data(), x.data(), y, rows, cols, rb, re);
              },
              std::string(kernel.name) + " cols " + std::to_string(cols));
        }
      }
    }
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

// LinearRows (dispatched and the kernel's own) gives every token Linear's
// bits on its row, with strides, and writes nothing else.
TEST_P(IntegerKernelTest, LinearRowsKeepsTheBitsOfLinear) {
  const IntegerKernel& kernel = GetParam();
  const Format& f = *kernel.format;
  const size_t rows = 37, cols = 1536;
  const std::vector<uint8_t> w = MakeMatrix(f, rows, cols, false, 9);
  test::ExpectRowsKeepTheBitsOfLinear(f.dispatched, {f.rows_dispatched, kernel.rows}, w.data(),
                                      rows, cols, 3, 36, kernel.name);
}

// Non-finite activations: the kernel's own digits (not only the dispatched
// path's) make the block scale NaN, so every row is NaN, as the scalar twin's.
TEST_P(IntegerKernelTest, NonFiniteActivationsGiveNaN) {
  const IntegerKernel& kernel = GetParam();
  const Format& f = *kernel.format;
  const size_t rows = 5, cols = 1536;
  const std::vector<uint8_t> w = MakeMatrix(f, rows, cols, false, 13);
  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 14);
    x[777] = bad;
    std::vector<float> y(rows, 0.0f);
    kernel.linear(w.data(), x.data(), y.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) EXPECT_TRUE(isnan(y[r])) << kernel.name << " row " << r;
  }
}

// Limited to the f32 path, Linear runs the Highway kernel (which is not the
// digit arithmetic: its bits differ on hard activations).
TEST_P(IntegerKernelTest, TheTestLimitSelectsTheFloatKernel) {
  const IntegerKernel& kernel = GetParam();
  const Format& f = *kernel.format;
  const size_t rows = 16, cols = 1536;
  const std::vector<uint8_t> w = MakeMatrix(f, rows, cols, false, 11);
  const std::vector<float> x = test::HardActivations(cols, 12);
  std::vector<float> digits(rows), f32(rows);
  f.dispatched(w.data(), x.data(), digits.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(DecodeLinearPath::kFloat);
  EXPECT_EQ(DecodeLinearPath::kFloat, DispatchedDecodeLinearPath());
  f.dispatched(w.data(), x.data(), f32.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(kernel.path);
  size_t differ = 0;
  for (size_t r = 0; r < rows; ++r) differ += SameBits(digits[r], f32[r]) ? 0 : 1;
  EXPECT_GT(differ, 0u) << kernel.name;
}

// WholePassesAhead: a whole number of passes, at least one, at least min_bytes.
TEST(WholePassesAheadTest, RoundsUpToWholePasses) {
  EXPECT_EQ(WholePassesAhead(1000, 0), 1000u);
  EXPECT_EQ(WholePassesAhead(1000, 1), 1000u);
  EXPECT_EQ(WholePassesAhead(1000, 1000), 1000u);
  EXPECT_EQ(WholePassesAhead(1000, 1001), 2000u);
  EXPECT_EQ(WholePassesAhead(3456, 12288), 13824u);  // E2B Q4_0x16 rows (864 B) x 4
  EXPECT_EQ(WholePassesAhead(23040, 12288), 23040u);  // E4B down_proj rows (5760 B) x 4
  EXPECT_EQ(WholePassesAhead(0, 12288), 0u);
  EXPECT_EQ(WholePassesAhead(SIZE_MAX / 2, SIZE_MAX / 2 + 1), SIZE_MAX - 1);
}

// The test switch overrides the CPU's choice and -1 restores it.
TEST(DecodePrefetchTest, TheTestSwitchOverridesAndRestores) {
  const bool cpu = DecodePrefetchIntoL2();
  SetDecodePrefetchIntoL2ForTest(1);
  EXPECT_TRUE(DecodePrefetchIntoL2());
  SetDecodePrefetchIntoL2ForTest(0);
  EXPECT_FALSE(DecodePrefetchIntoL2());
  SetDecodePrefetchIntoL2ForTest(-1);
  EXPECT_EQ(DecodePrefetchIntoL2(), cpu);
}

// Where the CPU splits 512-bit instructions (Zen 4), Q8_0x16 rows of at most
// kFloatDecodeMaxCols columns take the f32 kernel (its bits, not the digits'),
// longer rows the integer digits, and Q4_0x16 rows the digits at every length;
// on other CPUs, and with the preference turned off, every row takes the
// dispatched path.
TEST(DecodePathTest, ShortQ8_0x16RowsTakeTheFloatKernelWhereAvx512IsSplit) {
  const bool vnni = DispatchedDecodeLinearPath() == DecodeLinearPath::kVnni;
  for (size_t cols : {size_t{512}, size_t{1536}, kFloatDecodeMaxCols, kFloatDecodeMaxCols + 512}) {
    EXPECT_EQ(DecodeQ8_0x16WithFloat(cols),
              vnni && CpuSplitsAvx512() && cols <= kFloatDecodeMaxCols)
        << cols;
  }
  PreferFloatDecodeForTest(false);
  EXPECT_FALSE(DecodeQ8_0x16WithFloat(1536));
  PreferFloatDecodeForTest(true);
  if (!vnni || !CpuSplitsAvx512()) GTEST_SKIP() << "the CPU does not split AVX-512";
  for (const Format* f : {&kFormats[0], &kFormats[1]}) {
    const bool q8_0 = f == &kFormats[1];
    const size_t rows = 16;
    for (size_t cols : {size_t{1536}, kFloatDecodeMaxCols + 512}) {
      const std::vector<uint8_t> w = MakeMatrix(*f, rows, cols, false, 21);
      const std::vector<float> x = test::HardActivations(cols, 22);
      std::vector<float> dispatched(rows), f32(rows), digits(rows);
      f->dispatched(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
      f->scalar(w.data(), x.data(), digits.data(), rows, cols, 0, rows);
      LimitDecodeLinearPathForTest(DecodeLinearPath::kFloat);
      f->dispatched(w.data(), x.data(), f32.data(), rows, cols, 0, rows);
      LimitDecodeLinearPathForTest(DecodeLinearPath::kVnni);
      const std::vector<float>& want = q8_0 && cols <= kFloatDecodeMaxCols ? f32 : digits;
      size_t differ = 0;
      for (size_t r = 0; r < rows; ++r) {
        EXPECT_TRUE(SameBits(dispatched[r], want[r]))
            << f->name << " cols " << cols << " row " << r;
        differ += SameBits(f32[r], digits[r]) ? 0 : 1;
      }
      EXPECT_GT(differ, 0u) << f->name << ": the two kernels must be told apart";
    }
  }
}

// On the AVX2 path Q8_0x16 keeps its f32 kernel (vpmaddubsw would saturate
// on its bytes): DispatchedDecodeLinearPathQ8_0x16 says so, and LinearQ8_0x16
// gives the f32 kernel's bits, not the digit twin's.
TEST(DecodePathTest, Q8_0x16TakesTheFloatKernelOnAvx2) {
  if (static_cast<int>(DispatchedDecodeLinearPath()) > static_cast<int>(DecodeLinearPath::kAvx2)) {
    GTEST_SKIP() << "no AVX2 on this CPU";
  }
  const Format& f = kFormats[1];
  const size_t rows = 16, cols = 1536;
  const std::vector<uint8_t> w = MakeMatrix(f, rows, cols, false, 15);
  const std::vector<float> x = test::HardActivations(cols, 16);
  LimitDecodeLinearPathForTest(DecodeLinearPath::kFloat);
  std::vector<float> f32(rows), avx2(rows), digits(rows);
  f.dispatched(w.data(), x.data(), f32.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(DecodeLinearPath::kAvx2);
  EXPECT_EQ(DecodeLinearPath::kAvx2, DispatchedDecodeLinearPath());
  EXPECT_EQ(DecodeLinearPath::kFloat, DispatchedDecodeLinearPathQ8_0x16());
  f.dispatched(w.data(), x.data(), avx2.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(DecodeLinearPath::kVnni);
  f.scalar(w.data(), x.data(), digits.data(), rows, cols, 0, rows);
  size_t differ = 0;
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(SameBits(f32[r], avx2[r])) << "row " << r;
    differ += SameBits(digits[r], avx2[r]) ? 0 : 1;
  }
  EXPECT_GT(differ, 0u);
}

std::string FormatName(const ::testing::TestParamInfo<Format>& info) { return info.param.name; }
INSTANTIATE_TEST_SUITE_P(Formats, DigitsTest, ::testing::ValuesIn(kFormats), FormatName);
std::string KernelName(const ::testing::TestParamInfo<IntegerKernel>& info) {
  return info.param.name;
}
INSTANTIATE_TEST_SUITE_P(Kernels, IntegerKernelTest, ::testing::ValuesIn(kIntegerKernels),
                         KernelName);

}  // namespace
}  // namespace ops
}  // namespace cortiq
