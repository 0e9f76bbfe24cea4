// PortableExp: exp(x) for the sampler's softmax numerators, computed with IEEE-754 additions,
// multiplications and exact conversions only, so that it returns the same bits on every machine
// and C library (libm's expf/exp differ between glibc, musl, macOS and versions of each; the
// token a seeded draw picks depends on these values).
//
// The library is compiled with -ffp-contract=off (runtime/sampling/CMakeLists.txt): a fused
// multiply-add rounds once where the code rounds twice, and GCC contracts by default in GNU mode
// on targets that have FMA. The build rejects targets with excess floating-point precision
// (FLT_EVAL_METHOD != 0, e.g. x87).
#ifndef CORTIQ_RUNTIME_SAMPLING_PORTABLE_EXP_H_
#define CORTIQ_RUNTIME_SAMPLING_PORTABLE_EXP_H_

#include <cstdint>

namespace cortiq {
namespace sampling {

// exp(x) for x <= 0, in f32: Cody-Waite reduction x = n ln2 + r (ln2 split into 0.693359375 +
// -2.12194440e-4, so n * hi is exact), the degree-5 minimax polynomial of Cephes expf
// (S. Moshier, Cephes Math Library, expf.c) for exp(r) on |r| <= ln2/2, and the exact scaling by
// 2^n. Relative error <= 2^-22 (tested against double exp). x > 0 is clamped to 0 (result 1), and
// x < -87 (below which exp(x) < 1.7e-38 would need subnormals, which flush-to-zero hosts lose)
// and x = -inf give 0. PortableExp(0) == 1 exactly. x must not be NaN.
float PortableExp(float x);

// out[i] = PortableExp((x[i] - shift) / divisor) for i in [0, n): the softmax numerators of
// logits x with maximum `shift` at temperature `divisor` (> 0). Bit-identical to calling
// PortableExp per element (the loop is vectorized by the compiler with the same operations).
// `out` may alias `x`.
void PortableExpShifted(const float* x, int64_t n, float shift, float divisor, float* out);

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_PORTABLE_EXP_H_
