// llama.cpp's K-quant super-block formats Q2_K, Q3_K, Q4_K, Q5_K and Q6_K,
// byte for byte as ggml/src/ggml-common.h defines them (block_q2_K ...
// block_q6_K, QK_K = 256), so GGUF tensors are used in place; their reference
// quantizers (`quantize_row_q*_K_ref` in ggml/src/ggml-quants.c, which
// llama-quantize uses for these types when no importance matrix is given) and
// dequantizers (`dequantize_row_q*_K`). Plain scalar C++; the kernels that read
// these blocks are in ops/linear.h, ops/matmul.h and ops/gather.h.
//
// A row of `cols` weights (cols a multiple of 256) is cols / 256 consecutive
// super-blocks with no padding; a [rows, cols] matrix is rows such rows back to
// back. Every function below checks n % 256 == 0 (aborts otherwise).
//
// Weight numbering: weight i (0 <= i < 256) of a super-block belongs to
// sub-block i / 16 (Q2_K, Q3_K, Q6_K: 16 sub-blocks of 16) or i / 32 (Q4_K,
// Q5_K: 8 sub-blocks of 32). The bit positions of its quant are given per
// format below.
//
// Dequantized values: every formula below is a product of an f16 value, a
// small integer scale and a small integer quant, minus (Q2_K, Q4_K, Q5_K) an
// f16 value times a small integer min. The products are exact in f32, so the
// f32 weight llama.cpp's dequantizer computes is the exact value rounded once
// (Q3_K, Q6_K: exact). DequantizeRow* returns exactly those f32 values.

#ifndef CORTIQ_OPS_QUANTIZE_K_H_
#define CORTIQ_OPS_QUANTIZE_K_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {
namespace ops {

// Weights per super-block (ggml-common.h QK_K).
constexpr size_t kSuperBlockSize = 256;
// Bytes of the packed 6-bit sub-block scales and mins of Q4_K / Q5_K, and of
// the 6-bit scales of Q3_K (K_SCALE_SIZE).
constexpr size_t kKScaleSize = 12;

// Q2_K (block_q2_K): 84 bytes. Sub-block k (weights 16k .. 16k + 15) has the
// 4-bit scale sc = scales[k] & 15 and 4-bit min m = scales[k] >> 4. The 2-bit
// quant q of weight i (half h = i / 128, j = i % 128) is bits 2 (j / 32) ..
// 2 (j / 32) + 1 of qs[32 h + j % 32]. w = d * sc * q - dmin * m.
struct BlockQ2_K {
  uint8_t scales[kSuperBlockSize / 16];  // scale | min << 4, per sub-block
  uint8_t qs[kSuperBlockSize / 4];       // 2-bit quants
  uint16_t d;                            // super-block scale, f16 bits
  uint16_t dmin;                         // super-block scale of the mins
};
static_assert(sizeof(BlockQ2_K) == 84, "no padding");

// Q3_K (block_q3_K): 110 bytes. Sub-block k has the 6-bit scale s_k whose
// low 4 bits are scales[k] & 15 (k < 8) or scales[k - 8] >> 4 (k >= 8) and
// whose high 2 bits are bits 2 (k / 4), +1 of scales[8 + k % 4]. The 3-bit
// quant of weight i: low 2 bits as Q2_K's quant, high bit = bit i / 32 of
// hmask[i % 32]. w = d * (s_k - 32) * (q_low + 4 * high - 4).
struct BlockQ3_K {
  uint8_t hmask[kSuperBlockSize / 8];  // bit 2 of every quant
  uint8_t qs[kSuperBlockSize / 4];     // bits 0, 1 (Q2_K's layout)
  uint8_t scales[kKScaleSize];         // 6-bit sub-block scales
  uint16_t d;                          // super-block scale, f16 bits
};
static_assert(sizeof(BlockQ3_K) == 110, "no padding");

// Q4_K (block_q4_K): 144 bytes. Sub-block k (weights 32k .. 32k + 31) has a
// 6-bit scale sc_k and 6-bit min m_k (ggml-quants.c get_scale_min_k4):
// k < 4: sc = scales[k] & 63, m = scales[k + 4] & 63; k >= 4:
// sc = (scales[k + 4] & 15) | (scales[k - 4] >> 6) << 4,
// m = (scales[k + 4] >> 4) | (scales[k] >> 6) << 4. The 4-bit quant of weight
// i (chunk c = i / 64, j = i % 64) is the low nibble of qs[32 c + j] for
// j < 32, the high nibble of qs[32 c + j - 32] otherwise.
// w = d * sc_k * q - dmin * m_k.
struct BlockQ4_K {
  uint16_t d;                   // super-block scale, f16 bits
  uint16_t dmin;                // super-block scale of the mins, f16 bits
  uint8_t scales[kKScaleSize];  // 6-bit scales and mins
  uint8_t qs[kSuperBlockSize / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "no padding");

// Q5_K (block_q5_K): 176 bytes. Scales, mins and the low 4 bits of the quants
// as Q4_K; bit 4 of the quant of weight i is bit i / 32 of qh[i % 32].
// w = d * sc_k * q - dmin * m_k, q in [0, 31].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kSuperBlockSize / 8];  // bit 4 of every quant
  uint8_t qs[kSuperBlockSize / 2];  // bits 0..3 (Q4_K's layout)
};
static_assert(sizeof(BlockQ5_K) == 176, "no padding");

// Q6_K (block_q6_K): 210 bytes. Sub-block k (16 weights) has the int8 scale
// scales[k]. The 6-bit quant of weight i (half h = i / 128, j = i % 128,
// quarter t = j / 32, l = j % 32): low 4 bits = the low (t < 2) or high
// (t >= 2) nibble of ql[64 h + 32 (t % 2) + l]; high 2 bits = bits 2t, 2t + 1
// of qh[32 h + l]. w = d * scales[k] * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kSuperBlockSize / 2];       // bits 0..3
  uint8_t qh[kSuperBlockSize / 4];       // bits 4, 5
  int8_t scales[kSuperBlockSize / 16];   // 8-bit sub-block scales
  uint16_t d;                            // super-block scale, f16 bits
};
static_assert(sizeof(BlockQ6_K) == 210, "no padding");

