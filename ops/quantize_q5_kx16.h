// Q5_Kx16: llama.cpp's Q5_K super-blocks regrouped two at a time as Q4_Kx16
// (ops/quantize_q4_kx16.h) regroups Q4_K: one 32-weight sub-block per 32-bit
// lane of a 64-byte load, the 6-bit scales and mins unpacked to bytes, and
// each quant's fifth bit in a 64-bit mask per 64 quant bytes, so that the
// exact integer decode kernel (ops/linear_vnni.h) adds it with one masked
// byte add (AVX-512 BW) instead of transposing. The same weights as the Q5_K
// row it is made from (lossless: Q5_Kx16ToQ5_K gives the Q5_K bytes back);
// cortiq-compile stores Q5_K matrices whose rows are whole 512-weight groups
// this way (passes/assign_storage_formats.cc). Not a GGUF type.
//
// Layout of one Q5_Kx16 block (512 weights = Q5_K super-blocks 2 t and 2 t + 1
// of a row, 360 bytes: the 352 of the two super-blocks plus 8). Sub-block j
// (< 16) is sub-block j % 8 of super-block j / 8; q_j[i] (i < 32, in [0, 31])
// is the quant of its weight i (ops/quantize_k.h):
//   bytes [0, 16)                 sc_j, the 6-bit scale of sub-block j
//   bytes [16, 32)                m_j, its 6-bit min
//   bytes [32 + 64 z, 96 + 64 z)  for z = 0..3: 4 bytes of sub-block j at
//                                 32 + 64 z + 4 j; byte b (< 4) holds the low 4
//                                 bits of q_j[4 z + b] in its low nibble and of
//                                 q_j[16 + 4 z + b] in its high nibble (Q4_Kx16)
//   bytes [288 + 16 z + 8 h, +8)  for z = 0..3, h = 0..1: a little-endian
//                                 64-bit mask whose bit 4 j + b is bit 4 of
//                                 q_j[16 h + 4 z + b] (the fifth bits of the
//                                 low (h = 0) or high (h = 1) nibbles of part z)
//   bytes [352, 360)              d, dmin of super-block 2 t, then of 2 t + 1
//                                 (f16 bits, as block_q5_K)
// and w = d * sc_j * q - dmin * m_j as in Q5_K.
#ifndef CORTIQ_OPS_QUANTIZE_Q5_KX16_H_
#define CORTIQ_OPS_QUANTIZE_Q5_KX16_H_

#include <stddef.h>

#include "ops/quantize_k.h"

namespace cortiq {
namespace ops {

// Weights and bytes per Q5_Kx16 block (2 super-blocks, 16 sub-blocks); byte
// offsets of its parts: the mins m_j (the scales sc_j are at 0), the low
// quant bits, the fifth-bit masks, and the super-blocks' d and dmin.
constexpr size_t kQ5_Kx16BlockWeights = 2 * kSuperBlockSize;  // 512
constexpr size_t kQ5_Kx16BlockBytes = 2 * kQ5_KBlockBytes + 8;  // 360
constexpr size_t kQ5_Kx16Mins = 16;
constexpr size_t kQ5_Kx16Quants = 32;
constexpr size_t kQ5_Kx16HighBits = 288;
constexpr size_t kQ5_Kx16SuperScales = 352;

// Bytes of one row of `cols` weights (cols a multiple of 512).
constexpr size_t Q5_Kx16RowBytes(size_t cols) {
  return cols / kQ5_Kx16BlockWeights * kQ5_Kx16BlockBytes;
}

// Regroups the n / 256 Q5_K super-blocks at `q5_k` (n a multiple of 512) into
// n / 512 Q5_Kx16 blocks at `out` (Q5_Kx16RowBytes(n) bytes; must not overlap
// q5_k). Every scale, min and quant keeps its value. Aborts if n % 512 != 0.
void Q5_KToQ5_Kx16(const void* q5_k, size_t n, void* out);

// The inverse of Q5_KToQ5_Kx16: the n / 256 Q5_K super-blocks (Q5_KRowBytes(n)
// bytes, byte for byte those Q5_KToQ5_Kx16 was given) of n / 512 Q5_Kx16
// blocks at `out`, which must not overlap the input. Scales or mins above 63
// keep their low 6 bits, as every kernel reads them. Aborts if n % 512 != 0.
void Q5_Kx16ToQ5_K(const void* q5_kx16, size_t n, void* out);

// QuantizeRowQ5_K (llama.cpp's quantize_row_q5_K_ref), then Q5_KToQ5_Kx16; n a
// multiple of 512.
void QuantizeRowQ5_Kx16(const float* x, size_t n, void* blocks);

// y = the n weights of n / 512 Q5_Kx16 blocks in row order, exactly the
// values DequantizeRowQ5_K gives for the Q5_K super-blocks they were made
// from.
void DequantizeRowQ5_Kx16(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_Q5_KX16_H_
