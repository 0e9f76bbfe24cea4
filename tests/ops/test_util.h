// Helpers shared by the ops/ kernel tests: deterministic random inputs, bf16
// conversion, the f32 unit roundoff and the summation error bound the
// tolerances are derived from. Plain (not per-target) code; callable from
// per-target test functions.

#ifndef CORTIQ_TESTS_OPS_TEST_UTIL_H_
#define CORTIQ_TESTS_OPS_TEST_UTIL_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <limits>
#include <random>
#include <vector>

#include "hwy/base.h"
#include "ops/reference.h"

namespace cortiq {
namespace ops {
namespace test {

// Unit roundoff of f32 round-to-nearest: 2^-24.
constexpr double kU = 1.0 / 16777216.0;

// A quiet NaN used to pre-fill outputs, so elements a kernel must not write
// stay detectable.
inline float Sentinel() { return std::numeric_limits<float>::quiet_NaN(); }

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

}  // namespace test
}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_TESTS_OPS_TEST_UTIL_H_
