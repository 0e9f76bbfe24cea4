// Plain scalar reference implementations of every ops/ kernel, computing in
// double and rounding once to f32. Slow; for tests (these and other layers'
// golden comparisons) only.
//
// Each function has the signature, shapes and aliasing rules of the kernel it
// mirrors (see that kernel's header for the formula and its source); only the
// differences are noted here. RopeCosSin (ops/rope.h) is itself scalar double
// code and has no separate reference.

#ifndef CORTIQ_OPS_REFERENCE_H_
#define CORTIQ_OPS_REFERENCE_H_

#include <stddef.h>

#include "hwy/base.h"  // hwy::bfloat16_t

namespace cortiq {
namespace ops {

// ops/linear.h. Sums the products in double, in column order.
void LinearF32Reference(const float* w, const float* x, float* y, size_t rows,
                        size_t cols, size_t row_begin, size_t row_end);
void LinearBF16Reference(const hwy::bfloat16_t* w, const float* x, float* y,
                         size_t rows, size_t cols, size_t row_begin,
                         size_t row_end);
// ops/linear.h LinearQ8_0 / LinearQ4_0. Each weight is decoded on its own from
// the block definition (d * q, or d * (nibble - 8), with d widened from f16),
// and the products are summed in double, in column order.
void LinearQ8_0Reference(const void* w, const float* x, float* y, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end);
void LinearQ4_0Reference(const void* w, const float* x, float* y, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end);

// ops/matmul.h: Y = X W^T over `batch` token rows, row t of y being the
// Linear*Reference of row t of x (products summed in double, in column order,
// quantized weights decoded one at a time), rounded once to f32. Writes only
// y[t * y_stride + r] for t < batch, r in [row_begin, row_end).
void MatMulF32Reference(const float* w, const float* x, size_t x_stride,
                        float* y, size_t y_stride, size_t batch, size_t rows,
                        size_t cols, size_t row_begin, size_t row_end);
void MatMulBF16Reference(const hwy::bfloat16_t* w, const float* x,
                         size_t x_stride, float* y, size_t y_stride,
                         size_t batch, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end);
void MatMulQ8_0Reference(const void* w, const float* x, size_t x_stride,
                         float* y, size_t y_stride, size_t batch, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end);
void MatMulQ4_0Reference(const void* w, const float* x, size_t x_stride,
                         float* y, size_t y_stride, size_t batch, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end);

// ops/matmul_q8_activations.h, straight from its formula: each token's 32-column blocks
// quantized (amax / 127, round-to-nearest-even of x * 127 / amax), per row the exact integer
// dot product of each block with the weight block's signed quants (Q8_0 q, Q4_0 nibble - 8),
// accumulated from 0 in block order by fmaf(d_w * d_x, isum, acc). q4_0: Q4_0 weights, else Q8_0.
void MatMulQ8ActivationsReference(bool q4_0, const void* w, const float* x, size_t x_stride,
                                  float* y, size_t y_stride, size_t batch, size_t rows,
                                  size_t cols, size_t row_begin, size_t row_end);

// ops/matmul_bf16_activations.h, straight from its formula: each activation rounded to bf16
// (subnormals read as zero, round to nearest even), then per (token, row) the chain over column
// pairs acc = (acc + w_odd * x_odd) + w_even * x_even in f32 with subnormal inputs and results
// flushed to zero, acc from 0 (a zero column appended when cols is odd). w: bf16 bits [rows, cols].
void MatMulBF16ActivationsReference(const uint16_t* w, const float* x, size_t x_stride, float* y,
                                    size_t y_stride, size_t batch, size_t rows, size_t cols,
                                    size_t row_begin, size_t row_end);

// ops/linear.h, ops/matmul.h and ops/gather.h for F16 weights and the other
// block formats: each row is dequantized by the format's DequantizeRow*
// (ops/quantize.h, ops/quantize_legacy.h, ops/quantize_k.h,
// ops/quantize_iq4.h: llama.cpp's dequantizers bit for bit, every weight the
// exact value of its block's formula rounded at most once), then, as above,
// the products are summed in double in column order (Linear, MatMul) or
// scale * w is formed in double (GatherRow), and rounded once to f32.
#define CORTIQ_DECLARE_FORMAT_REFERENCES(NAME, WT)                             \
  void Linear##NAME##Reference(const WT* w, const float* x, float* y,          \
                               size_t rows, size_t cols, size_t row_begin,     \
                               size_t row_end);                                \
  void MatMul##NAME##Reference(const WT* w, const float* x, size_t x_stride,   \
                               float* y, size_t y_stride, size_t batch,        \
                               size_t rows, size_t cols, size_t row_begin,     \
                               size_t row_end);                                \
  void GatherRow##NAME##Reference(const WT* table, size_t cols, size_t row,    \
                                  size_t col_begin, size_t count, float scale, \
                                  float* y);
