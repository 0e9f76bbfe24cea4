// Matrix-vector product y = W x (the decoder's Linear layers and the tied LM
// head), with f32, bf16 or f16 weights or any of llama.cpp's block formats
// (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
// IQ4_XS) and f32 activations, over a range of output rows (for splitting
// across threads).

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
// single call (tests: TestRangeIndependent). Same for every format below.
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

// As LinearQ4_0 with Q4_0x16 weights (ops/quantize_q4_0x16.h: Q4_0 blocks
// regrouped 16 at a time, 288 bytes per 512 weights; cols a multiple of 512,
// debug-asserted). x is permuted once per call so that a vector lane holds one
// Q4_0 block: per row and lane, the 32 products of the lane's block are
// summed in four chains of 8 f32 FMAs (quants nibble - 8 exact, looked up on
// AVX-512) added pairwise, then multiplied by the block's scale and added to
// the lane's accumulator (one vector FMA per 16 blocks), and the lanes are
// summed at the end. Rows are computed one at a time, so a thread's weights
// are one sequential stream. Error: |y - exact| <= k * 2^-24 * sum_c |w_rc
// x_c| with k ~ cols / 512 + 12 + log2 N + 4. Where the CPU has AVX-512
// VNNI or AVX2 the product is instead computed in exact integer arithmetic on
// 32-bit block fixed-point activations (ops/linear_vnni.h, with its error
// bound; the same bits on both; ~1.5x the f32 kernel's throughput with VNNI,
// ~1.25x with AVX2 on Zen 2). Each row's result is
// independent of [row_begin, row_end). Scalar reference:
// LinearQ4_0x16Reference.
void LinearQ4_0x16(const void* w, const float* x, float* y, size_t rows,
                   size_t cols, size_t row_begin, size_t row_end);

// As LinearQ8_0 with Q8_0x16 weights (ops/quantize_q8_0x16.h: Q8_0 blocks
// regrouped 16 at a time, 544 bytes per 512 weights; cols a multiple of 512,
// debug-asserted), as LinearQ4_0x16 does for Q4_0: x permuted once per call
// so that a lane holds one block, per row and lane the 32 products summed in
// four chains of 8 f32 FMAs (quants widened exactly), times the block's scale
// into the lane's accumulator; with AVX-512 VNNI the exact integer path of
// ops/linear_vnni.h instead. Error: as LinearQ4_0x16. Each row's result is
// independent of [row_begin, row_end). Scalar reference:
// LinearQ8_0x16Reference.
void LinearQ8_0x16(const void* w, const float* x, float* y, size_t rows,
                   size_t cols, size_t row_begin, size_t row_end);

// As LinearBF16 with IEEE binary16 weights (row-major [rows, cols], any
// cols): each weight is widened exactly to f32 in registers (vcvtph2ps where
// available), then the f32 kernel's summation order is kept, so the result is
// bit-identical to LinearF32 on the widened matrix.
// Scalar reference: LinearF16Reference.
void LinearF16(const hwy::float16_t* w, const float* x, float* y, size_t rows,
               size_t cols, size_t row_begin, size_t row_end);

