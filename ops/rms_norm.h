// RMS normalization over equal-sized groups of a vector (Gemma-4 input/post
// norms, per-head q/k/v norms, the PLE projection norm and the final norm).

#ifndef CORTIQ_OPS_RMS_NORM_H_
#define CORTIQ_OPS_RMS_NORM_H_

#include <stddef.h>

namespace cortiq {
namespace ops {

// RMS-normalizes each group of x. x is n floats split into n / group_size
// consecutive groups (group_size >= 1, n % group_size == 0). For group g:
//
//     m_g = (1 / group_size) * sum_{i in g} x_i^2
//     y_i = x_i * (m_g + eps)^(-1/2) * gain[i - g * group_size]
//
// gain has group_size f32 entries shared by all groups, or is nullptr for no
// gain (the scale-less v_norm). Plain gain, never (1 + gain): spec §3.0 and §4,
// HF `Gemma4RMSNorm` (x * torch.pow(mean(x^2) + eps, -0.5), then * weight).
// Gemma-4 uses eps = 1e-6 for every norm. The per-head q/k/v norms are one
// call: q of [num_heads, head_dim] is n = num_heads * head_dim with
// group_size = head_dim.
//
// Aliasing: y may equal x (in place); otherwise y must not overlap x or gain.
// Precision: sum of squares in f32 vector accumulators, (m + eps)^(-1/2) in
// double, then two f32 multiplies as in HF; within a few f32 ulp of the double
// reference RmsNormReference.
void RmsNorm(const float* x, const float* gain, float* y, size_t n,
             size_t group_size, float eps);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_RMS_NORM_H_