CORTIQ_DECLARE_FORMAT_REFERENCES(F16, hwy::float16_t)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q4_0x16, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q8_0x16, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q4_Kx16, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q5_Kx16, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q4_1, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q5_0, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q5_1, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(IQ4_NL, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q2_K, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q3_K, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q4_K, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q5_K, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(Q6_K, void)
CORTIQ_DECLARE_FORMAT_REFERENCES(IQ4_XS, void)
#undef CORTIQ_DECLARE_FORMAT_REFERENCES

// ops/rms_norm.h. Mean square, root and both products in double.
void RmsNormReference(const float* x, const float* gain, float* y, size_t n,
                      size_t group_size, float eps);
// ops/rms_norm.h ResidualRmsNorm. Mean square, root, products, the residual
// sum and the scalar product all in double, rounded once.
void ResidualRmsNormReference(const float* residual, const float* x,
                              const float* gain, float scalar, float* y,
                              size_t n, size_t group_size, float eps);

// ops/rope.h. Rotation in double from the given f32 cos/sin.
void ApplyRopeReference(float* x, size_t num_heads, size_t head_dim,
                        size_t rotated_pairs, const float* cos,
                        const float* sin);

// ops/attention.h, without the scratch argument (allocates its own). Scores,
// softmax and the weighted sum in double, in row order.
void AttentionReference(const float* q, const float* k_rows,
                        const float* v_rows, size_t num_rows, size_t num_heads,
                        size_t num_kv_heads, size_t head_dim, float scale,
                        float* out);

// ops/elementwise.h. GeluTanhReference evaluates HF's 0.5 x (1 + tanh(u)),
// u = sqrt(2/pi) (x + 0.044715 x^3), in double as x / (1 + exp(-2u))
// (identical, and free of the cancellation of 1 + tanh(u) for negative x).
void GeluTanhReference(const float* x, float* y, size_t n);
// GeluTanhMul: the GeluTanhReference formula times up, in double, rounded once.
void GeluTanhMulReference(const float* gate, const float* up, float* y,
                          size_t n);
void MulReference(const float* a, const float* b, float* y, size_t n);
void AddReference(const float* a, const float* b, float* y, size_t n);
void ScaleReference(const float* x, float s, float* y, size_t n);
void SoftcapReference(const float* x, float cap, float* y, size_t n);

// ops/gather.h.
void GatherRowF32Reference(const float* table, size_t cols, size_t row,
                           size_t col_begin, size_t count, float scale,
                           float* y);
void GatherRowBF16Reference(const hwy::bfloat16_t* table, size_t cols,
                            size_t row, size_t col_begin, size_t count,
                            float scale, float* y);
// Weights decoded one at a time as for LinearQ8_0Reference; scale * w in
// double, rounded once.
void GatherRowQ8_0Reference(const void* table, size_t cols, size_t row,
                            size_t col_begin, size_t count, float scale,
                            float* y);
void GatherRowQ4_0Reference(const void* table, size_t cols, size_t row,
                            size_t col_begin, size_t count, float scale,
                            float* y);

// Scalar helpers for the above and for tests: exact bf16 -> f32 widening, and
// f32 -> bf16 with round-to-nearest-even (NaN stays NaN), as torch's
// `.to(torch.bfloat16)`.
float BF16ToF32(hwy::bfloat16_t v);
hwy::bfloat16_t F32ToBF16(float f);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_REFERENCE_H_
