// Tests the exact integer decode product of Q6_K weights (ops/linear_vnni.h,
// LinearQ6_KVnni / LinearQ6_KAvx2 / LinearQ6_KDigitsScalar): the scalar twin
// against the double reference LinearQ6_KReference within the header's bound
// (exactly on small integers), and the VNNI and AVX2 kernels (where the CPU
// has them) against the twin bit for bit, for row lengths of whole and
// partial 512-column groups, in row ranges, as the dispatched LinearQ6_K,
// next to an unreadable page and on non-finite activations.

#include <math.h>
#include <stdint.h>
#include <string.h>

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

// Q6_K rows: quantized random values (sub-blocks of differing scale), or raw
// random bytes with a finite f16 d of a random binade.
std::vector<uint8_t> MakeQ6_K(size_t rows, size_t cols, bool raw, uint32_t seed) {
  std::vector<uint8_t> w(rows * Q6_KRowBytes(cols));
  std::mt19937 rng(seed);
  if (raw) {
    for (uint8_t& byte : w) byte = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> mag(-16.0f, 0.0f);
    for (size_t b = 0; b < w.size(); b += kQ6_KBlockBytes) {
      const uint16_t h = F32ToF16Bits(exp2f(mag(rng)) * (rng() % 4 ? 1.0f : -1.0f));
      memcpy(&w[b + 208], &h, 2);
    }
  } else {
    std::vector<float> values = test::RandomFloats(rows * cols, -1.0f, 1.0f, seed);
    for (size_t i = 0; i < values.size(); i += 16) {
      const float s = ldexpf(1.0f, static_cast<int>(rng() % 9) - 6);
      for (size_t k = i; k < i + 16; ++k) values[k] *= s;
    }
    for (size_t r = 0; r < rows; ++r) {
      QuantizeRowQ6_K(&values[r * cols], cols, &w[r * Q6_KRowBytes(cols)]);
    }
  }
  return w;
}

// The 6-bit quant of weight i of a super-block (ggml's dequantize_row_q6_K).
int Quant6(const uint8_t* sb, size_t i) {
  const size_t h = i / 128, t = (i % 128) / 32, l = i % 32;
  const uint8_t low = sb[64 * h + 32 * (t % 2) + l];
  const int nibble = t < 2 ? (low & 0x0F) : (low >> 4);
  return nibble | (((sb[128 + 32 * h + l] >> (2 * t)) & 3) << 4);
}

// The header's bound with T_c = |d sc_c| (q_c + 32): 2^-30 sum_c T_c
// max(max_block |x|, 2^-97) + k 2^-24 sum_c T_c |x_c|, k = cols / 512 + 15.
double Q6_KBound(const uint8_t* row, const float* x, size_t cols) {
  double weight_term = 0.0, product_term = 0.0;
  for (size_t b = 0; b < cols / kSuperBlockSize; ++b) {
    const uint8_t* sb = row + b * kQ6_KBlockBytes;
    uint16_t d_bits;
    memcpy(&d_bits, sb + 208, 2);
    const double d = F16BitsToF32(d_bits);
    for (size_t c = 256 * b; c < 256 * b + 256; ++c) {
      const size_t i = c - 256 * b, block = c / 32;
      double max = 0.0;
      for (size_t k = 32 * block; k < 32 * block + 32; ++k) max = fmax(max, fabs(x[k]));
      const double t = fabs(d * static_cast<int8_t>(sb[192 + i / 16])) * (Quant6(sb, i) + 32);
      weight_term += t * fmax(max, ldexp(1.0, -97));
      product_term += t * fabs(x[c]);
    }
  }
  const double k = static_cast<double>(cols / 512) + 15.0;
  return ldexp(weight_term, -30) + k * test::kU / (1.0 - k * test::kU) * product_term;
}

const size_t kColumns[] = {256, 512, 768, 1536, 2560, 6400, 12288};

template <class F>
void ForEachCase(size_t rows, uint32_t seed, F&& fn) {
  for (size_t cols : kColumns) {
    for (bool raw : {false, true}) {
      const std::vector<uint8_t> w = MakeQ6_K(rows, cols, raw, seed++);
      for (bool hard : {false, true}) {
        const std::vector<float> x = hard ? test::HardActivations(cols, seed++)
                                          : test::RandomFloats(cols, -2.0f, 2.0f, seed++);
        fn(cols, raw, hard, w, x);
      }
    }
  }
}

using test::SameBits;

