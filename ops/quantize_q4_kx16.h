// Q4_Kx16: llama.cpp's Q4_K super-blocks regrouped two at a time so that a
// 64-byte load holds 4 quant bytes of each of their 16 sub-blocks, one
// sub-block of 32 weights per 32-bit lane: the lane layout of Q4_0x16
// (ops/quantize_q4_0x16.h), whose exact integer decode kernel
// (ops/linear_vnni.h) then needs no register transposes, with the 6-bit
// scales and mins unpacked to bytes. The same weights as the Q4_K row it is
// made from (a lossless re-encoding: Q4_Kx16ToQ4_K gives the Q4_K bytes back);
// cortiq-compile stores Q4_K matrices whose rows are whole 512-weight groups
// this way (passes/assign_storage_formats.cc). Not a GGUF type.
//
// Layout of one Q4_Kx16 block (512 weights = Q4_K super-blocks 2 t and 2 t + 1
// of a row, 296 bytes: the 288 of the two super-blocks plus 8 for the
// unpacked scales). Sub-block j (< 16) is sub-block j % 8 of super-block
// j / 8; q_j[i] (i < 32) is the 4-bit quant of its weight i (ops/quantize_k.h):
//   bytes [0, 16)                 sc_j, the 6-bit scale of sub-block j
//   bytes [16, 32)                m_j, its 6-bit min
//   bytes [32 + 64 z, 96 + 64 z)  for z = 0..3: 4 bytes of sub-block j at
//                                 32 + 64 z + 4 j; byte b (< 4) holds q_j[4 z + b]
//                                 in its low nibble and q_j[16 + 4 z + b] in
//                                 its high nibble (the nibble order of Q4_0)
//   bytes [288, 296)              d, dmin of super-block 2 t, then of 2 t + 1
//                                 (f16 bits, as block_q4_K)
// and w = d * sc_j * q - dmin * m_j as in Q4_K.
#ifndef CORTIQ_OPS_QUANTIZE_Q4_KX16_H_
#define CORTIQ_OPS_QUANTIZE_Q4_KX16_H_

#include <stddef.h>

#include "ops/quantize_k.h"

namespace cortiq {
namespace ops {

// Q4_K super-blocks and sub-blocks per Q4_Kx16 block; weights and bytes per
// Q4_Kx16 block; byte offsets of its parts: the mins m_j (the scales sc_j are
// at 0), the quants, and the super-blocks' d and dmin.
constexpr size_t kQ4_Kx16SuperBlocks = 2;
constexpr size_t kQ4_Kx16SubBlocks = 16;
constexpr size_t kQ4_Kx16BlockWeights = kQ4_Kx16SuperBlocks * kSuperBlockSize;  // 512
constexpr size_t kQ4_Kx16BlockBytes = kQ4_Kx16SuperBlocks * kQ4_KBlockBytes + 8;  // 296
constexpr size_t kQ4_Kx16Mins = 16;
constexpr size_t kQ4_Kx16Quants = 32;
constexpr size_t kQ4_Kx16SuperScales = 288;

// Bytes of one row of `cols` weights (cols a multiple of 512).
constexpr size_t Q4_Kx16RowBytes(size_t cols) {
  return cols / kQ4_Kx16BlockWeights * kQ4_Kx16BlockBytes;
}

// Regroups the n / 256 Q4_K super-blocks at `q4_k` (n a multiple of 512) into
// n / 512 Q4_Kx16 blocks at `out` (Q4_Kx16RowBytes(n) bytes; must not overlap
// q4_k). Every scale, min and quant keeps its value. Aborts if n % 512 != 0.
void Q4_KToQ4_Kx16(const void* q4_k, size_t n, void* out);

// The inverse of Q4_KToQ4_Kx16: the n / 256 Q4_K super-blocks (Q4_KRowBytes(n)
// bytes, byte for byte those Q4_KToQ4_Kx16 was given) of n / 512 Q4_Kx16
// blocks at `out`, which must not overlap the input. Scales or mins above 63
// (not from Q4_KToQ4_Kx16) keep their low 6 bits, as every kernel reads them.
// Aborts if n % 512 != 0.
void Q4_Kx16ToQ4_K(const void* q4_kx16, size_t n, void* out);

// QuantizeRowQ4_K (llama.cpp's quantize_row_q4_K_ref), then Q4_KToQ4_Kx16; n a
// multiple of 512.
void QuantizeRowQ4_Kx16(const float* x, size_t n, void* blocks);

// y = the n weights of n / 512 Q4_Kx16 blocks in row order, exactly the
// values DequantizeRowQ4_K gives for the Q4_K super-blocks they were made
// from.
void DequantizeRowQ4_Kx16(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_Q4_KX16_H_
