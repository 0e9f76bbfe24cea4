// Matrix-matrix product Y = X W^T for Q8_0 and Q4_0 weights with the activations quantized to
// Q8_0 blocks: the opt-in lower-precision prefill (SessionOptions::prefill_activations), the
// computation llama.cpp's CPU backend does for these formats (ggml_vec_dot_q4_0_q8_0,
// ggml_vec_dot_q8_0_q8_0), so that a prompt's matrix products run on 8-bit integer dot products
// (AVX-512 VNNI vpdpbusd: 64 multiply-adds per instruction, 4x f32 FMA's 16).
//
// Not exact: each activation is rounded to one of 255 levels of its 32-column block (relative
// error up to 1/254 of the block's largest magnitude). The default prefill (ops/matmul.h) stays
// exact; the deviation this option causes is measured in tests/e2e/prefill_activations_test.cc
// and bench/README.md.
#ifndef CORTIQ_OPS_MATMUL_Q8_ACTIVATIONS_H_
#define CORTIQ_OPS_MATMUL_Q8_ACTIVATIONS_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {
namespace ops {

// Quantizes x[0, n) (n a multiple of 32) to Q8_0 blocks as this kernel does, per 32-value block
// b: amax = max |x|, d[b] = amax / 127, q = round-to-nearest-even(x * (127 / amax)) in
// [-127, 127] (all 0 and d = 0 when amax = 0), sum[b] = the sum of the block's q. llama.cpp's
// quantize_row_q8_0 with an f32 scale instead of its f16 one (and 127 / amax for 1 / d).
void QuantizeActivationsQ8_0(const float* x, size_t n, int8_t* q, float* d, int32_t* sum);

// Rows [row_begin, row_end) of y[t * y_stride + r] = sum over the 32-column blocks b, in order,
// of (d_w[r, b] * d_x[t, b]) * isum[r, t, b], accumulated from 0 by f32 fused multiply-adds, where
// isum = sum_{c in b} q_w[r, c] * q_x[t, c] is exact (32-bit integers) and (q_x, d_x) are x's
// quantization by QuantizeActivationsQ8_0; d_w and q_w are the weight blocks as stored (Q8_0: f16
// d and int8 q; Q4_0: f16 d and nibble - 8). Layouts and contract as MatMulQ8_0 / MatMulQ4_0
// (ops/matmul.h): w row r at byte r * Q8_0RowBytes(cols) / Q4_0RowBytes(cols), cols a multiple
// of 32, x [batch, cols] with stride x_stride, y [batch, rows] with stride y_stride; y must not
// overlap w or x. Every target gives the same bits (the integer sums are exact and the f32
// operations are the same); fast where the CPU has AMX-INT8 or AVX-512 VNNI, a plain loop
// elsewhere.
// Scalar reference: MatMulQ8ActivationsReference (ops/reference.h).
void MatMulQ8_0Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end);
void MatMulQ4_0Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end);

// The same for the regrouped layouts Q8_0x16 and Q4_0x16 (ops/quantize_q8_0x16.h,
// ops/quantize_q4_0x16.h; cols a multiple of 512, w row r at byte r * Q8_0x16RowBytes(cols) /
// Q4_0x16RowBytes(cols)): the same blocks, so the same bits as MatMulQ8_0Q8Activations /
// MatMulQ4_0Q8Activations on the Q8_0 / Q4_0 rows they were made from.
void MatMulQ8_0x16Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                                size_t y_stride, size_t batch, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end);
void MatMulQ4_0x16Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                                size_t y_stride, size_t batch, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end);

// The implementations, fastest first; all give the same bits.
enum class Q8ActivationsPath {
  kAmx,       // AMX-INT8 tile products (TDPBSUD: 16 tokens x 16 rows x 32 columns each)
  kVnni,      // AVX-512 VNNI (vpdpbusd)
  kPortable,  // plain C++
};

// The implementation the kernels run: the fastest the CPU (and OS) supports, no faster than the
// limit set by LimitQ8ActivationsPathForTest.
Q8ActivationsPath DispatchedQ8ActivationsPath();

// "AMX-INT8", "AVX-512 VNNI", "portable" (as cortiq-bench prints them).
const char* Q8ActivationsPathName(Q8ActivationsPath path);

// Tests: run no faster path than `fastest` (kAmx: no limit).
void LimitQ8ActivationsPathForTest(Q8ActivationsPath fastest);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_MATMUL_Q8_ACTIVATIONS_H_