TEST(Q6_KDigitsTest, ScalarMatchesTheDoubleReference) {
  const size_t rows = 5;
  ForEachCase(rows, 1, [&](size_t cols, bool raw, bool hard, const std::vector<uint8_t>& w,
                           const std::vector<float>& x) {
    std::vector<float> expected(rows), y(rows, test::Sentinel());
    LinearQ6_KReference(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
    LinearQ6_KDigitsScalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      EXPECT_NEAR(y[r], expected[r], Q6_KBound(&w[r * Q6_KRowBytes(cols)], x.data(), cols))
          << "cols " << cols << " raw " << raw << " hard " << hard << " row " << r;
    }
  });
}

// Small integer activations and d = 1/2: every digit sum and f32 step is
// exact, so the result equals the double reference exactly.
TEST(Q6_KDigitsTest, SmallIntegersAreExact) {
  const size_t rows = 7, cols = 1280;
  std::vector<uint8_t> w = MakeQ6_K(rows, cols, true, 77);
  for (size_t b = 0; b < w.size(); b += kQ6_KBlockBytes) {
    const uint16_t half = 0x3800;
    memcpy(&w[b + 208], &half, 2);
  }
  std::vector<float> x(cols);
  for (size_t c = 0; c < cols; ++c) x[c] = static_cast<float>(static_cast<int>((c * 7) % 5) - 2);
  std::vector<float> expected(rows), y(rows), dispatched(rows);
  LinearQ6_KReference(w.data(), x.data(), expected.data(), rows, cols, 0, rows);
  LinearQ6_KDigitsScalar(w.data(), x.data(), y.data(), rows, cols, 0, rows);
  LinearQ6_K(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_EQ(expected[r], y[r]) << "row " << r;
    EXPECT_EQ(expected[r], dispatched[r]) << "row " << r;
  }
}

using Q6_KKernel = void (*)(const void*, const float*, float*, size_t, size_t, size_t, size_t);

struct Q6_KPath {
  const char* name;
  DecodeLinearPath path;
  Q6_KKernel kernel;
};

const Q6_KPath kPaths[] = {
    {"vnni", DecodeLinearPath::kVnni, &LinearQ6_KVnni},
    {"avx2", DecodeLinearPath::kAvx2, &LinearQ6_KAvx2},
};

void PrintTo(const Q6_KPath& path, std::ostream* os) { *os << path.name; }

// Each integer kernel, where the CPU has its path; the dispatch limited to
// that path, so that LinearQ6_K runs it too.
class Q6_KIntegerTest : public ::testing::TestWithParam<Q6_KPath> {
 protected:
  void SetUp() override {
    if (static_cast<int>(DispatchedDecodeLinearPath()) > static_cast<int>(GetParam().path)) {
      GTEST_SKIP() << "no " << GetParam().name << " on this CPU (the f32 kernels are tested by "
                   << "ops_kernels_q6_k_test)";
    }
    LimitDecodeLinearPathForTest(GetParam().path);
  }
  void TearDown() override {
    LimitDecodeLinearPathForTest(DecodeLinearPath::kVnni);
    SetDecodePrefetchIntoL2ForTest(-1);  // also after a failed ASSERT
  }
  void Kernel(const void* w, const float* x, float* y, size_t rows, size_t cols, size_t rb,
              size_t re) {
    GetParam().kernel(w, x, y, rows, cols, rb, re);
  }
};

