// Scaled copy of part of one table row to f32: the token-embedding lookup and
// the per-layer (PLE) table lookup, for f32, bf16 or f16 tables or any of
// llama.cpp's block formats (those of ops/linear.h).

#ifndef CORTIQ_OPS_GATHER_H_
#define CORTIQ_OPS_GATHER_H_

#include <stddef.h>

#include "hwy/base.h"  // hwy::bfloat16_t

namespace cortiq {
namespace ops {

// Copies part of one table row to f32, scaled:
//
//     y[j] = scale * table[row * cols + col_begin + j]    for j < count
//
// table is row-major [num_rows, cols] f32; requires col_begin + count <= cols.
// y has count floats and must not overlap the table. One f32 multiply per
// element (scale = 1 gives a plain copy).
// Spec §3.1, token embedding e = E[t] * sqrt(H): cols = H, col_begin = 0,
// count = H. Spec §3.2 step 3, PLE row E_ple[t, l*P : (l+1)*P] * sqrt(P):
// cols = L*P, col_begin = l*P, count = P. The caller chooses the scale: the
// exact sqrt(H) (f32 HF, llama.cpp) or the bf16-rounded one HF uses with bf16
// weights (spec §5.2).
void GatherRowF32(const float* table, size_t cols, size_t row, size_t col_begin,
                  size_t count, float scale, float* y);

// As GatherRowF32 for a bf16 table; entries are widened exactly to f32 before
// the multiply.
void GatherRowBF16(const hwy::bfloat16_t* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);

// As GatherRowF32 for a Q8_0 table (ops/quantize.h): num_rows * cols / 32
// llama.cpp blocks, row r at byte r * Q8_0RowBytes(cols), no alignment needed;
// cols must be a multiple of 32 (debug-asserted). col_begin and count are
// arbitrary (col_begin + count <= cols): the blocks covering the range are
// decoded and only y[0, count) is written. Each entry w = d * q is exact in
// f32, so y[j] = scale * w is rounded once, bit-identical to the reference.
// Spec §3.2's PLE slices (P = 256) and embedding rows are whole blocks.
void GatherRowQ8_0(const void* table, size_t cols, size_t row, size_t col_begin,
                   size_t count, float scale, float* y);

// As GatherRowQ8_0 for a Q4_0 table (row r at byte r * Q4_0RowBytes(cols)).
void GatherRowQ4_0(const void* table, size_t cols, size_t row, size_t col_begin,
                   size_t count, float scale, float* y);

// As GatherRowBF16 for an IEEE binary16 table (entries widened exactly).
void GatherRowF16(const hwy::float16_t* table, size_t cols, size_t row,
                  size_t col_begin, size_t count, float scale, float* y);

// As GatherRowQ8_0 for the other block formats, with the table laid out as a
// weight matrix of the same format (ops/linear.h): cols a multiple of 32
// (Q4_1, Q5_0, Q5_1, IQ4_NL), 256 (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS) or
// 512 (Q4_0x16, Q8_0x16, Q4_Kx16, Q5_Kx16; debug-asserted), col_begin and count arbitrary. Each entry is decoded to its
// f32 value (the format's DequantizeRow*, ops/quantize_*.h) and multiplied by
// scale once, bit-identical to the reference. Gemma-4's PLE slices (256
// columns at multiples of 256) are whole super-blocks.
void GatherRowQ4_0x16(const void* table, size_t cols, size_t row,
                      size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ4_Kx16(const void* table, size_t cols, size_t row,
                      size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ5_Kx16(const void* table, size_t cols, size_t row,
                      size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ8_0x16(const void* table, size_t cols, size_t row,
                      size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ4_1(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ5_0(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ5_1(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowIQ4_NL(const void* table, size_t cols, size_t row,
                     size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ2_K(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ3_K(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ4_K(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ5_K(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowQ6_K(const void* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y);
void GatherRowIQ4_XS(const void* table, size_t cols, size_t row,
                     size_t col_begin, size_t count, float scale, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_GATHER_H_
