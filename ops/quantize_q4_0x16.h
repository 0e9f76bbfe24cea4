// Q4_0x16: llama.cpp's Q4_0 blocks regrouped sixteen at a time so that a
// 64-byte load holds 4 bytes of each of 16 blocks, one block per 32-bit lane.
// The same weights, bit for bit, as the Q4_0 row it is made from (no
// requantization): cortiq-compile stores Q4_0 matrices whose rows are whole
// groups of 16 blocks this way (passes/assign_storage_formats.cc), because the
// decode kernel (ops/linear_q4_0x16-inl.h) then needs one scale multiply per 16
// blocks instead of one per block, and no byte widening. Not a GGUF type.
//
// Layout of one Q4_0x16 block (512 weights = Q4_0 blocks j = 0..15 of a row,
// 288 bytes, the size of the 16 Q4_0 blocks):
//   bytes [0, 32)                 d_0 .. d_15, the blocks' f16 scales
//   bytes [32 + 64 z, 96 + 64 z)  for z = 0..3: bytes [4 z, 4 z + 4) of block
//                                 j's quants qs at 32 + 64 z + 4 j, j = 0..15
// so weight i of block j (i < 16: low nibble of qs[i]; i >= 16: high nibble
// of qs[i - 16]) is a nibble of byte 32 + 64 ((i % 16) / 4) + 4 j + i % 4,
// and w = d_j * (nibble - 8) as in Q4_0 (ops/quantize.h).
#ifndef CORTIQ_OPS_QUANTIZE_Q4_0X16_H_
#define CORTIQ_OPS_QUANTIZE_Q4_0X16_H_

#include <stddef.h>

#include "ops/quantize.h"

namespace cortiq {
namespace ops {

// Q4_0 blocks per Q4_0x16 block, weights and bytes per Q4_0x16 block.
constexpr size_t kQ4_0x16Blocks = 16;
constexpr size_t kQ4_0x16BlockWeights = kQ4_0x16Blocks * kQuantBlockSize;  // 512
constexpr size_t kQ4_0x16BlockBytes = kQ4_0x16Blocks * kQ4_0BlockBytes;   // 288

// Bytes of one row of `cols` weights (cols a multiple of 512): Q4_0RowBytes.
constexpr size_t Q4_0x16RowBytes(size_t cols) {
  return cols / kQ4_0x16BlockWeights * kQ4_0x16BlockBytes;
}

// Regroups the n / 32 Q4_0 blocks at `q4_0` (n a multiple of 512) into n / 512
// Q4_0x16 blocks at `out` (Q4_0x16RowBytes(n) bytes; must not overlap q4_0).
// A byte permutation: every scale and nibble keeps its bits.
void Q4_0ToQ4_0x16(const void* q4_0, size_t n, void* out);

// The inverse of Q4_0ToQ4_0x16: the n / 32 Q4_0 blocks of n / 512 Q4_0x16
// blocks.
void Q4_0x16ToQ4_0(const void* q4_0x16, size_t n, void* out);

// QuantizeRowQ4_0 (llama.cpp's quantize_row_q4_0_ref), then Q4_0ToQ4_0x16;
// n a multiple of 512.
void QuantizeRowQ4_0x16(const float* x, size_t n, void* blocks);

// y = the n weights of n / 512 Q4_0x16 blocks in row order, exactly the
// values DequantizeRowQ4_0 gives for the Q4_0 blocks they were made from.
void DequantizeRowQ4_0x16(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_Q4_0X16_H_