// As LinearQ8_0 for the other 32-weight block formats Q4_1, Q5_0, Q5_1
// (ops/quantize_legacy.h) and IQ4_NL (ops/quantize_iq4.h): w holds rows *
// cols / 32 blocks, row r at byte r * <Format>RowBytes(cols) (20, 22, 24 and
// 18 bytes per block), used in place (a GGUF tensor's data as is); cols a
// multiple of 32 (debug-asserted).
//
// Per row and block, s = sum_j q_j x_j in f32 lanes (q: the small integer or
// level the block's scale d multiplies, exact in f32; Q5_0 q - 16, IQ4_NL
// kIQ4NLValues[nibble]), then acc += d * s by one FMA, as LinearQ8_0. Q4_1 /
// Q5_1 (w = d q + m) add m * X_b, X_b = sum of x over block b (computed once
// per call in f32), by one more FMA per block. Error: |y - exact| <= k *
// 2^-24 * sum_c (|d q_c| + |m|) |x_c| with k ~ cols / 32 + 32 / N + log2 N + 6
// (N = f32 lanes, at most 16; m = 0 for Q5_0 / IQ4_NL).
// Scalar references: LinearQ4_1Reference, ... (ops/reference.h).
void LinearQ4_1(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearQ5_0(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearQ5_1(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearIQ4_NL(const void* w, const float* x, float* y, size_t rows,
                  size_t cols, size_t row_begin, size_t row_end);

// As LinearQ8_0 for the 256-weight super-block formats Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K (ops/quantize_k.h) and IQ4_XS (ops/quantize_iq4.h): w holds
// rows * cols / 256 super-blocks, row r at byte r * <Format>RowBytes(cols)
// (84, 110, 144, 176, 210 and 136 bytes per super-block), used in place; cols
// a multiple of 256 (debug-asserted).
//
// Per super-block, the sub-block scales (and mins) are decoded once into f32
// (exact). AVX-512 (ops/kquant_dot_avx3-inl.h): every weight is decoded to its
// exact f32 value (DequantizeRow*'s) by a table lookup per sub-block and
// multiplied into two f32 accumulators per row, i.e. an f32 dot product of the
// dequantized row; error <= k * 2^-24 * sum_c |w_c x_c| with k ~ cols / 32 +
// log2 16 + 4. Other targets (ops/kquant_block-inl.h): per sub-block k (16 or
// 32 weights), s_k = sum q_i x_i in f32 lanes over the sub-block's unsigned
// quants (IQ4_XS: the levels), then acc += scale_k * s_k by one FMA; the
// offsets -dmin * m_k (Q2_K, Q4_K, Q5_K) and the quants' constant biases -4
// (Q3_K) and -32 (Q6_K) are added as sum_k coef_k * X_k with X_k = sum of x
// over sub-block k, precomputed once per call in f32, by 16-lane FMAs per
// super-block; error <= k * 2^-24 * sum_c T_c |x_c| with T_c = |scale q_c| +
// |offset_c| (the magnitudes of the two terms weight c is split into: Q6_K
// |d sc| (q + 32), Q3_K |d s| (q + 4), Q2_K / Q4_K / Q5_K |d sc q| + |dmin
// m|, IQ4_XS |w|) and k ~ cols / 16 + 32 / N + log2 N + 8. (T_c >= |w_c|: the
// tests hold both paths to the second bound.) Q4_K with AVX-512 VNNI or AVX2
// (DispatchedDecodeLinearPath() == kVnni or kAvx2) runs instead the exact
// integer digits of LinearQ4_KVnni / LinearQ4_KAvx2 (ops/linear_vnni.h, the
// same bits), within the same second bound.
// Scalar references: LinearQ4_KReference, ... (ops/reference.h).
void LinearQ2_K(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearQ3_K(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearQ4_K(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearQ5_K(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearQ6_K(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end);
void LinearIQ4_XS(const void* w, const float* x, float* y, size_t rows,
                  size_t cols, size_t row_begin, size_t row_end);

// As LinearQ4_K with Q4_Kx16 weights (ops/quantize_q4_kx16.h: Q4_K
// super-blocks regrouped in pairs, 296 bytes per 512 weights; cols a multiple
// of 512, debug-asserted). With AVX-512 VNNI or AVX2 the exact integer
// digits of LinearQ4_Kx16Vnni / LinearQ4_Kx16Avx2 (ops/linear_vnni.h; Q4_K's
// error bound, the same bits); elsewhere (non-x86 CPUs, x86 without AVX2) in
// f32, each block decoded to its exact weights and multiplied in 4 chains of
// N-lane FMAs (ops/kx16_block-inl.h LinearKX16Rows; the f32 bound of this
// header with k ~ cols / (4 N) + 4 + log2 N). Each row's result is
// independent of [row_begin, row_end). Scalar reference:
// LinearQ4_Kx16Reference.
void LinearQ4_Kx16(const void* w, const float* x, float* y, size_t rows,
                   size_t cols, size_t row_begin, size_t row_end);

// As LinearQ4_Kx16 with Q5_Kx16 weights (ops/quantize_q5_kx16.h: Q5_K
// super-blocks regrouped in pairs, 360 bytes per 512 weights): the integer
// digits of LinearQ5_Kx16Vnni / LinearQ5_Kx16Avx2 (Q5_K's error bound), else
// the same f32 kernel on its decoded blocks. Scalar reference:
// LinearQ5_Kx16Reference.
void LinearQ5_Kx16(const void* w, const float* x, float* y, size_t rows,
                   size_t cols, size_t row_begin, size_t row_end);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_LINEAR_H_
