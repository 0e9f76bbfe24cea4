// llama.cpp's remaining 32-weight ("legacy") block formats Q4_1, Q5_0 and Q5_1,
// byte for byte as ggml/src/ggml-common.h defines them (block_q4_1,
// block_q5_0, block_q5_1), so GGUF tensors are used in place; their reference
// quantizers (the blocks llama-quantize writes without an importance matrix)
// and dequantizers (ggml/src/ggml-quants.c). Q8_0 and Q4_0 are in
// ops/quantize.h. Plain scalar C++; the kernels that read these blocks are in
// ops/linear.h, ops/matmul.h and ops/gather.h.
//
// A row of `cols` weights (cols a multiple of 32) is cols / 32 consecutive
// blocks with no padding; a [rows, cols] matrix is rows such rows back to back.
// Every function below checks n % 32 == 0 (aborts otherwise).

#ifndef CORTIQ_OPS_QUANTIZE_LEGACY_H_
#define CORTIQ_OPS_QUANTIZE_LEGACY_H_

#include <stddef.h>
#include <stdint.h>

#include "ops/quantize.h"  // kQuantBlockSize (32)

namespace cortiq {
namespace ops {

// Q4_1 (block_q4_1): 20 bytes. Weight j < 16 is the low nibble q of qs[j],
// weight j + 16 its high nibble; w = d * q + m (q in [0, 15]).
struct BlockQ4_1 {
  uint16_t d;                       // scale, IEEE binary16 bits (ggml_half)
  uint16_t m;                       // offset (the block's minimum), f16 bits
  uint8_t qs[kQuantBlockSize / 2];  // nibbles
};
static_assert(sizeof(BlockQ4_1) == 4 + kQuantBlockSize / 2, "no padding");

// Q5_0 (block_q5_0): 22 bytes. The 5-bit quant of weight j is the nibble of
// Q4_0's layout (low nibble of qs[j] for j < 16, high nibble of qs[j - 16]
// otherwise) plus bit j of the little-endian 32-bit qh as its bit 4;
// w = d * (q - 16).
struct BlockQ5_0 {
  uint16_t d;                       // scale, f16 bits
  uint8_t qh[4];                    // bit 4 of every quant (bit j: weight j)
  uint8_t qs[kQuantBlockSize / 2];  // low 4 bits
};
static_assert(sizeof(BlockQ5_0) == 2 + 4 + kQuantBlockSize / 2, "no padding");

// Q5_1 (block_q5_1): 24 bytes. Quants as Q5_0 (q in [0, 31]); w = d * q + m.
struct BlockQ5_1 {
  uint16_t d;                       // scale, f16 bits
  uint16_t m;                       // offset, f16 bits
  uint8_t qh[4];                    // bit 4 of every quant
  uint8_t qs[kQuantBlockSize / 2];  // low 4 bits
};
static_assert(sizeof(BlockQ5_1) == 4 + 4 + kQuantBlockSize / 2, "no padding");

constexpr size_t kQ4_1BlockBytes = sizeof(BlockQ4_1);  // 20
constexpr size_t kQ5_0BlockBytes = sizeof(BlockQ5_0);  // 22
constexpr size_t kQ5_1BlockBytes = sizeof(BlockQ5_1);  // 24

// Bytes of one row of `cols` weights (cols a multiple of 32).
constexpr size_t Q4_1RowBytes(size_t cols) {
  return cols / kQuantBlockSize * kQ4_1BlockBytes;
}
constexpr size_t Q5_0RowBytes(size_t cols) {
  return cols / kQuantBlockSize * kQ5_0BlockBytes;
}
constexpr size_t Q5_1RowBytes(size_t cols) {
  return cols / kQuantBlockSize * kQ5_1BlockBytes;
}

// Quantizes x[0, n) into n / 32 Q4_1 blocks: llama.cpp's
// `quantize_row_q4_1_ref` (what llama-quantize writes for Q4_1 without an
// importance matrix), per block, in f32:
//
//     min, max = the smallest and largest x_i;  d = (max - min) / 15
//     id = d ? 1/d : 0;  q_i = min(15, (int8_t)((x_i - min) * id + 0.5f))
//     block.d = f16(d), block.m = f16(min)   (F32ToF16Bits)
//
// (each operation rounded on its own, no FMA contraction; the cast truncates
// toward zero, and a value the cast cannot represent (id = inf) gives 0 as on
// x86). x must be finite.
void QuantizeRowQ4_1(const float* x, size_t n, void* blocks);

// Q5_0 (`quantize_row_q5_0_ref`): as Q4_0 with 5 bits, per block:
//
//     max = the x_i of largest |x_i| with its sign (the first on ties);
//     d = max / -16;  id = d ? 1/d : 0;
//     q_i = min(31, (int8_t)(x_i * id + 16.5f));  block.d = f16(d)
//
// then the low 4 bits of q_j / q_{j+16} go to qs[j] (low / high nibble) and
// bit 4 of q_i to bit i of qh.
void QuantizeRowQ5_0(const float* x, size_t n, void* blocks);

// Q5_1 (`quantize_row_q5_1_ref`): as Q4_1 with d = (max - min) / 31 and
// q_i = (uint8_t)((x_i - min) * id + 0.5f), without a clamp (a value that
// rounds to 32 wraps, as in llama.cpp); packed as Q5_0.
void QuantizeRowQ5_1(const float* x, size_t n, void* blocks);

// y = the dequantized weights of the n / 32 blocks (llama.cpp's
// `dequantize_row_q4_1` / `_q5_0` / `_q5_1`, bit for bit). d * q is exact in
// f32, so Q4_1 / Q5_1 round once (d * q + m) and Q5_0 is exact.
void DequantizeRowQ4_1(const void* blocks, size_t n, float* y);
void DequantizeRowQ5_0(const void* blocks, size_t n, float* y);
void DequantizeRowQ5_1(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_LEGACY_H_
