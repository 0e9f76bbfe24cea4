// Helpers shared by the ops/ kernel tests: deterministic random inputs, bf16
// conversion, the f32 unit roundoff and the summation error bound the
// tolerances are derived from. Plain (not per-target) code; callable from
// per-target test functions.

#ifndef CORTIQ_TESTS_OPS_TEST_UTIL_H_
#define CORTIQ_TESTS_OPS_TEST_UTIL_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/base.h"
#include "ops/cpu_features.h"
#include "ops/quantize.h"
#include "ops/quantize_k.h"
#include "ops/reference.h"

namespace cortiq {
namespace ops {
namespace test {

// Unit roundoff of f32 round-to-nearest: 2^-24.
constexpr double kU = 1.0 / 16777216.0;

// A quiet NaN used to pre-fill outputs, so elements a kernel must not write
// stay detectable.
inline float Sentinel() { return std::numeric_limits<float>::quiet_NaN(); }

// Whether a and b are the same f32 bits (+0 and -0 differ).
inline bool SameBits(float a, float b) { return memcmp(&a, &b, sizeof(a)) == 0; }

// A copy of `content` whose last byte is followed by a PROT_NONE page, so a
// kernel that reads one byte past it faults. ok() is false if the mapping
// failed (the test then asserts on it).
class GuardedBytes {
 public:
  explicit GuardedBytes(const std::vector<uint8_t>& content) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mapped_ = (content.size() + page - 1) / page * page + page;
    void* region =
        mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return;
    region_ = static_cast<uint8_t*>(region);
    uint8_t* guard = region_ + mapped_ - page;
    if (mprotect(guard, page, PROT_NONE) != 0) return;
    data_ = guard - content.size();
    memcpy(data_, content.data(), content.size());
  }
  ~GuardedBytes() {
    if (region_ != nullptr) munmap(region_, mapped_);
  }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;

  bool ok() const { return data_ != nullptr; }
  const uint8_t* data() const { return data_; }

