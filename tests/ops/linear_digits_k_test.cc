// Tests the exact integer decode products of the K-quant formats Q4_K and
// Q5_K (ops/linear_vnni.h): the scalar twins (LinearQ4_KDigitsScalar,
// LinearQ5_KDigitsScalar) against the double references within the header's
// bound (exactly on small integers), and the kernels (AVX-512 VNNI and AVX2,
// where the CPU has them) against the twins bit for bit,
// for row lengths with and without a partial group of super-blocks, in row
// ranges, as the dispatched LinearQ4_K / LinearQ5_K, and next to an
// unreadable page.

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/linear.h"
#include "ops/cpu_features.h"
#include "ops/linear_vnni.h"
#include "ops/quantize.h"
#include "ops/quantize_k.h"
#include "ops/reference.h"
#include "tests/ops/test_util.h"

namespace cortiq {
namespace ops {
namespace {

using LinearFn = void (*)(const void*, const float*, float*, size_t, size_t, size_t, size_t);

// A K-quant format with a digit twin, and its functions.
struct KFormat {
  const char* name;
  size_t block_bytes;  // per 256 weights
  bool high_bit;       // Q5_K: a fifth quant bit in qh (bytes 16..47)
  void (*quantize)(const float*, size_t, void*);
  LinearFn reference, scalar, dispatched;
};

const KFormat kQ4_K = {"q4_k", kQ4_KBlockBytes, false, &QuantizeRowQ4_K,
                       &LinearQ4_KReference, &LinearQ4_KDigitsScalar, &LinearQ4_K};
const KFormat kQ5_K = {"q5_k", kQ5_KBlockBytes, true, &QuantizeRowQ5_K,
                       &LinearQ5_KReference, &LinearQ5_KDigitsScalar, &LinearQ5_K};
const KFormat kFormats[] = {kQ4_K, kQ5_K};

size_t RowBytes(const KFormat& f, size_t cols) { return cols / kSuperBlockSize * f.block_bytes; }

// Rows of the format: quantized random values (sub-blocks of differing
// scale), or raw random bytes with finite f16 d and dmin of random binades.
std::vector<uint8_t> MakeRows(const KFormat& f, size_t rows, size_t cols, bool raw,
                              uint32_t seed) {
  std::vector<uint8_t> w(rows * RowBytes(f, cols));
  std::mt19937 rng(seed);
  if (raw) {
    for (uint8_t& byte : w) byte = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> mag(-14.0f, 2.0f);
    for (size_t b = 0; b < w.size(); b += f.block_bytes) {
      for (size_t half = 0; half < 2; ++half) {
        const uint16_t h = F32ToF16Bits(exp2f(mag(rng)) * (rng() % 4 ? 1.0f : -1.0f));
        memcpy(&w[b + 2 * half], &h, 2);
      }
    }
  } else {
    std::vector<float> values = test::RandomFloats(rows * cols, -1.0f, 1.0f, seed);
    for (size_t i = 0; i < values.size(); i += 32) {
      const float s = ldexpf(1.0f, static_cast<int>(rng() % 9) - 6);
      const float shift = (rng() % 3 == 0) ? 0.5f * s : 0.0f;  // some sub-blocks all positive
      for (size_t k = i; k < i + 32; ++k) values[k] = values[k] * s + shift;
    }
    for (size_t r = 0; r < rows; ++r) {
      f.quantize(&values[r * cols], cols, &w[r * RowBytes(f, cols)]);
    }
  }
  return w;
}

// ops/linear_vnni.h's bound for the format's rows (tests/ops/test_util.h).
double DigitsBound(const KFormat& f, const uint8_t* row, const float* x, size_t cols) {
  return test::KDigitsBound(row, f.block_bytes, f.high_bit, x, cols);
}

// Row lengths: whole groups of four super-blocks (1024, 4096, 12288) and
// partial ones: a last group of 1 super-block (256, 1280, 6400: tails of 4
// rows share a group), 2 (512, 1536, 2560, 3584, 4608: tails of 2 rows; 3584
// and 4608 also in the VNNI kernel's passes of four long rows) or 3 (768).
const size_t kColumns[] = {256, 512, 768, 1024, 1280, 1536, 2560, 3584, 4096, 4608, 6400, 12288};

// Calls fn(cols, raw, hard, w, x) for every row length of kColumns, quantized and raw weights
// (`rows` rows), and plain (uniform in [-range, range]) and hard activations; seeds from `seed`.
template <class F>
void ForEachCase(const KFormat& f, size_t rows, uint32_t seed, float range, F&& fn) {
  for (size_t cols : kColumns) {
    for (bool raw : {false, true}) {
      const std::vector<uint8_t> w = MakeRows(f, rows, cols, raw, seed++);
      for (bool hard : {false, true}) {
        const std::vector<float> x = hard ? test::HardActivations(cols, seed++)
                                          : test::RandomFloats(cols, -range, range, seed++);
        fn(cols, raw, hard, w, x);
      }
    }
  }
}

class KDigitsTest : public ::testing::TestWithParam<KFormat> {};

TEST_P(KDigitsTest, ScalarMatchesTheDoubleReference) {
  const KFormat& f = GetParam();
  const size_t rows = 5;
  ForEachCase(f, rows, 1, 2.0f,
              [&](size_t cols, bool raw, bool hard, const std::vector<uint8_t>& w,
                  const std::vector<float>& x) {
                std::vector<float> expected(rows), y(rows, test::Sentinel());
                f.reference(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
                f.scalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
                for (size_t r = 0; r < rows; ++r) {
                  EXPECT_NEAR(y[r], expected[r],
                              DigitsBound(f, &w[r * RowBytes(f, cols)], x.data(), cols))
                      << f.name << " cols " << cols << " raw " << raw << " hard " << hard
                      << " row " << r;
                }
              });
}

// Small integer activations, d = 1/2 and dmin = 1/4: every digit sum and f32
// step is exact, so the result equals the double reference exactly.
TEST_P(KDigitsTest, SmallIntegersAreExact) {
  const KFormat& f = GetParam();
  const size_t rows = 7, cols = 1280;
  std::vector<uint8_t> w = MakeRows(f, rows, cols, true, 77);
  for (size_t b = 0; b < w.size(); b += f.block_bytes) {
    const uint16_t half = 0x3800, quarter = 0x3400;
    memcpy(&w[b], &half, 2);
    memcpy(&w[b + 2], &quarter, 2);
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

TEST_P(KDigitsTest, NonFiniteActivationsGiveNaN) {
  const KFormat& f = GetParam();
  const size_t rows = 3, cols = 1536;
  const std::vector<uint8_t> w = MakeRows(f, rows, cols, false, 5);
  std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 6);
  x[1400] = std::numeric_limits<float>::infinity();
  std::vector<float> y(rows), dispatched(rows);
  f.scalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
  f.dispatched(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(isnan(y[r])) << f.name << " row " << r;
    EXPECT_FALSE(isfinite(dispatched[r])) << f.name << " row " << r;
  }
}

using test::SameBits;

// One integer kernel, its format and the path on which the format's Linear
// takes it.
struct KKernel {
  const char* name;
  const KFormat* format;
  DecodeLinearPath path;
  LinearFn linear;
};

const KKernel kKernels[] = {
    {"q4_k_vnni", &kFormats[0], DecodeLinearPath::kVnni, &LinearQ4_KVnni},
    {"q4_k_avx2", &kFormats[0], DecodeLinearPath::kAvx2, &LinearQ4_KAvx2},
    {"q5_k_vnni", &kFormats[1], DecodeLinearPath::kVnni, &LinearQ5_KVnni},
    {"q5_k_avx2", &kFormats[1], DecodeLinearPath::kAvx2, &LinearQ5_KAvx2},
};

// Runs where the CPU has the kernel's path, with the dispatch limited to it
// (on an AVX-512 VNNI CPU the AVX2 kernels are then what LinearQ4_K /
// LinearQ5_K run).
class KIntegerKernelTest : public ::testing::TestWithParam<KKernel> {
 protected:
  void SetUp() override {
    if (static_cast<int>(DispatchedDecodeLinearPath()) > static_cast<int>(GetParam().path)) {
      GTEST_SKIP() << "this CPU has no " << DecodeLinearPathName(GetParam().path)
                   << " kernel: the f32 kernels are tested by ops_kernels_q4_k_test and "
                      "ops_kernels_q5_k_test";
    }
    LimitDecodeLinearPathForTest(GetParam().path);
  }
  void TearDown() override {
    LimitDecodeLinearPathForTest(DecodeLinearPath::kVnni);
    SetDecodePrefetchIntoL2ForTest(-1);  // also after a failed ASSERT
  }
};

// The kernel, the dispatched Linear and every row range give the scalar
// twin's bits.
TEST_P(KIntegerKernelTest, MatchesTheScalarBits) {
  const KKernel& kernel = GetParam();
  const KFormat& f = *kernel.format;
  const size_t rows = 37;
  // Both row streamings (DecodePrefetchIntoL2: long rows in passes of four
  // with 0 to 3 rows left, or one at a time and in column blocks).
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    ForEachCase(f, rows, 100, 3.0f,
                [&](size_t cols, bool raw, bool hard, const std::vector<uint8_t>& w,
                    const std::vector<float>& x) {
      std::vector<float> scalar(rows), got(rows), dispatched(rows);
      f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
      kernel.linear(w.data(), x.data(), got.data(), rows, cols, 0, rows);
      f.dispatched(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
      for (size_t r = 0; r < rows; ++r) {
        EXPECT_TRUE(SameBits(scalar[r], got[r]))
            << kernel.name << " cols " << cols << " raw " << raw << " hard " << hard << " row "
            << r << ": " << scalar[r] << " vs " << got[r];
        EXPECT_TRUE(SameBits(scalar[r], dispatched[r]))
            << kernel.name << " cols " << cols << " row " << r;
      }
      test::ExpectRowRangesMatch(
          scalar,
          [&](size_t rb, size_t re, float* y) {
            kernel.linear(w.data(), x.data(), y, rows, cols, rb, re);
          },
          std::string(kernel.name) + " cols " + std::to_string(cols) + " into_l2 " +
              std::to_string(into_l2));
    });
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

// The kernel reads no byte past the matrix: the last row ends at a
// PROT_NONE page (a partial group of super-blocks, and a whole one; 4352
// columns: the VNNI kernel's column blocks with a partial last group, two
// row blocks; 2560 and 3584: the last rows' tails read two rows at a time).
TEST_P(KIntegerKernelTest, ReadsNothingPastTheMatrix) {
  const KFormat& f = *GetParam().format;
  for (int into_l2 : {0, 1}) {
    for (size_t cols : {size_t{1280}, size_t{1024}, size_t{4352}, size_t{2560}, size_t{3584}}) {
      SetDecodePrefetchIntoL2ForTest(into_l2);
      const size_t rows = 19;
      const test::GuardedBytes guarded(MakeRows(f, rows, cols, false, 31));
      ASSERT_TRUE(guarded.ok());
      const uint8_t* w = guarded.data();
      const std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 32);
      std::vector<float> scalar(rows), got(rows);
      f.scalar(w, x.data(), scalar.data(), rows, cols, 0, rows);
      GetParam().linear(w, x.data(), got.data(), rows, cols, 0, rows);
      for (size_t r = 0; r < rows; ++r) {
        EXPECT_TRUE(SameBits(scalar[r], got[r])) << GetParam().name << " row " << r;
      }
      // Rows [3, 19): with into_l2, four passes of four, the last one ending at the guard.
      std::vector<float> tail(rows, 0.0f);
      GetParam().linear(w, x.data(), tail.data(), rows, cols, 3, rows);
      for (size_t r = 3; r < rows; ++r) {
        EXPECT_TRUE(SameBits(scalar[r], tail[r])) << "tail row " << r << " into_l2 " << into_l2;
      }
    }
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

// Every lane exactly -0 (d = -0, the min term underflowing to -0): a group's
// super-blocks past the row's end still turn the lanes into +0, as the scalar
// twin's zero steps do (5, 6 and 10 super-blocks leave a group partly
// padded), on rows alone and on rows whose tails share one group's lanes
// (4 rows: two or four tails per group).
TEST_P(KIntegerKernelTest, PaddingTurnsNegativeZeroLanesPositive) {
  const KFormat& f = *GetParam().format;
  for (int into_l2 : {0, 1}) {
  SetDecodePrefetchIntoL2ForTest(into_l2);
  for (size_t cols : {size_t{1280}, size_t{1536}, size_t{2560}, size_t{3584}, size_t{4352}}) {
    const size_t superblocks = cols / kSuperBlockSize;
    for (size_t rows : {size_t{1}, size_t{4}, size_t{5}, size_t{6}}) {
      std::vector<uint8_t> w(rows * superblocks * f.block_bytes, 0);
      for (size_t b = 0; b < rows * superblocks; ++b) {
        uint8_t* sb = &w[b * f.block_bytes];
        const uint16_t d = 0x8000, dmin = 0x0001;  // -0 and 2^-24 (an f16 subnormal)
        memcpy(sb, &d, 2);
        memcpy(sb + 2, &dmin, 2);
        for (int k = 0; k < 8; ++k) sb[4 + k] = 1;     // sc = m = 1, sub-blocks 0..3
        for (int k = 0; k < 4; ++k) sb[12 + k] = 0x11;  // sc = m = 1, sub-blocks 4..7
      }
      std::vector<float> x(cols, 0.0f);
      for (size_t c = 0; c < cols; c += 32) x[c] = ldexpf(1.0f, -126);
      std::vector<float> scalar(rows, 1.0f), kernel(rows, 1.0f);
      f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
      GetParam().linear(w.data(), x.data(), kernel.data(), rows, cols, 0, rows);
      for (size_t r = 0; r < rows; ++r) {
        EXPECT_EQ(0.0f, scalar[r]);
        EXPECT_FALSE(std::signbit(scalar[r])) << f.name << " cols " << cols << " row " << r;
        EXPECT_TRUE(SameBits(scalar[r], kernel[r]))
            << GetParam().name << " cols " << cols << " rows " << rows << " row " << r
            << " into_l2 " << into_l2 << ": " << scalar[r] << " vs " << kernel[r];
      }
    }
  }
  }
}

// Finite activations whose block sum overflows f32 (32 x 2^124: T = +inf):
// the min term makes the row -inf, in the scalar twin and in the kernels,
// also where the tails of several rows share a group (the padded lanes keep
// T = +0, so no 0 x inf NaN appears there).
TEST_P(KIntegerKernelTest, AnInfiniteBlockSumGivesTheScalarTwinsInfinity) {
  const KFormat& f = *GetParam().format;
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    for (size_t cols : {size_t{1280}, size_t{1536}, size_t{3584}}) {
      const size_t superblocks = cols / kSuperBlockSize;
      for (size_t rows : {size_t{1}, size_t{4}, size_t{5}}) {
        // Zero weights but the last super-block of each row: d = +0, dmin = 1,
        // sc = m = 1, quants 0 (each weight = -dmin m = -1).
        std::vector<uint8_t> w(rows * superblocks * f.block_bytes, 0);
        for (size_t r = 0; r < rows; ++r) {
          uint8_t* sb = &w[(r * superblocks + superblocks - 1) * f.block_bytes];
          const uint16_t d = 0x0000, dmin = 0x3C00;
          memcpy(sb, &d, 2);
          memcpy(sb + 2, &dmin, 2);
          for (int k = 0; k < 8; ++k) sb[4 + k] = 1;
          for (int k = 0; k < 4; ++k) sb[12 + k] = 0x11;
        }
        std::vector<float> x(cols, 0.0f);
        for (size_t c = cols - kSuperBlockSize; c < cols - kSuperBlockSize + 32; ++c) {
          x[c] = ldexpf(1.0f, 124);
        }
        std::vector<float> scalar(rows), kernel(rows);
        f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
        GetParam().linear(w.data(), x.data(), kernel.data(), rows, cols, 0, rows);
        for (size_t r = 0; r < rows; ++r) {
          EXPECT_EQ(-INFINITY, scalar[r]) << f.name << " cols " << cols << " row " << r;
          EXPECT_TRUE(SameBits(scalar[r], kernel[r]))
              << GetParam().name << " cols " << cols << " rows " << rows << " row " << r
              << " into_l2 " << into_l2 << ": " << scalar[r] << " vs " << kernel[r];
        }
      }
    }
  }
}

// Non-finite activations: the kernel's own digits make the block scale NaN,
// so every row is NaN, as the scalar twin's.
TEST_P(KIntegerKernelTest, NonFiniteActivationsGiveNaN) {
  const KFormat& f = *GetParam().format;
  const size_t rows = 5, cols = 1280;
  const std::vector<uint8_t> w = MakeRows(f, rows, cols, false, 17);
  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 18);
    x[1100] = bad;
    std::vector<float> y(rows, 0.0f);
    GetParam().linear(w.data(), x.data(), y.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      EXPECT_TRUE(isnan(y[r])) << GetParam().name << " row " << r;
    }
  }
}

// Limited to the f32 path, the format's Linear runs the Highway kernel (not
// the digit arithmetic: its bits differ on hard activations).
TEST_P(KIntegerKernelTest, TheTestLimitSelectsTheFloatKernel) {
  const KFormat& f = *GetParam().format;
  const size_t rows = 16, cols = 1536;
  const std::vector<uint8_t> w = MakeRows(f, rows, cols, false, 11);
  const std::vector<float> x = test::HardActivations(cols, 12);
  std::vector<float> digits(rows), f32(rows);
  f.dispatched(w.data(), x.data(), digits.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(DecodeLinearPath::kFloat);
  f.dispatched(w.data(), x.data(), f32.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(GetParam().path);
  size_t differ = 0;
  for (size_t r = 0; r < rows; ++r) differ += SameBits(digits[r], f32[r]) ? 0 : 1;
  EXPECT_GT(differ, 0u) << GetParam().name;
}

void PrintTo(const KFormat& f, std::ostream* os) { *os << f.name; }
void PrintTo(const KKernel& k, std::ostream* os) { *os << k.name; }
std::string FormatName(const ::testing::TestParamInfo<KFormat>& info) { return info.param.name; }
std::string KernelName(const ::testing::TestParamInfo<KKernel>& info) { return info.param.name; }
INSTANTIATE_TEST_SUITE_P(Formats, KDigitsTest, ::testing::ValuesIn(kFormats), FormatName);
INSTANTIATE_TEST_SUITE_P(Kernels, KIntegerKernelTest, ::testing::ValuesIn(kKernels), KernelName);

}  // namespace
}  // namespace ops
}  // namespace cortiq
