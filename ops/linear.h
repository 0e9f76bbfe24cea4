// Matrix-vector product y = W x (the decoder's Linear layers and the tied LM
// head), with f32, bf16, Q8_0 or Q4_0 weights and f32 activations, over a
// range of output rows (for splitting across threads).

#ifndef CORTIQ_OPS_LINEAR_H_
#define CORTIQ_OPS_LINEAR_H_

#include <stddef.h>

#include "hwy/base.h"  // hwy::bfloat16_t

namespace cortiq {
namespace ops {

// Computes rows [row_begin, row_end) of y = W x:
//
//     y[r] = sum_{c < cols} w[r * cols + c] * x[c]
//
// Spec §3.0 "Linear": W·x with HF `[out, in]` weights (nn.Linear, no bias), so
// w is row-major [rows, cols] = [out_features, in_features]; x has cols floats;
// y has rows floats and is indexed by the absolute row r. Only
// y[row_begin, row_end) is written, so threads may own disjoint row ranges of
// the same y. Requires row_begin <= row_end <= rows and cols >= 1 (any size,
// not only multiples of the vector length). No alignment is required.
//
// Aliasing: y must not overlap w or x.
// Row-range independence: each y[r] is computed by the same operations in the
// same order whatever [row_begin, row_end) contains it (rows in groups of four
// from row_begin, leftover rows by a one-row path with the groups' order), so
// splitting the rows between threads at any boundaries gives the bits of a
// single call (tests: TestRangeIndependent). Same for all four formats.
// Precision: f32 FMAs in 8 vector accumulators (2 per row), then a horizontal
// sum. Worst case |y - exact| <= k * 2^-24 * sum_c |w_c x_c| with
// k ~ cols / (2 * lanes) + 8 (AVX-512, cols = 2560: k ~ 90, i.e. 5e-6);
// random-sign sums do ~sqrt(k) times better.
// Scalar reference: LinearF32Reference.
void LinearF32(const float* w, const float* x, float* y, size_t rows,
               size_t cols, size_t row_begin, size_t row_end);

// As LinearF32 with bf16 weights (hwy::bfloat16_t, row-major [rows, cols]).
// Each weight is widened exactly to f32 in registers (bf16 is the top half of
// an f32) and the f32 kernel's summation order is kept, so the result is
// bit-identical to LinearF32 on the widened matrix.
// Scalar reference: LinearBF16Reference.
void LinearBF16(const hwy::bfloat16_t* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);

// As LinearF32 with Q8_0 weights: w holds rows * cols / 32 llama.cpp Q8_0
// blocks (ops/quantize.h; 34 bytes each, row r at byte r * Q8_0RowBytes(cols),
// no alignment required), weight w_rc = d * q of its block, used in place (a
// GGUF Q8_0 tensor's data as is). Requires cols to be a multiple of 32 (the
// caller only picks this format then; debug-asserted).
//
// Blocks are decoded in registers (the quants exactly to f32, the f16 scale d
// exactly by vcvtph2ps where available); x is used as is (f32, never rounded
// or quantized). Per row and block, s = sum_j q_j x_j in f32 (one multiply then
// FMAs) over 32 / N lanes (N = f32 lanes, at most 16), then acc += d * s by one
// FMA; lane accumulators are summed at the end. Error: |y - exact| <= k *
// 2^-24 * sum_c |w_rc x_c| with k ~ cols / 32 + 32 / N + log2 N + 4 (cols =
// 2560, AVX-512: k ~ 90).
// Scalar reference: LinearQ8_0Reference.
void LinearQ8_0(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);

// As LinearQ8_0 with Q4_0 weights (18-byte blocks, row r at byte r *
// Q4_0RowBytes(cols)); w_rc = d * (nibble - 8). The quants nibble - 8 are
// exact f32 values (on AVX-512 looked up in a 16-entry table), and the
// summation and error bound are those of LinearQ8_0 (the -8 is not folded out
// into a separate sum of x, which would add error proportional to 8 sum |x_c|).
// Scalar reference: LinearQ4_0Reference.
void LinearQ4_0(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_LINEAR_H_
