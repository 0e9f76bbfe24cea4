// Linear layers over a few activation rows (the decode steps of several
// sequences evaluated together, a short prompt): Y = X W^T for `batch` rows of
// X, each weight block decoded once in registers and applied to every row,
// with each row's result bit-identical to the matrix-vector kernel
// (ops/linear.h) on that row alone. f32, bf16, Q8_0 or Q4_0 weights, f32
// activations, over a range of output rows (for splitting across threads).
//
// Where it sits between ops/linear.h and ops/matmul.h: Linear reads every
// weight once per row of X (a batch of R rows costs R weight passes, and
// decode is bound by that stream); MatMul decodes every weight to an f32 panel
// per call and tiles for hundreds of rows (at 2-8 rows its decode and panel
// traffic cost several matrix-vector passes). LinearRows streams the weights
// once per call like Linear and keeps Linear's per-row arithmetic, so it is
// the kernel of choice from 1 to about 16 rows (bench/linear_rows_benchmark.cc
// measures where MatMul overtakes it).
//
// The other formats (F16, Q4_1, Q5_x, K-quants, IQ4_x) have no variant here:
// the session runs their decode kernel per row over blocks of 16 output rows
// (runtime/session.cc, LinearRowsByBlocks), which keeps the bits and streams
// the weights once but decodes each block once per row.

#ifndef CORTIQ_OPS_LINEAR_ROWS_H_
#define CORTIQ_OPS_LINEAR_ROWS_H_

#include <stddef.h>

#include "hwy/base.h"  // hwy::bfloat16_t

namespace cortiq {
namespace ops {

// Computes rows [row_begin, row_end) of Y = X W^T for every activation row
// t < batch:
//
//     y[t * y_stride + r] = sum_{c < cols} w[r * cols + c] * x[t * x_stride + c]
//
// Spec §3.0 "Linear" (nn.Linear, no bias) applied to `batch` rows: w is
// row-major [rows, cols] = [out_features, in_features] (HF `[out, in]`), as
// for LinearF32; x is [batch, cols] with row t at x + t * x_stride (floats,
// x_stride >= cols); y is [batch, rows] with row t at y + t * y_stride
// (floats, y_stride >= rows), indexed by the absolute output row r. Only
// y[t, row_begin .. row_end) for t < batch is written (threads may own
// disjoint row ranges; the padding between rows is not touched). Requires
// batch >= 1, cols >= 1 (any size), row_begin <= row_end <= rows. No alignment
// is required. Any batch is accepted (rows of X go in groups of up to 8), but
// the kernel is meant for small ones (see the file comment).
//
// Aliasing: y must not overlap w or x.
// Exactness: y[t, r] has the bits LinearF32(w, x + t * x_stride, ...) gives
// y[r] on the same Highway target (the same FMAs in the same order per output:
// DotRows1 in ops/dot-inl.h), whatever batch, the row range or the other rows
// of X are, so a sequence decoded together with others gets the logits it
// gets alone (tests/ops/linear_rows_test.cc). Precision is therefore that of
// LinearF32 (ops/linear.h).
// Scalar reference: MatMulF32Reference (ops/reference.h; the same product in
// double).
void LinearRowsF32(const float* w, const float* x, size_t x_stride, float* y,
                   size_t y_stride, size_t batch, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end);

// As LinearRowsF32 with bf16 weights (hwy::bfloat16_t, row-major [rows,
// cols]), widened exactly in registers; each output has the bits of
// LinearBF16 on its row. Scalar reference: MatMulBF16Reference.
void LinearRowsBF16(const hwy::bfloat16_t* w, const float* x, size_t x_stride,
                    float* y, size_t y_stride, size_t batch, size_t rows,
                    size_t cols, size_t row_begin, size_t row_end);

// As LinearRowsF32 with Q8_0 weights (llama.cpp blocks, ops/quantize.h; row r
// at byte r * Q8_0RowBytes(cols), used in place). Requires cols to be a
// multiple of 32 (debug-asserted). Each block's quants and f16 scale are
// decoded once into registers and dotted with the block's 32 activations of
// every row in the group; per output the operations are LinearQ8_0's (per
// block s = sum_j q_j x_j over 32 / N lanes, then acc += d * s), so each
// output has the bits of LinearQ8_0 on its row, and its precision.
// Scalar reference: MatMulQ8_0Reference.
void LinearRowsQ8_0(const void* w, const float* x, size_t x_stride, float* y,
                    size_t y_stride, size_t batch, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);

// As LinearRowsQ8_0 with Q4_0 weights (18-byte blocks, row r at byte r *
// Q4_0RowBytes(cols)); w_rc = d * (nibble - 8). Each output has the bits of
// LinearQ4_0 on its row. Scalar reference: MatMulQ4_0Reference.
void LinearRowsQ4_0(const void* w, const float* x, size_t x_stride, float* y,
                    size_t y_stride, size_t batch, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);

// As LinearRowsQ4_0 with Q4_0x16 weights (ops/quantize_q4_0x16.h; cols a
// multiple of 512): each token's activations permuted once, then blocks of 16
// rows for every token (on the path LinearQ4_0x16 takes: with AVX-512 VNNI
// or AVX2, ops/linear_vnni.h). Each output has the bits of LinearQ4_0x16 on
// its row. Scalar reference: MatMulQ4_0x16Reference.
void LinearRowsQ4_0x16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);

// As LinearRowsQ4_0x16 with Q8_0x16 weights (ops/quantize_q8_0x16.h). Each
// output has the bits of LinearQ8_0x16 on its row. Scalar reference:
// MatMulQ8_0x16Reference.
void LinearRowsQ8_0x16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);

// As LinearRowsQ4_0x16 with Q4_Kx16 weights (ops/quantize_q4_kx16.h): with
// AVX-512 VNNI or AVX2 LinearRowsQ4_Kx16Vnni / LinearRowsQ4_Kx16Avx2 (each
// token's digits once, blocks of 16 rows for every token), elsewhere its f32
// kernel per token on blocks of 16 rows. Each output has the bits of
// LinearQ4_Kx16 on its row. Scalar reference: MatMulQ4_Kx16Reference.
void LinearRowsQ4_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);

// The same for Q5_Kx16 weights (ops/quantize_q5_kx16.h): each output has the
// bits of LinearQ5_Kx16 on its row. Scalar reference: MatMulQ5_Kx16Reference.
void LinearRowsQ5_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_LINEAR_ROWS_H_
