// Tests Q4_Kx16 and Q5_Kx16 (ops/quantize_q4_kx16.h, ops/quantize_q5_kx16.h)
// and their kernels, each format against its GGUF format: the layout byte by
// byte against the header's formula and as a lossless round trip; the digit
// twins (LinearQ4_Kx16DigitsScalar, ...) against the double reference of the
// GGUF rows within the K-quants' bound (exactly on small integers); the VNNI
// and AVX2 kernels against the twins bit for bit (both row streamings, row
// ranges, LinearRows, scale bytes read as 6 bits, next to an unreadable page);
// on the f32 path, LinearQ4_Kx16 / LinearQ5_Kx16 within the f32 bound; the prompt's product and the row
// gather against the dequantized weights.

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "ops/cpu_features.h"
#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/linear_vnni.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/quantize_k.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"
#include "ops/reference.h"
#include "tests/ops/test_util.h"

namespace cortiq {
namespace ops {
namespace {

using test::SameBits;

using LinearFn = void (*)(const void*, const float*, float*, size_t, size_t, size_t, size_t);
using RowsFn = void (*)(const void*, const float*, size_t, float*, size_t, size_t, size_t, size_t,
                        size_t, size_t);

// A regrouped K format, its GGUF format and their functions.
struct Fmt {
  const char* name;
  size_t plain_block_bytes, x16_block_bytes, super_scales;
  bool fifth_bit;  // Q5_K: qh at bytes 16..47 of the super-block, qs from 48
  void (*quantize)(const float*, size_t, void*);
  void (*dequantize)(const void*, size_t, float*);
  void (*to_x16)(const void*, size_t, void*);
  void (*from_x16)(const void*, size_t, void*);
  void (*dequantize_x16)(const void*, size_t, float*);
  LinearFn plain_reference, x16_reference, scalar, linear, plain_linear;
  RowsFn rows;
  void (*matmul)(const void*, const float*, size_t, float*, size_t, size_t, size_t, size_t,
                 size_t, size_t);
  void (*gather)(const void*, size_t, size_t, size_t, size_t, float, float*);
  size_t PlainRowBytes(size_t cols) const { return cols / 256 * plain_block_bytes; }
  size_t X16RowBytes(size_t cols) const { return cols / 512 * x16_block_bytes; }
};
const Fmt kFmts[] = {
    {"q4_kx16", kQ4_KBlockBytes, kQ4_Kx16BlockBytes, kQ4_Kx16SuperScales, false,
     &QuantizeRowQ4_K, &DequantizeRowQ4_K, &Q4_KToQ4_Kx16, &Q4_Kx16ToQ4_K,
     &DequantizeRowQ4_Kx16, &LinearQ4_KReference, &LinearQ4_Kx16Reference,
     &LinearQ4_Kx16DigitsScalar, &LinearQ4_Kx16, &LinearQ4_K, &LinearRowsQ4_Kx16,
     &MatMulQ4_Kx16, &GatherRowQ4_Kx16},
    {"q5_kx16", kQ5_KBlockBytes, kQ5_Kx16BlockBytes, kQ5_Kx16SuperScales, true,
     &QuantizeRowQ5_K, &DequantizeRowQ5_K, &Q5_KToQ5_Kx16, &Q5_Kx16ToQ5_K,
     &DequantizeRowQ5_Kx16, &LinearQ5_KReference, &LinearQ5_Kx16Reference,
     &LinearQ5_Kx16DigitsScalar, &LinearQ5_Kx16, &LinearQ5_K, &LinearRowsQ5_Kx16,
     &MatMulQ5_Kx16, &GatherRowQ5_Kx16},
};
std::string FmtName(const ::testing::TestParamInfo<Fmt>& info) { return info.param.name; }

class KX16FormatTest : public ::testing::TestWithParam<Fmt> {};

// Q4_K rows: quantized random values (sub-blocks of differing scale, some all
// positive, so mins matter), or raw random bytes with finite f16 d and dmin of
// random binades, some zero or subnormal.
std::vector<uint8_t> MakeRows(const Fmt& f, size_t rows, size_t cols, bool raw, uint32_t seed) {
  std::vector<uint8_t> w(rows * f.PlainRowBytes(cols));
  std::mt19937 rng(seed);
  if (raw) {
    for (uint8_t& byte : w) byte = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> mag(-14.0f, 2.0f);
    for (size_t b = 0; b < w.size(); b += f.plain_block_bytes) {
      for (size_t half = 0; half < 2; ++half) {
        uint16_t h = F32ToF16Bits(exp2f(mag(rng)) * (rng() % 4 ? 1.0f : -1.0f));
        if (rng() % 13 == 0) h = rng() % 2 ? 0x0000 : 0x0003;  // zero, subnormal
        memcpy(&w[b + 2 * half], &h, 2);
      }
    }
  } else {
    std::vector<float> values = test::RandomFloats(rows * cols, -1.0f, 1.0f, seed);
    for (size_t i = 0; i < values.size(); i += 32) {
      const float s = ldexpf(1.0f, static_cast<int>(rng() % 9) - 6);
      const float shift = (rng() % 3 == 0) ? 0.5f * s : 0.0f;
      for (size_t k = i; k < i + 32; ++k) values[k] = values[k] * s + shift;
    }
    for (size_t r = 0; r < rows; ++r) {
      f.quantize(&values[r * cols], cols, &w[r * f.PlainRowBytes(cols)]);
    }
  }
  return w;
}

std::vector<uint8_t> ToX16(const Fmt& f, const std::vector<uint8_t>& q4_k, size_t rows,
                           size_t cols) {
  std::vector<uint8_t> out(rows * f.X16RowBytes(cols));
  f.to_x16(q4_k.data(), rows * cols, out.data());
  return out;
}

TEST(KX16LayoutTest, SizesAreTwoSuperBlocksAndTheUnpackedScales) {
  EXPECT_EQ(512u, kQ4_Kx16BlockWeights);
  EXPECT_EQ(296u, kQ4_Kx16BlockBytes);
  EXPECT_EQ(3u * 296u, Q4_Kx16RowBytes(1536));
  EXPECT_EQ(512u, kQ5_Kx16BlockWeights);
  EXPECT_EQ(360u, kQ5_Kx16BlockBytes);  // 2 * 176 + 8
  EXPECT_EQ(3u * 360u, Q5_Kx16RowBytes(1536));
}

// Any Q4_K bytes (all 96 bits of the packed scales carry a 6-bit value) come
// back unchanged.
TEST_P(KX16FormatTest, RoundTripsAnyGGUFBytes) {
  const Fmt& f = GetParam();
  for (uint32_t seed : {1u, 2u, 3u}) {
    const size_t rows = 3, cols = 2560;
    std::vector<uint8_t> q4_k(rows * f.PlainRowBytes(cols));
    std::mt19937 rng(seed);
    for (uint8_t& byte : q4_k) byte = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> x16 = ToX16(f, q4_k, rows, cols);
    std::vector<uint8_t> back(q4_k.size(), 0xAB);
    f.from_x16(x16.data(), rows * cols, back.data());
    EXPECT_EQ(q4_k, back) << "seed " << seed;
  }
}

// Every weight read where the header says, w = d sc q - dmin m, equals
// llama.cpp's dequantized Q4_K weight; DequantizeRowQ4_Kx16 gives the same.
TEST_P(KX16FormatTest, WeightsSitWhereTheHeaderSays) {
  const Fmt& f = GetParam();
  const size_t rows = 2, cols = 1536;
  const std::vector<uint8_t> q4_k = MakeRows(f, rows, cols, false, 7);
  const std::vector<uint8_t> x16 = ToX16(f, q4_k, rows, cols);
  std::vector<float> expected(rows * cols), dequantized(rows * cols);
  f.dequantize(q4_k.data(), rows * cols, expected.data());
  f.dequantize_x16(x16.data(), rows * cols, dequantized.data());
  for (size_t t = 0; t < rows * cols / 512; ++t) {
    const uint8_t* g = &x16[t * f.x16_block_bytes];
    for (size_t j = 0; j < 16; ++j) {
      uint16_t d, dmin;
      memcpy(&d, g + f.super_scales + 4 * (j / 8), 2);
      memcpy(&dmin, g + f.super_scales + 2 + 4 * (j / 8), 2);
      const int sc = g[j], m = g[16 + j];
      ASSERT_LT(sc, 64);
      ASSERT_LT(m, 64);
      for (size_t i = 0; i < 32; ++i) {
        const uint8_t byte = g[32 + 64 * ((i % 16) / 4) + 4 * j + i % 4];
        int q = i < 16 ? (byte & 15) : (byte >> 4);
        if (f.fifth_bit) {  // bit 4 j + i % 4 of the mask of part (i % 16) / 4, half i / 16
          const uint8_t* mask = g + kQ5_Kx16HighBits + 16 * ((i % 16) / 4) + 8 * (i / 16);
          q += ((mask[(4 * j + i % 4) / 8] >> ((4 * j + i % 4) % 8)) & 1) * 16;
        }
        const float w = F16BitsToF32(d) * static_cast<float>(sc) * static_cast<float>(q) -
                        F16BitsToF32(dmin) * static_cast<float>(m);
        const size_t c = t * 512 + 32 * j + i;
        ASSERT_TRUE(SameBits(expected[c], w)) << "weight " << c;
        ASSERT_TRUE(SameBits(expected[c], dequantized[c])) << "weight " << c;
      }
    }
  }
}

// ops/linear_vnni.h's bound for the GGUF rows (tests/ops/test_util.h).
double DigitsBound(const Fmt& f, const uint8_t* row, const float* x, size_t cols) {
  return test::KDigitsBound(row, f.plain_block_bytes, f.fifth_bit, x, cols);
}

const size_t kColumns[] = {512, 1536, 2560, 4096, 4608, 6144, 12288};

TEST_P(KX16FormatTest, ScalarMatchesTheDoubleReference) {
  const Fmt& f = GetParam();
  uint32_t seed = 1;
  const size_t rows = 5;
  for (size_t cols : kColumns) {
    for (bool raw : {false, true}) {
      const std::vector<uint8_t> q4_k = MakeRows(f, rows, cols, raw, seed++);
      const std::vector<uint8_t> w = ToX16(f, q4_k, rows, cols);
      for (bool hard : {false, true}) {
        const std::vector<float> x = hard ? test::HardActivations(cols, seed++)
                                          : test::RandomFloats(cols, -2.0f, 2.0f, seed++);
        std::vector<float> expected(rows), y(rows, test::Sentinel()), reference(rows);
        f.plain_reference(q4_k.data(), x.data(), expected.data(), rows, cols, 0, rows);
        f.x16_reference(w.data(), x.data(), reference.data(), rows, cols, 0, rows);
        f.scalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
        for (size_t r = 0; r < rows; ++r) {
          EXPECT_TRUE(SameBits(expected[r], reference[r])) << "row " << r;
          EXPECT_NEAR(y[r], expected[r], DigitsBound(f, &q4_k[r * f.PlainRowBytes(cols)], x.data(), cols))
              << "cols " << cols << " raw " << raw << " hard " << hard << " row " << r;
        }
      }
    }
  }
}

// Small integer activations, d = 1/2 and dmin = 1/4: every digit sum and f32
// step is exact, so the twin and the dispatched kernel equal the reference.
TEST_P(KX16FormatTest, SmallIntegersAreExact) {
  const Fmt& f = GetParam();
  const size_t rows = 7, cols = 1536;
  std::vector<uint8_t> q4_k = MakeRows(f, rows, cols, true, 77);
  for (size_t b = 0; b < q4_k.size(); b += f.plain_block_bytes) {
    const uint16_t half = 0x3800, quarter = 0x3400;
    memcpy(&q4_k[b], &half, 2);
    memcpy(&q4_k[b + 2], &quarter, 2);
  }
  const std::vector<uint8_t> w = ToX16(f, q4_k, rows, cols);
  std::vector<float> x(cols);
  for (size_t c = 0; c < cols; ++c) x[c] = static_cast<float>(static_cast<int>((c * 7) % 5) - 2);
  std::vector<float> expected(rows), y(rows), dispatched(rows);
  f.plain_reference(q4_k.data(), x.data(), expected.data(), rows, cols, 0, rows);
  f.scalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
  f.linear(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_EQ(expected[r], y[r]) << "row " << r;
    EXPECT_EQ(expected[r], dispatched[r]) << "row " << r;
  }
}

// An integer kernel of a regrouped K format: the format, its path, Linear and LinearRows.
struct Kernel {
  const char* name;
  const Fmt* format;
  DecodeLinearPath path;
  LinearFn linear;
  RowsFn rows;
};
const Kernel kKernels[] = {
    {"q4_kx16_vnni", &kFmts[0], DecodeLinearPath::kVnni, &LinearQ4_Kx16Vnni,
     &LinearRowsQ4_Kx16Vnni},
    {"q4_kx16_avx2", &kFmts[0], DecodeLinearPath::kAvx2, &LinearQ4_Kx16Avx2,
     &LinearRowsQ4_Kx16Avx2},
    {"q5_kx16_vnni", &kFmts[1], DecodeLinearPath::kVnni, &LinearQ5_Kx16Vnni,
     &LinearRowsQ5_Kx16Vnni},
    {"q5_kx16_avx2", &kFmts[1], DecodeLinearPath::kAvx2, &LinearQ5_Kx16Avx2,
     &LinearRowsQ5_Kx16Avx2},
};

// Runs where the CPU has the kernel's path, with the dispatch limited to it
// (so LinearQ4_Kx16 and LinearRowsQ4_Kx16 run it too).
class KX16KernelTest : public ::testing::TestWithParam<Kernel> {
 protected:
  void SetUp() override {
    if (static_cast<int>(DispatchedDecodeLinearPath()) > static_cast<int>(GetParam().path)) {
      GTEST_SKIP() << "this CPU has no " << DecodeLinearPathName(GetParam().path) << " kernel";
    }
    LimitDecodeLinearPathForTest(GetParam().path);
  }
  void TearDown() override {
    LimitDecodeLinearPathForTest(DecodeLinearPath::kVnni);
    SetDecodePrefetchIntoL2ForTest(-1);
  }
};

// The kernel and the dispatched Linear give the twin's bits on every row, in
// pairs and column blocks and in passes of four (37 rows: 9 passes and one
// row), and in every row range.
TEST_P(KX16KernelTest, MatchesTheScalarBits) {
  const Fmt& f = *GetParam().format;
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    uint32_t seed = 100;
    for (size_t cols : kColumns) {
      const size_t rows = 37;
      for (bool raw : {false, true}) {
        const std::vector<uint8_t> w = ToX16(f, MakeRows(f, rows, cols, raw, seed++), rows, cols);
        for (bool hard : {false, true}) {
          const std::vector<float> x = hard ? test::HardActivations(cols, seed++)
                                            : test::RandomFloats(cols, -3.0f, 3.0f, seed++);
          std::vector<float> scalar(rows), got(rows), dispatched(rows);
          f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
          GetParam().linear(w.data(), x.data(), got.data(), rows, cols, 0, rows);
          f.linear(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
          for (size_t r = 0; r < rows; ++r) {
            EXPECT_TRUE(SameBits(scalar[r], got[r]))
                << "cols " << cols << " row " << r << " into_l2 " << into_l2 << ": " << scalar[r]
                << " vs " << got[r];
            EXPECT_TRUE(SameBits(scalar[r], dispatched[r])) << "cols " << cols << " row " << r;
          }
          test::ExpectRowRangesMatch(
              scalar,
              [&](size_t rb, size_t re, float* y) {
                GetParam().linear(w.data(), x.data(), y, rows, cols, rb, re);
              },
              std::string(GetParam().name) + " cols " + std::to_string(cols));
        }
      }
    }
  }
}

// LinearRows gives every token Linear's bits on its row and writes nothing else.
TEST_P(KX16KernelTest, LinearRowsKeepsTheBitsOfLinear) {
  const Fmt& f = *GetParam().format;
  const size_t rows = 37, cols = 1536;
  const std::vector<uint8_t> w = ToX16(f, MakeRows(f, rows, cols, false, 9), rows, cols);
  test::ExpectRowsKeepTheBitsOfLinear(f.linear, {f.rows, GetParam().rows}, w.data(), rows, cols,
                                      3, 36, "");
}

// Scale and min bytes above 63 (only in a hand-made artifact) are read as
// their low 6 bits by the kernel, its twin and the f32 fallback alike.
TEST_P(KX16KernelTest, ScaleBytesAreReadAsSixBits) {
  const Fmt& f = *GetParam().format;
  const size_t rows = 6, cols = 1536;
  const std::vector<uint8_t> q4_k = MakeRows(f, rows, cols, false, 51);
  const std::vector<uint8_t> w = ToX16(f, q4_k, rows, cols);
  std::vector<uint8_t> high = w;
  for (size_t g = 0; g < high.size(); g += f.x16_block_bytes) {
    for (size_t j = 0; j < 32; j += 3) high[g + j] |= 0xC0;
  }
  const std::vector<float> x = test::HardActivations(cols, 52);
  std::vector<float> plain(rows), scalar(rows), got(rows), fallback(rows), expected(rows);
  f.scalar(w.data(), x.data(), plain.data(), rows, cols, 0, rows);
  f.scalar(high.data(), x.data(), scalar.data(), rows, cols, 0, rows);
  GetParam().linear(high.data(), x.data(), got.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(DecodeLinearPath::kFloat);
  f.linear(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
  f.linear(high.data(), x.data(), fallback.data(), rows, cols, 0, rows);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(SameBits(plain[r], scalar[r])) << "row " << r;
    EXPECT_TRUE(SameBits(plain[r], got[r])) << "row " << r;
    EXPECT_TRUE(SameBits(expected[r], fallback[r])) << "row " << r;
  }
}

// The largest 16-bit words the AVX2 kernels form: every quant at its maximum
// (15, Q5: 31) and every activation's lowest digit -128 (x = 1 + 2^-22: X =
// 2^29 + 128), so each word adds 8 (Q5: 4) pairs of -3840 (-7936) products:
// -30720 (-31744), the most that fits. Summing more before widening would
// wrap; the kernels must give the twin's bits and the double reference.
TEST_P(KX16KernelTest, LargestQuantsAndDigitsStayExact) {
  const Fmt& f = *GetParam().format;
  const size_t rows = 5, cols = 1536;
  std::vector<uint8_t> plain = MakeRows(f, rows, cols, true, 61);
  for (size_t b = 0; b < plain.size(); b += f.plain_block_bytes) {
    memset(&plain[b + 16], 0xFF, f.plain_block_bytes - 16);  // qs (and Q5's qh): all ones
  }
  const std::vector<uint8_t> w = ToX16(f, plain, rows, cols);
  const std::vector<float> x(cols, 1.0f + ldexpf(1.0f, -22));
  std::vector<float> scalar(rows), got(rows), expected(rows);
  f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
  GetParam().linear(w.data(), x.data(), got.data(), rows, cols, 0, rows);
  f.plain_reference(plain.data(), x.data(), expected.data(), rows, cols, 0, rows);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(SameBits(scalar[r], got[r])) << "row " << r << ": " << scalar[r] << " vs " << got[r];
    EXPECT_NEAR(scalar[r], expected[r],
                DigitsBound(f, &plain[r * f.PlainRowBytes(cols)], x.data(), cols))
        << "row " << r;
  }
}

// A matrix ending just before a PROT_NONE page: nothing past it is read.
TEST_P(KX16KernelTest, ReadsNothingPastTheMatrix) {
  const Fmt& f = *GetParam().format;
  for (size_t cols : {size_t{1536}, size_t{2560}, size_t{4608}}) {
    const size_t rows = 9;
    const std::vector<uint8_t> w = ToX16(f, MakeRows(f, rows, cols, false, 31), rows, cols);
    test::GuardedBytes guarded(w);
    ASSERT_TRUE(guarded.ok());
    const std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 32);
    std::vector<float> scalar(rows), got(rows);
    f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
    for (int into_l2 : {0, 1}) {
      SetDecodePrefetchIntoL2ForTest(into_l2);
      GetParam().linear(guarded.data(), x.data(), got.data(), rows, cols, 0, rows);
      for (size_t r = 0; r < rows; ++r) EXPECT_TRUE(SameBits(scalar[r], got[r])) << "row " << r;
    }
  }
}

TEST_P(KX16KernelTest, NonFiniteActivationsGiveNaN) {
  const Fmt& f = *GetParam().format;
  const size_t rows = 5, cols = 1536;
  const std::vector<uint8_t> w = ToX16(f, MakeRows(f, rows, cols, false, 13), rows, cols);
  for (float bad : {std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 14);
    x[777] = bad;
    std::vector<float> y(rows, 0.0f), scalar(rows, 0.0f);
    GetParam().linear(w.data(), x.data(), y.data(), rows, cols, 0, rows);
    f.scalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      EXPECT_TRUE(isnan(y[r])) << "row " << r;
      EXPECT_TRUE(isnan(scalar[r])) << "row " << r;
    }
  }
}

// Without integer digits in the dispatch (f32; on every Highway target the CPU
// has), Linear is within the f32 bound of the double reference (ops/linear.h,
// k for 4-lane vectors, the loosest) and independent of the row range, and
// LinearRows gives each token Linear's bits.
class KX16FallbackTest : public ::testing::TestWithParam<Fmt> {
 protected:
  void SetUp() override { LimitDecodeLinearPathForTest(DecodeLinearPath::kFloat); }
  void TearDown() override { LimitDecodeLinearPathForTest(DecodeLinearPath::kVnni); }
};

TEST_P(KX16FallbackTest, FloatKernelIsWithinTheBound) {
  const Fmt& f = GetParam();
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
  hwy::SetSupportedTargetsForTest(target);
  uint32_t seed = 200;
  const size_t rows = 37;
  for (size_t cols : {size_t{512}, size_t{1536}, size_t{2560}}) {
    const std::vector<uint8_t> q4_k = MakeRows(f, rows, cols, false, seed++);
    const std::vector<uint8_t> w = ToX16(f, q4_k, rows, cols);
    const std::vector<float> x = test::HardActivations(cols, seed++);
    std::vector<float> dequantized(rows * cols), reference(rows);
    f.dequantize(q4_k.data(), rows * cols, dequantized.data());
    f.plain_reference(q4_k.data(), x.data(), reference.data(), rows, cols, 0, rows);
    std::vector<float> expected(rows, test::Sentinel());
    f.linear(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      double abs_sum = 0.0;
      for (size_t c = 0; c < cols; ++c) {
        abs_sum += fabs(static_cast<double>(dequantized[r * cols + c]) * x[c]);
      }
      EXPECT_NEAR(expected[r], reference[r],
                  test::SumErrorBound(cols, /*lanes=*/4, /*chains=*/4, abs_sum))
          << hwy::TargetName(target) << " cols " << cols << " row " << r;
    }
    test::ExpectRowRangesMatch(
        expected,
        [&](size_t rb, size_t re, float* y) {
          f.linear(w.data(), x.data(), y, rows, cols, rb, re);
        },
        std::string(hwy::TargetName(target)) + " f32 cols " + std::to_string(cols));
    const size_t batch = 3, x_stride = cols + 5, y_stride = rows + 3;
    for (const auto& [rb, re] : {std::pair<size_t, size_t>{3, 21}, {36, 37}, {0, rows}}) {
      std::vector<float> xs(batch * x_stride, test::Sentinel());
      std::vector<float> ys(batch * y_stride, test::Sentinel());
      for (size_t t = 0; t < batch; ++t) {
        const std::vector<float> v = test::RandomFloats(cols, -1.0f, 1.0f, seed++);
        memcpy(&xs[t * x_stride], v.data(), cols * sizeof(float));
      }
      f.rows(w.data(), xs.data(), x_stride, ys.data(), y_stride, batch, rows, cols, rb,
                        re);
      for (size_t t = 0; t < batch; ++t) {
        std::vector<float> alone(rows);
        f.linear(w.data(), &xs[t * x_stride], alone.data(), rows, cols, 0, rows);
        for (size_t r = 0; r < y_stride; ++r) {
          const float got = ys[t * y_stride + r];
          if (r < rb || r >= re) {
            EXPECT_TRUE(isnan(got)) << "token " << t << " row " << r;
          } else {
            EXPECT_TRUE(SameBits(alone[r], got)) << "token " << t << " row " << r;
          }
        }
      }
    }
  }
  }
  hwy::SetSupportedTargetsForTest(0);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KX16KernelTest, ::testing::ValuesIn(kKernels),
                         [](const ::testing::TestParamInfo<Kernel>& info) {
                           return std::string(info.param.name);
                         });