 private:
  uint8_t* region_ = nullptr;
  size_t mapped_ = 0;
  uint8_t* data_ = nullptr;
};

// A kernel's row ranges against its whole-matrix result `expected` (one float
// per row): for ranges [rb, re) with rb in {0, 3, 12} and re from rb (empty)
// to all rows, run(rb, re, y) fills rows [rb, re) of y (pre-filled with
// Sentinel()); rows outside must stay NaN, rows inside have expected's bits.
// `what` starts each failure message.
template <class Run>
void ExpectRowRangesMatch(const std::vector<float>& expected, Run run, const std::string& what) {
  const size_t rows = expected.size();
  for (size_t rb : {size_t{0}, size_t{3}, size_t{12}}) {
    if (rb > rows) continue;
    for (size_t re : {rb, rb + 1, rb + 2, rb + 7, rb + 17, rows}) {
      if (re > rows) continue;
      std::vector<float> y(rows, Sentinel());
      run(rb, re, y.data());
      for (size_t r = 0; r < rows; ++r) {
        if (r < rb || r >= re) {
          EXPECT_TRUE(isnan(y[r])) << what << " row " << r << " outside [" << rb << ", " << re
                                   << ")";
        } else {
          EXPECT_TRUE(SameBits(expected[r], y[r]))
              << what << " row " << r << " of range [" << rb << ", " << re << ")";
        }
      }
    }
  }
}

// n floats uniform in [lo, hi), deterministic for a given seed.
inline std::vector<float> RandomFloats(size_t n, float lo, float hi,
                                       uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

// Rounds each value to bf16 (round to nearest even).
inline std::vector<hwy::bfloat16_t> ToBF16(const std::vector<float>& v) {
  std::vector<hwy::bfloat16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = F32ToBF16(v[i]);
  return out;
}

// Widens bf16 values exactly to f32.
inline std::vector<float> ToF32(const std::vector<hwy::bfloat16_t>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = BF16ToF32(v[i]);
  return out;
}

// Bound on the rounding error of an f32 sum of n products computed as `chains`
// interleaved accumulators of `lanes` lanes, then a tree reduction (Higham,
// Accuracy and Stability of Numerical Algorithms, §3.1):
//
//     |computed - exact| <= gamma_k * sum_i |a_i b_i|
//     gamma_k = k u / (1 - k u)
//
// with k = ceil(n / (chains * lanes)) (the longest chain; an FMA rounds once
// per step), + 1 for the tail, + 2 for combining the chains, + log2(lanes) for
// the horizontal sum, + 1 for the reference's own rounding to f32.
// Returns gamma_k * abs_sum.
inline double SumErrorBound(size_t n, size_t lanes, size_t chains,
                            double abs_sum) {
  const size_t per_step = lanes * chains;
  double k = static_cast<double>((n + per_step - 1) / per_step) + 4.0;
  for (size_t l = lanes; l > 1; l /= 2) k += 1.0;
  return k * kU / (1.0 - k * kU) * abs_sum;
}

// The unsigned quant of weight i (< 256) of a Q4_K super-block, or with
// fifth_bit of a Q5_K one (ggml's dequantize_row_q4_K / q5_K).
inline int KQuant(const uint8_t* sb, size_t i, bool fifth_bit) {
  const size_t chunk = i / 64, h = (i % 64) / 32, l = i % 32;
  const uint8_t byte = sb[(fifth_bit ? 48 : 16) + 32 * chunk + l];
  int q = h == 0 ? (byte & 15) : (byte >> 4);
  if (fifth_bit) q |= ((sb[16 + l] >> (2 * chunk + h)) & 1) << 4;
  return q;
}

// The exact integer digits' bound for Q4_K / Q5_K rows (ops/linear_vnni.h,
// the K formats and their x16 regroupings): with T_c = |d sc q_c| + |dmin m|
// (the two terms of weight c), 2^-30 sum_c T_c max(max_block |x|, 2^-97) +
// k 2^-24 sum_c T_c |x_c|, k = cols / 512 + 15 (the combine, the lanes' sums,
// the tree, the reference's own rounding). row: cols / 256 super-blocks of
// block_bytes.
inline double KDigitsBound(const uint8_t* row, size_t block_bytes, bool fifth_bit,
                           const float* x, size_t cols) {
  double weight_term = 0.0, product_term = 0.0;
  for (size_t b = 0; b < cols / kSuperBlockSize; ++b) {
    const uint8_t* sb = row + b * block_bytes;
    uint16_t d_bits, dmin_bits;
    memcpy(&d_bits, sb, 2);
    memcpy(&dmin_bits, sb + 2, 2);
    const double d = F16BitsToF32(d_bits), dmin = F16BitsToF32(dmin_bits);
    for (size_t k = 0; k < 8; ++k) {
      int sc, m;
      KScaleMin(sb + 4, k, &sc, &m);
      const size_t c0 = 256 * b + 32 * k;
      double max = 0.0;
      for (size_t c = c0; c < c0 + 32; ++c) max = fmax(max, fabs(x[c]));
      for (size_t c = c0; c < c0 + 32; ++c) {
        const double t = fabs(d * sc * KQuant(sb, c - 256 * b, fifth_bit)) + fabs(dmin * m);
        weight_term += t * fmax(max, ldexp(1.0, -97));
        product_term += t * fabs(x[c]);
      }
    }
  }
  const double k = static_cast<double>(cols / 512) + 15.0;
  return ldexp(weight_term, -30) + k * kU / (1.0 - k * kU) * product_term;
}

// Activations with the features that stress block fixed point (the exact
// integer decode kernels, ops/linear_vnni.h): blocks whose
// values span many binades (outliers x 300, tiny values x 1e-4), zero blocks,
// subnormal-only blocks, single-value blocks, huge values.
inline std::vector<float> HardActivations(size_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(cols);
  for (size_t c = 0; c < cols; ++c) {
    float v = u(rng);
    if (rng() % 50 == 0) v *= 300.0f;
    if (rng() % 7 == 0) v *= 1e-4f;
    x[c] = v;
  }
  for (size_t block = 0; block * 32 < cols; ++block) {
    float* b = &x[block * 32];
    switch (block % 11) {
      case 3:  // zero block
        for (int i = 0; i < 32; ++i) b[i] = 0.0f;
        break;
      case 5:  // subnormals only
        for (int i = 0; i < 32; ++i) b[i] = ldexpf(u(rng), -130);
        break;
      case 7:  // one value
        for (int i = 0; i < 32; ++i) b[i] = i == 9 ? -2.5e-3f : 0.0f;
        break;
      case 9:  // huge values
        for (int i = 0; i < 32; ++i) b[i] = u(rng) * 1e30f;
        break;
      case 10:  // exact powers of two and ties at the rounding point
        for (int i = 0; i < 32; ++i) b[i] = ldexpf(i % 2 ? 1.0f : -1.0f, -(i % 24));
        break;
    }
  }
  return x;
}

// Checks that each `rows` kernel (y [batch, rows] = W x_t for token rows x [batch, cols], with
// strides past both) gives every token the bits `linear` gives that token alone on rows
// [rb, re) and writes no other row (left NaN): batches of 1, 2, 5 and 17 tokens, the decode
// prefetch into L1 and into L2 (ops/cpu_features.h). `label` names the case in failures.
template <class LinearFn, class RowsFn>
void ExpectRowsKeepTheBitsOfLinear(const LinearFn& linear, std::initializer_list<RowsFn> kernels,
                                   const uint8_t* w, size_t rows, size_t cols, size_t rb,
                                   size_t re, const std::string& label) {
  for (int into_l2 : {0, 1}) {
    SetDecodePrefetchIntoL2ForTest(into_l2);
    for (size_t batch : {size_t{1}, size_t{2}, size_t{5}, size_t{17}}) {
      const size_t x_stride = cols + 16, y_stride = rows + 2;
      std::vector<float> x(batch * x_stride, Sentinel());
      for (size_t t = 0; t < batch; ++t) {
        const std::vector<float> v = HardActivations(cols, static_cast<uint32_t>(20 + t));
        memcpy(&x[t * x_stride], v.data(), cols * sizeof(float));
      }
      int variant = 0;
      for (const RowsFn& kernel : kernels) {
        std::vector<float> y(batch * y_stride, Sentinel());
        kernel(w, x.data(), x_stride, y.data(), y_stride, batch, rows, cols, rb, re);
        for (size_t t = 0; t < batch; ++t) {
          std::vector<float> alone(rows, Sentinel());
          linear(w, &x[t * x_stride], alone.data(), rows, cols, rb, re);
          for (size_t r = 0; r < y_stride; ++r) {
            const float got = y[t * y_stride + r];
            if (r < rb || r >= re) {
              EXPECT_TRUE(isnan(got)) << label << " batch " << batch << " token " << t
                                      << " row " << r;
            } else {
              EXPECT_TRUE(SameBits(alone[r], got))
                  << label << " batch " << batch << " variant " << variant << " token " << t
                  << " row " << r << " into_l2 " << into_l2;
            }
          }
        }
        ++variant;
      }
    }
  }
  SetDecodePrefetchIntoL2ForTest(-1);
}

}  // namespace test
}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_TESTS_OPS_TEST_UTIL_H_