constexpr size_t kQ2_KBlockBytes = sizeof(BlockQ2_K);  // 84
constexpr size_t kQ3_KBlockBytes = sizeof(BlockQ3_K);  // 110
constexpr size_t kQ4_KBlockBytes = sizeof(BlockQ4_K);  // 144
constexpr size_t kQ5_KBlockBytes = sizeof(BlockQ5_K);  // 176
constexpr size_t kQ6_KBlockBytes = sizeof(BlockQ6_K);  // 210

// Bytes of one row of `cols` weights (cols a multiple of 256).
constexpr size_t Q2_KRowBytes(size_t cols) {
  return cols / kSuperBlockSize * kQ2_KBlockBytes;
}
constexpr size_t Q3_KRowBytes(size_t cols) {
  return cols / kSuperBlockSize * kQ3_KBlockBytes;
}
constexpr size_t Q4_KRowBytes(size_t cols) {
  return cols / kSuperBlockSize * kQ4_KBlockBytes;
}
constexpr size_t Q5_KRowBytes(size_t cols) {
  return cols / kSuperBlockSize * kQ5_KBlockBytes;
}
constexpr size_t Q6_KRowBytes(size_t cols) {
  return cols / kSuperBlockSize * kQ6_KBlockBytes;
}

// The 6-bit scale and min of sub-block k (< 8) of Q4_K / Q5_K `scales`
// (ggml-quants.c get_scale_min_k4).
inline void KScaleMin(const uint8_t* scales, size_t k, int* sc, int* m) {
  if (k < 4) {
    *sc = scales[k] & 63;
    *m = scales[k + 4] & 63;
  } else {
    *sc = (scales[k + 4] & 0xF) | ((scales[k - 4] >> 6) << 4);
    *m = (scales[k + 4] >> 4) | ((scales[k] >> 6) << 4);
  }
}

// The signed scale s_k - 32 (in [-32, 31]) of sub-block k (< 16) of Q3_K
// `scales`.
inline int Q3_KScale(const uint8_t* scales, size_t k) {
  const int low = k < 8 ? (scales[k] & 0xF) : (scales[k - 8] >> 4);
  const int high = (scales[8 + k % 4] >> (2 * (k / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// Quantize x[0, n) into n / 256 super-blocks of the format, bit-identical to
// llama.cpp's `quantize_row_q2_K_ref` ... `quantize_row_q6_K_ref`
// (ggml/src/ggml-quants.c; with their helpers make_qkx2_quants (Q2_K, Q4_K,
// Q5_K: a min and scale fitted by weighted least squares over a grid of
// candidate scales), make_q3_quants (Q3_K) and make_qx_quants (Q6_K)), every
// f32 operation in the reference's order, rounded on its own (this file is
// compiled without FMA contraction, as llama.cpp's ggml-base is), and the
// float -> integer conversions as x86 builds of llama.cpp perform them
// (ops/quantize_rounding.h). In outline: each sub-block gets a float scale
// (and min); the super-block stores f16 d (and dmin) = max / 63 (Q4_K,
// Q5_K), max / 15 (Q2_K), -max / 32 (Q3_K) or -max / 128 (Q6_K) and the
// sub-block scales quantized against it; then every weight is requantized
// with its sub-block's dequantized scale (nearest integer, clamped). x must be
// finite.
void QuantizeRowQ2_K(const float* x, size_t n, void* blocks);
void QuantizeRowQ3_K(const float* x, size_t n, void* blocks);
void QuantizeRowQ4_K(const float* x, size_t n, void* blocks);
void QuantizeRowQ5_K(const float* x, size_t n, void* blocks);
void QuantizeRowQ6_K(const float* x, size_t n, void* blocks);

// y = the dequantized weights of the n / 256 super-blocks: llama.cpp's
// `dequantize_row_q2_K` ... `dequantize_row_q6_K`, bit for bit (the formulas
// above, products exact in f32, at most one rounding per weight).
void DequantizeRowQ2_K(const void* blocks, size_t n, float* y);
void DequantizeRowQ3_K(const void* blocks, size_t n, float* y);
void DequantizeRowQ4_K(const void* blocks, size_t n, float* y);
void DequantizeRowQ5_K(const void* blocks, size_t n, float* y);
void DequantizeRowQ6_K(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_K_H_
