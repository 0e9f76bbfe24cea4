// Matrix-matrix product Y = X W^T (the decoder's Linear layers over a batch of
// token rows, for batched prefill), with f32, bf16 or f16 weights or any of
// llama.cpp's block formats (those of ops/linear.h) and f32 activations, over
// a range of output rows (for splitting across threads).
// The batched counterpart of ops/linear.h: same weight formats and layout.

#ifndef CORTIQ_OPS_MATMUL_H_
#define CORTIQ_OPS_MATMUL_H_

#include <stddef.h>

#include "hwy/base.h"  // hwy::bfloat16_t

namespace cortiq {
namespace ops {

// Tiling (ops/matmul-inl.h), sized for the AVX-512 target on the AMD EPYC
// this is tuned on (48 KiB L1d, 1 MiB L2 per core, 32 vector registers, 2
// 512-bit FMAs per cycle):
//
// - Micro-tile: 4 weight rows x 6 tokens on AVX-512 (x 3 tokens on the
//   16-register AVX2/SSE targets) of f32 accumulators, each a vector of
//   column-wise partial sums: 24 accumulators + 4 weight vectors + 1
//   activation vector = 29 of the 32 zmm registers. Per column vector step:
//   4 + 6 loads feed 24 FMAs (0.42 loads per FMA, under the 2 loads : 2 FMAs
//   per cycle of the core). At the end of a column chunk the 4 x 16 lanes of
//   one token are reduced by an interleave tree to the 4 sums of 4 adjacent
//   output rows, added to y with one 128-bit load/store.
// - Column chunk kc = 512 (kMatMulColChunk): a 4-row weight sub-panel is
//   8 KiB and a 6-token activation tile 12 KiB, so both stay in L1 while the
//   tile runs; the reduction (~15 shuffles/adds per 4 outputs) is amortized
//   over kc / 16 = 32 FMAs per output.
// - Row block 32 (kMatMulRowBlock): the weights of 32 rows x kc are decoded
//   once into a 64 KiB f32 stack buffer (L1/L2) and reused by every token of
//   the token block; the next row block's weights are software-prefetched
//   while it runs (short per-row runs defeat the hardware prefetchers).
//   Each call uses ~66 KiB of stack.
// - Token block 256 (kMatMulTokenBlock): the activations of 256 tokens x kc
//   are 512 KiB, half the L2, so they are reread from L2 (not L3) by each row
//   block. Weights are decoded once per call and token block, i.e.
//   ceil(batch / 256) times.
//
// Loop nest: token block > column chunk > row block (decode) > 6-token group >
// 4-row sub-panel > columns. The first column chunk stores into y, later
// chunks add to it. kc = 256 / 1024, row blocks of 16 / 64 and 4-token tiles
// measured the same or up to 10% slower (bench/README.md); single thread,
// 140-210 GFLOP/s at the E4B shapes, batch 64 and 512.

// Computes rows [row_begin, row_end) of Y = X W^T for every token t < batch:
//
//     y[t * y_stride + r] = sum_{c < cols} w[r * cols + c] * x[t * x_stride +
//     c]
//
// Spec §3.0 "Linear" (nn.Linear, no bias) applied to `batch` token rows: w is
// row-major [rows, cols] = [out_features, in_features] (HF `[out, in]`),
// exactly as for LinearF32; x is [batch, cols] with row t at x + t * x_stride
// (floats, x_stride >= cols); y is [batch, rows] with row t at y + t * y_stride
// (floats, y_stride >= rows), indexed by the absolute row r. Only y[t,
// row_begin .. row_end) for t < batch is written (threads may own disjoint row
// ranges of the same y; the padding between rows is not touched). Requires
// batch >= 1, cols >= 1 (any size), row_begin <= row_end <= rows. No alignment
// is required.
//
// Aliasing: y must not overlap w or x.
// Precision: activations are used as f32 (never rounded), f32 FMAs. Per output,
// each lane of an accumulator sums a chain of ceil(kc / N) FMAs per column
// chunk (N = f32 lanes, 16 on AVX-512), the lanes are reduced pairwise
// (log2 N adds), and the ceil(cols / kc) chunk sums are added into y in order:
// |y - exact| <= k * 2^-24 * sum_c |w_rc x_tc| with
// k ~ ceil(min(cols, kc) / N) + log2 N + ceil(cols / kc) + 2 (AVX-512,
// cols = 2560: k ~ 43; cols = 10240: k ~ 58), so each token row agrees with
// LinearF32 of that row within the sum of both bounds.
// Scalar reference: MatMulF32Reference.
void MatMulF32(const float* w, const float* x, size_t x_stride, float* y,
               size_t y_stride, size_t batch, size_t rows, size_t cols,
               size_t row_begin, size_t row_end);

// As MatMulF32 with bf16 weights (hwy::bfloat16_t, row-major [rows, cols]).
// Each weight is widened exactly to f32 (bf16 is the top half of an f32) when
// its row block is decoded; the result equals MatMulF32 on the widened matrix
// bit for bit. Same precision. Scalar reference: MatMulBF16Reference.
void MatMulBF16(const hwy::bfloat16_t* w, const float* x, size_t x_stride,
                float* y, size_t y_stride, size_t batch, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);

// As MatMulF32 with Q8_0 weights: w holds rows * cols / 32 llama.cpp Q8_0
// blocks (ops/quantize.h; 34 bytes each, row r at byte r * Q8_0RowBytes(cols),
// no alignment required), weight w_rc = d * q of its block (a GGUF Q8_0
// tensor's data as is). Requires cols to be a multiple of 32 (debug-asserted).
// Each weight is decoded once per call (and token block of 256) to the f32
// d * q, which is exact (an 11-bit by 8-bit product), so the result equals
// MatMulF32 on the dequantized matrix bit for bit. Same precision.
// Scalar reference: MatMulQ8_0Reference.
void MatMulQ8_0(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);

// As MatMulQ8_0 with Q4_0 weights (18-byte blocks, row r at byte r *
// Q4_0RowBytes(cols)); w_rc = d * (nibble - 8), decoded exactly to f32. Same
// precision. Scalar reference: MatMulQ4_0Reference.
void MatMulQ4_0(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);

// As MatMulBF16 with IEEE binary16 weights (row-major [rows, cols]), widened
// exactly to f32 when a row block is decoded: bit-identical to MatMulF32 on
// the widened matrix. Scalar reference: MatMulF16Reference.
void MatMulF16(const hwy::float16_t* w, const float* x, size_t x_stride,
               float* y, size_t y_stride, size_t batch, size_t rows,
               size_t cols, size_t row_begin, size_t row_end);

// As MatMulQ8_0 for the other block formats, with w laid out as for the
// Linear kernel of the same format (ops/linear.h): cols a multiple of 32
// (Q4_1, Q5_0, Q5_1, IQ4_NL), 256 (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS) or
// 512 (Q4_0x16, Q8_0x16, Q4_Kx16, Q5_Kx16; debug-asserted). Each weight is decoded once per call (and token block) to
// its f32 value, exactly the value of the format's DequantizeRow*
// (ops/quantize_*.h; llama.cpp's dequantizer bit for bit), so the result
// equals MatMulF32 on the dequantized matrix bit for bit. Same precision.
// Scalar references: MatMulQ4_1Reference, ... (ops/reference.h).
void MatMulQ4_0x16(const void* w, const float* x, size_t x_stride, float* y,
                   size_t y_stride, size_t batch, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end);
void MatMulQ8_0x16(const void* w, const float* x, size_t x_stride, float* y,
                   size_t y_stride, size_t batch, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end);
void MatMulQ4_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                   size_t y_stride, size_t batch, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end);
void MatMulQ5_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                   size_t y_stride, size_t batch, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end);
void MatMulQ4_1(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulQ5_0(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulQ5_1(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulIQ4_NL(const void* w, const float* x, size_t x_stride, float* y,
                  size_t y_stride, size_t batch, size_t rows, size_t cols,
                  size_t row_begin, size_t row_end);
void MatMulQ2_K(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulQ3_K(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulQ4_K(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulQ5_K(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulQ6_K(const void* w, const float* x, size_t x_stride, float* y,
                size_t y_stride, size_t batch, size_t rows, size_t cols,
                size_t row_begin, size_t row_end);
void MatMulIQ4_XS(const void* w, const float* x, size_t x_stride, float* y,
                  size_t y_stride, size_t batch, size_t rows, size_t cols,
                  size_t row_begin, size_t row_end);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_MATMUL_H_
