// Element-wise f32 vector kernels: GELU (tanh approximation), product, sum,
// scaling, the final-logit soft cap, and the fused GELU-times-product of the
// MLP and PLE gates.
//
// All functions: x, a, b, y hold n f32 values (n >= 0, no alignment required).
// y may be the same array as an input (in place); it must not partially overlap
// one.

#ifndef CORTIQ_OPS_ELEMENTWISE_H_
#define CORTIQ_OPS_ELEMENTWISE_H_

#include <stddef.h>

namespace cortiq {
namespace ops {

// GELU, tanh approximation (HF `gelu_pytorch_tanh`, spec §3.0 gelu_t; the MLP
// gate and the PLE gate activation):
//
//     y_i = 0.5 x_i (1 + tanh(sqrt(2/pi) (x_i + 0.044715 x_i^3)))
//
// Evaluated in the algebraically identical form x / (1 + exp(-2u)),
// u = sqrt(2/pi) (x + 0.044715 x^3), which avoids the cancellation of
// 1 + tanh(u) for negative x. Measured against the double reference: absolute
// error < 5e-7 on [-12, 12], relative error < 1e-6 for x >= -3; below that the
// relative error grows like |2u| * 2^-24 (the f32 rounding of u, as in any f32
// evaluation) while |y| < 4e-3. Where -2u >= 88 (x <~ -10, |y| < 1e-37) y = 0;
// large positive x gives y = x. Never NaN or inf for finite x.
void GeluTanh(const float* x, float* y, size_t n);

// Fused gate (plan step kGeluTanhMul, op cortiq.gelu_tanh_mul):
//
//     y_i = gelu_tanh(gate_i) * up_i
//
// HF Gemma4TextMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)) with act_fn =
// gelu_pytorch_tanh (spec §3.3 step 6); the PLE gate of spec §3.3 step 7
// (gelu_t(W_plig h) * u_l).
// gate, up, y: n f32 each; y may be the same array as gate and/or up.
// Numerics: bit-identical to GeluTanh(gate, t, n) followed by Mul(t, up, y, n)
// on every target (the same GeluTanh vector formula, then one f32 multiply,
// rounded once); accuracy therefore that of GeluTanh plus one rounding.
void GeluTanhMul(const float* gate, const float* up, float* y, size_t n);

// y_i = a_i * b_i (exact f32 product, rounded once).
void Mul(const float* a, const float* b, float* y, size_t n);

// y_i = a_i + b_i (exact f32 sum, rounded once). Residual connections.
void Add(const float* a, const float* b, float* y, size_t n);

// y_i = x_i * s (rounded once). E.g. the per-layer scalar (spec §3.3 step 8).
void Scale(const float* x, float s, float* y, size_t n);

// y_i = cap * tanh(x_i / cap), cap > 0 (HF `final_logit_softcapping`, spec
// §3.4: cap = 30). Saturates to +-cap for large |x| (including +-inf); tanh via
// Highway's Tanh (<= 4 ulp).
void Softcap(const float* x, float cap, float* y, size_t n);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_ELEMENTWISE_H_
