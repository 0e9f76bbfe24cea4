// Q8_0x16: llama.cpp's Q8_0 blocks regrouped sixteen at a time so that a
// 64-byte load holds 4 quants of each of 16 blocks, one block per 32-bit lane
// (as Q4_0x16, ops/quantize_q4_0x16.h, for Q4_0). The same weights, bit for
// bit, as the Q8_0 row it is made from (no requantization): cortiq-compile
// stores Q8_0 matrices whose rows are whole groups of 16 blocks this way
// (passes/assign_storage_formats.cc), because the decode kernels then apply
// one scale per 16 blocks, and with AVX-512 VNNI multiply 64 quants by 64
// activation digits per instruction with every lane's sum belonging to one
// block (ops/linear_vnni.h). Not a GGUF type.
//
// Layout of one Q8_0x16 block (512 weights = Q8_0 blocks j = 0..15 of a row,
// 544 bytes, the size of the 16 Q8_0 blocks):
//   bytes [0, 32)                 d_0 .. d_15, the blocks' f16 scales
//   bytes [32 + 64 v, 96 + 64 v)  for v = 0..7: quants [4 v, 4 v + 4) of block
//                                 j at 32 + 64 v + 4 j, j = 0..15
// so weight i of block j is the int8 at byte 32 + 64 (i / 4) + 4 j + i % 4,
// and w = d_j * q as in Q8_0 (ops/quantize.h).
#ifndef CORTIQ_OPS_QUANTIZE_Q8_0X16_H_
#define CORTIQ_OPS_QUANTIZE_Q8_0X16_H_

#include <stddef.h>

#include "ops/quantize.h"

namespace cortiq {
namespace ops {

// Q8_0 blocks per Q8_0x16 block, weights and bytes per Q8_0x16 block.
constexpr size_t kQ8_0x16Blocks = 16;
constexpr size_t kQ8_0x16BlockWeights = kQ8_0x16Blocks * kQuantBlockSize;  // 512
constexpr size_t kQ8_0x16BlockBytes = kQ8_0x16Blocks * kQ8_0BlockBytes;   // 544

// Bytes of one row of `cols` weights (cols a multiple of 512): Q8_0RowBytes.
constexpr size_t Q8_0x16RowBytes(size_t cols) {
  return cols / kQ8_0x16BlockWeights * kQ8_0x16BlockBytes;
}

// Regroups the n / 32 Q8_0 blocks at `q8_0` (n a multiple of 512) into n / 512
// Q8_0x16 blocks at `out` (Q8_0x16RowBytes(n) bytes; must not overlap q8_0).
// A byte permutation: every scale and quant keeps its bits.
void Q8_0ToQ8_0x16(const void* q8_0, size_t n, void* out);

// The inverse of Q8_0ToQ8_0x16: the n / 32 Q8_0 blocks of n / 512 Q8_0x16
// blocks.
void Q8_0x16ToQ8_0(const void* q8_0x16, size_t n, void* out);

// QuantizeRowQ8_0 (llama.cpp's quantize_row_q8_0_ref), then Q8_0ToQ8_0x16;
// n a multiple of 512.
void QuantizeRowQ8_0x16(const float* x, size_t n, void* blocks);

// y = the n weights of n / 512 Q8_0x16 blocks in row order, exactly the
// values DequantizeRowQ8_0 gives for the Q8_0 blocks they were made from.
void DequantizeRowQ8_0x16(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_Q8_0X16_H_
