// RMS normalization over equal-sized groups of a vector (Gemma-4 input/post
// norms, per-head q/k/v norms, the PLE projection norm and the final norm), and
// its fusion with the residual add and the layer scalar (ResidualRmsNorm).

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

// Sandwich-norm residual (plan step kResidualRmsNorm, op
// cortiq.residual_rms_norm): adds the RMS-normalized x to the residual stream
// and scales the sum. For group g (as RmsNorm):
//
//     m_g = (1 / group_size) * sum_{i in g} x_i^2
//     y_i = (residual_i + x_i * (m_g + eps)^(-1/2) * gain[i - g * group_size])
//           * scalar
//
// Spec §3.3 steps 5-8 (HF Gemma4TextDecoderLayer): h + post_attention_layernorm
// (attn), h + post_feedforward_layernorm(mlp), and (h + post_per_layer_input_
// norm(c')) * layer_scalar; scalar = 1 where no layer scalar follows.
//
// residual, x, y: n f32 (n % group_size == 0, group_size >= 1); gain:
// group_size f32 or nullptr (no gain). Aliasing: y may be the same array as
// residual and/or x (in place); otherwise y must not overlap them or gain.
// Numerics: bit-identical to RmsNorm(x, gain, t, n, group_size, eps), then
// Add(residual, t, t, n), then Scale(t, scalar, y, n) (ops/elementwise.h) on
// every target: the same sum of squares (same accumulators, same order), the
// same f32 (m + eps)^(-1/2), then the f32 operations x * s * gain, + residual,
// * scalar, each rounded separately (rms_norm.cc is compiled with
// -ffp-contract=off, so the compiler does not fuse the add into a multiply-add;
// code that includes rms_norm-inl.h itself needs the same flag). scalar = 1 is
// exact, so it then also equals RmsNorm followed by Add.
void ResidualRmsNorm(const float* residual, const float* x, const float* gain,
                     float scalar, float* y, size_t n, size_t group_size,
                     float eps);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_RMS_NORM_H_