// The prompt's product equals MatMulF32 on the dequantized matrix bit for bit
// (as MatMulQ4_K does), for row ranges and token counts around its panels; the
// gather decodes any slice to the dequantized weights times the scale.
TEST_P(KX16FormatTest, MatMulAndGatherDecodeTheGGUFWeights) {
  const Fmt& f = GetParam();
  const size_t rows = 19, cols = 2560;
  const std::vector<uint8_t> q4_k = MakeRows(f, rows, cols, false, 41);
  const std::vector<uint8_t> w = ToX16(f, q4_k, rows, cols);
  std::vector<float> dequantized(rows * cols);
  f.dequantize(q4_k.data(), rows * cols, dequantized.data());
  // On every Highway target this CPU has (the block decode has 4, 8 and 16-lane forms).
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (size_t batch : {size_t{1}, size_t{7}, size_t{33}}) {
      const std::vector<float> x = test::RandomFloats(batch * cols, -1.0f, 1.0f, 42);
      std::vector<float> expected(batch * rows, test::Sentinel());
      std::vector<float> got(batch * rows, test::Sentinel());
      MatMulF32(dequantized.data(), x.data(), cols, expected.data(), rows, batch, rows, cols, 2,
                17);
      f.matmul(w.data(), x.data(), cols, got.data(), rows, batch, rows, cols, 2, 17);
      for (size_t i = 0; i < batch * rows; ++i) {
        EXPECT_TRUE(SameBits(expected[i], got[i]) || (isnan(expected[i]) && isnan(got[i])))
            << hwy::TargetName(target) << " batch " << batch << " output " << i;
      }
    }
    for (size_t begin : {size_t{0}, size_t{256}, size_t{300}, size_t{2047}}) {
      const size_t count = std::min<size_t>(cols - begin, 513);
      std::vector<float> got(count + 1, test::Sentinel());
      f.gather(w.data(), cols, 11, begin, count, 0.75f, got.data());
      for (size_t c = 0; c < count; ++c) {
        ASSERT_TRUE(SameBits(dequantized[11 * cols + begin + c] * 0.75f, got[c]))
            << hwy::TargetName(target) << " begin " << begin << " column " << c;
      }
      EXPECT_TRUE(isnan(got[count]));
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

INSTANTIATE_TEST_SUITE_P(Formats, KX16FormatTest, ::testing::ValuesIn(kFmts), FmtName);
INSTANTIATE_TEST_SUITE_P(Formats, KX16FallbackTest, ::testing::ValuesIn(kFmts), FmtName);

}  // namespace
}  // namespace ops
}  // namespace cortiq