// The kernel, the dispatched LinearQ6_K and every row range give the twin's bits.
// Both row streamings (DecodePrefetchIntoL2: passes of four rows with 0 to 3
// rows left, or one at a time and in column blocks).
TEST_P(Q6_KIntegerTest, MatchesTheScalarBits) {
  const size_t rows = 21;
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    ForEachCase(rows, 100, [&](size_t cols, bool raw, bool hard, const std::vector<uint8_t>& w,
                               const std::vector<float>& x) {
      std::vector<float> scalar(rows), got(rows), dispatched(rows);
      LinearQ6_KDigitsScalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
      Kernel(w.data(), x.data(), got.data(), rows, cols, 0, rows);
      LinearQ6_K(w.data(), x.data(), dispatched.data(), rows, cols, 0, rows);
      for (size_t r = 0; r < rows; ++r) {
        EXPECT_TRUE(SameBits(scalar[r], got[r])) << "cols " << cols << " raw " << raw << " hard "
                                                 << hard << " row " << r << ": " << scalar[r]
                                                 << " vs " << got[r];
        EXPECT_TRUE(SameBits(scalar[r], dispatched[r])) << "cols " << cols << " row " << r;
      }
      for (size_t rb : {size_t{0}, size_t{5}}) {
        for (size_t re : {rb, rb + 1, rb + 6, rb + 7, size_t{21}}) {
          std::vector<float> y(rows, test::Sentinel());
          Kernel(w.data(), x.data(), y.data(), rows, cols, rb, re);
          for (size_t r = 0; r < rows; ++r) {
            if (r < rb || r >= re) {
              EXPECT_TRUE(isnan(y[r])) << "row " << r << " outside the range";
            } else {
              EXPECT_TRUE(SameBits(scalar[r], y[r]))
                  << "cols " << cols << " range row " << r << " into_l2 " << into_l2;
            }
          }
        }
      }
    });
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

// The kernel reads no byte past the matrix: the last row ends at a
// PROT_NONE page (4352 columns: the VNNI kernel's column blocks, two row
// blocks).
TEST_P(Q6_KIntegerTest, ReadsNothingPastTheMatrix) {
  for (int into_l2 : {0, 1}) {
    for (size_t cols : {size_t{768}, size_t{1024}, size_t{4352}}) {
      SetDecodePrefetchIntoL2ForTest(into_l2);
      const size_t rows = 19;
      const test::GuardedBytes guarded(MakeQ6_K(rows, cols, false, 31));
      ASSERT_TRUE(guarded.ok());
      const uint8_t* w = guarded.data();
      const std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 32);
      std::vector<float> scalar(rows), got(rows);
      LinearQ6_KDigitsScalar(w, x.data(), scalar.data(), rows, cols, 0, rows);
      Kernel(w, x.data(), got.data(), rows, cols, 0, rows);
      for (size_t r = 0; r < rows; ++r) EXPECT_TRUE(SameBits(scalar[r], got[r])) << "row " << r;
      // Rows [3, 19): with into_l2, four passes of four, the last one ending at the guard.
      std::vector<float> tail(rows, 0.0f);
      Kernel(w, x.data(), tail.data(), rows, cols, 3, rows);
      for (size_t r = 3; r < rows; ++r) {
        EXPECT_TRUE(SameBits(scalar[r], tail[r])) << "tail row " << r << " into_l2 " << into_l2;
      }
    }
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

// Non-finite activations make the block scale NaN, so every row is NaN.
TEST_P(Q6_KIntegerTest, NonFiniteActivationsGiveNaN) {
  const size_t rows = 4, cols = 1536;
  const std::vector<uint8_t> w = MakeQ6_K(rows, cols, false, 5);
  for (float bad : {std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> x = test::RandomFloats(cols, -1.0f, 1.0f, 6);
    x[900] = bad;
    std::vector<float> scalar(rows), got(rows);
    LinearQ6_KDigitsScalar(w.data(), x.data(), scalar.data(), rows, cols, 0, rows);
    Kernel(w.data(), x.data(), got.data(), rows, cols, 0, rows);
    for (size_t r = 0; r < rows; ++r) {
      EXPECT_TRUE(isnan(scalar[r])) << "row " << r;
      EXPECT_TRUE(isnan(got[r])) << "row " << r;
    }
  }
}

// Limited to the f32 path, LinearQ6_K runs the Highway kernel (not the digit
// arithmetic: its bits differ on hard activations).
TEST_P(Q6_KIntegerTest, TheTestLimitSelectsTheFloatKernel) {
  const size_t rows = 16, cols = 1536;
  const std::vector<uint8_t> w = MakeQ6_K(rows, cols, false, 11);
  const std::vector<float> x = test::HardActivations(cols, 12);
  std::vector<float> digits(rows), f32(rows);
  LinearQ6_K(w.data(), x.data(), digits.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(DecodeLinearPath::kFloat);
  LinearQ6_K(w.data(), x.data(), f32.data(), rows, cols, 0, rows);
  LimitDecodeLinearPathForTest(GetParam().path);
  size_t differ = 0;
  for (size_t r = 0; r < rows; ++r) differ += SameBits(digits[r], f32[r]) ? 0 : 1;
  EXPECT_GT(differ, 0u);
}

INSTANTIATE_TEST_SUITE_P(Paths, Q6_KIntegerTest, ::testing::ValuesIn(kPaths),
                         [](const ::testing::TestParamInfo<Q6_KPath>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace ops
}  // namespace cortiq
