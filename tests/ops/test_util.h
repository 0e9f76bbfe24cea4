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

}  // namespace test
}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_TESTS_OPS_TEST_UTIL_H_
