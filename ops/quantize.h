// llama.cpp's Q8_0 and Q4_0 block formats (byte for byte, so GGUF tensors are
// used in place), their reference quantizers and dequantizers, and IEEE half
// (f16) conversion for the block scales and for F16 weights. Plain scalar
// C++: quantization runs at compile time; the kernels that read these blocks
// are ops/linear.h, ops/matmul.h and ops/gather.h. The other block formats:
// ops/quantize_legacy.h (Q4_1, Q5_0, Q5_1), ops/quantize_k.h (Q2_K ... Q6_K),
// ops/quantize_iq4.h (IQ4_NL, IQ4_XS).

#ifndef CORTIQ_OPS_QUANTIZE_H_
#define CORTIQ_OPS_QUANTIZE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace cortiq {
namespace ops {

// Weights per block in both formats (ggml-common.h QK8_0 = QK4_0 = 32). A row
// of `cols` weights is cols / 32 consecutive blocks with no padding, so cols
// must be a multiple of 32; a [rows, cols] matrix is rows such rows back to
// back (GGUF's layout of a 2-D Q8_0 / Q4_0 tensor).
constexpr size_t kQuantBlockSize = 32;

// Q8_0 block (ggml-common.h `block_q8_0`): 34 bytes, weight i = d * qs[i].
struct BlockQ8_0 {
  uint16_t d;                  // scale, IEEE binary16 bits (ggml_half)
  int8_t qs[kQuantBlockSize];  // quants
};
static_assert(sizeof(BlockQ8_0) == 2 + kQuantBlockSize, "no padding");

// Q4_0 block (ggml-common.h `block_q4_0`): 18 bytes. Weight j < 16 is the low
// nibble of qs[j], weight j + 16 its high nibble; weight = d * (nibble - 8).
struct BlockQ4_0 {
  uint16_t d;                       // scale, IEEE binary16 bits (ggml_half)
  uint8_t qs[kQuantBlockSize / 2];  // nibbles
};
static_assert(sizeof(BlockQ4_0) == 2 + kQuantBlockSize / 2, "no padding");

constexpr size_t kQ8_0BlockBytes = sizeof(BlockQ8_0);  // 34
constexpr size_t kQ4_0BlockBytes = sizeof(BlockQ4_0);  // 18

// Bytes of one row of `cols` weights (cols a multiple of kQuantBlockSize).
constexpr size_t Q8_0RowBytes(size_t cols) {
  return cols / kQuantBlockSize * kQ8_0BlockBytes;
}
constexpr size_t Q4_0RowBytes(size_t cols) {
  return cols / kQuantBlockSize * kQ4_0BlockBytes;
}

// Exact widening of IEEE binary16 bits to f32 (zero, subnormal, normal, inf;
// a NaN stays a NaN with its payload shifted up), as ggml's
// GGML_FP16_TO_FP32. Inline: the kernels call it once per block.
inline float F16BitsToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in f32 (mant < 2^10).
    const float magnitude = static_cast<float>(mant) * (1.0f / 16777216.0f);
    memcpy(&bits, &magnitude, sizeof(bits));
    bits |= sign;
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf or NaN
  } else {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);  // rebias
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

// f32 -> IEEE binary16 bits, round to nearest, ties to even; magnitudes that
// round above 65504 (>= 65520) become inf; subnormal halves are produced
// (not flushed); a NaN becomes sign | 0x7E00. Identical to ggml's
// GGML_FP32_TO_FP16 (ggml_compute_fp32_to_fp16 in ggml/src/ggml-impl.h, the
// FP16 library's fp16_ieee_from_fp32_value) for every input, and to x86's
// _cvtss_sh(f, 0) for every non-NaN input.
uint16_t F32ToF16Bits(float f);

// F16 as a weight format (GGUF type F16): out[i] = F32ToF16Bits(x[i]) for
// i < n (2 bytes each, little-endian, no alignment needed), as llama-quantize
// converts to F16 (ggml_fp32_to_fp16_row). DequantizeRowF16 widens them
// exactly (F16BitsToF32).
void QuantizeRowF16(const float* x, size_t n, void* out);
void DequantizeRowF16(const void* in, size_t n, float* y);
constexpr size_t F16RowBytes(size_t cols) { return cols * 2; }

// Quantizes x[0, n) into n / 32 Q8_0 blocks at `blocks` (34 bytes each, no
// alignment needed). n must be a multiple of 32 (checked: aborts otherwise).
//
// Exactly llama.cpp's `quantize_row_q8_0_ref` (ggml/src/ggml-quants.c, the
// "reference implementation for deterministic creation of model files" that
// llama-quantize uses for Q8_0), per block:
//
//     amax = max_i |x_i|;  d = amax / 127;  id = d ? 1/d : 0   (all in f32)
//     qs[i] = roundf(x_i * id)     (nearest, halfway cases away from zero)
//     block.d = GGML_FP32_TO_FP16(d)   (F32ToF16Bits)
//
// Note that the quants use the f32 d, not the f16-rounded one. x must be
// finite. One case the C source leaves undefined: if amax / 127 < 2^-128
// (amax < ~3.7e-37), id overflows to inf and x_i * id is +-inf or NaN; x86
// builds of llama.cpp then store 0 (cvttss2si's 0x80000000 truncated to a
// byte), and so does this function. d rounds to a zero f16 there anyway, so
// the block dequantizes to zeros either way.
void QuantizeRowQ8_0(const float* x, size_t n, void* blocks);

// Quantizes x[0, n) into n / 32 Q4_0 blocks (18 bytes each). n must be a
// multiple of 32 (checked).
//
// Exactly llama.cpp's `quantize_row_q4_0_ref` (ggml/src/ggml-quants.c; used
// by llama-quantize for Q4_0 without an importance matrix), per block:
//
//     max = the x_i of largest |x_i| with its sign (the first one on ties;
//           0 if all are zero);  d = max / -8;  id = d ? 1/d : 0
//     q_i = min(15, (int8_t)(x_i * id + 8.5f))   (f32 product and sum, each
//           rounded; the cast truncates toward zero)
//     qs[j] = q_j | q_{j+16} << 4;  block.d = GGML_FP32_TO_FP16(d)
//
// So the extreme value maps to nibble 0 (weight -8 d = max), halfway cases
// round up, and values of the opposite sign clamp at 15 (weight 7 d). An
// all-zero block has d = 0 / -8 = -0.0 (f16 0x8000) and every nibble 8. The
// sum is evaluated without FMA contraction (ops/CMakeLists.txt compiles this
// file with -ffp-contract=off), as the reference defines it. x must be finite;
// as for Q8_0, when |max| / 8 < 2^-128 (id = inf) the nibbles are 0, as in x86
// builds of llama.cpp (d is a zero f16 there).
void QuantizeRowQ4_0(const float* x, size_t n, void* blocks);

// y[i] = d * qs[i] for the n / 32 Q8_0 blocks at `blocks` (n a multiple of 32,
// checked), as llama.cpp's `dequantize_row_q8_0`. Each product is exact in f32
// (an 11-bit f16 significand times a 7-bit integer).
void DequantizeRowQ8_0(const void* blocks, size_t n, float* y);

// y[j] = d * (low nibble of qs[j] - 8), y[j + 16] = d * (high nibble - 8) per
// Q4_0 block, as llama.cpp's `dequantize_row_q4_0`; exact in f32.
void DequantizeRowQ4_0(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_H_
