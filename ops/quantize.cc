// llama.cpp-exact Q8_0 / Q4_0 reference quantizers, dequantizers and the f32
// -> f16 rounding of their scales (ops/quantize.h). Compiled with
// -ffp-contract=off (ops/CMakeLists.txt): Q4_0's x * id + 8.5f must round the
// product and the sum separately.

#include "ops/quantize.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/base.h"  // HWY_ASSERT
#include "ops/quantize_rounding.h"

namespace cortiq {
namespace ops {

uint16_t F32ToF16Bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7E00u;  // NaN (as ggml)
  // 65520 = 0x477FF000 is halfway between 65504 (the largest half) and 2^16;
  // the tie goes to the even side, 2^16, which overflows: inf from there up.
  if (abs >= 0x477FF000u) return sign | 0x7C00u;
  if (abs >= 0x38800000u) {
    // Normal half (|f| >= 2^-14): rebias the exponent (127 - 15 = 112) and
    // round the 23-bit mantissa to 10 bits; a carry out of the mantissa
    // correctly bumps the exponent.
    const uint32_t rebiased = abs - (112u << 23);
    uint32_t h = rebiased >> 13;
    const uint32_t rest = rebiased & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal half or zero: the result is round(|f| / 2^-24). |f| = m *
  // 2^(e - 150) with m the 24-bit significand and e the biased exponent, so
  // |f| / 2^-24 = m >> (126 - e). Below 2^-25 (e < 102) everything rounds to
  // zero (2^-25 itself is a tie, which goes to the even 0).
  const uint32_t e = abs >> 23;
  if (e < 102) return sign;
  const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;  // e >= 102: normal f32
  const uint32_t shift = 126 - e;                    // in [14, 24]
  uint32_t h = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;  // may reach 0x400
  return static_cast<uint16_t>(sign | h);
}

using quant_internal::TruncateToInt8;

void QuantizeRowQ8_0(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* xb = x + b * kQuantBlockSize;
    float amax = 0.0f;
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      amax = fmaxf(amax, fabsf(xb[j]));  // MAX(amax, fabsf(v)) for finite x
    }
    const float d = amax / 127.0f;  // (1 << 7) - 1
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0 block;
    block.d = F32ToF16Bits(d);
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      block.qs[j] = TruncateToInt8(roundf(xb[j] * id));
    }
    memcpy(out + b * kQ8_0BlockBytes, &block, kQ8_0BlockBytes);
  }
}

void QuantizeRowQ4_0(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  constexpr size_t kHalf = kQuantBlockSize / 2;
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* xb = x + b * kQuantBlockSize;
    float amax = 0.0f;
    float max = 0.0f;
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      if (amax < fabsf(xb[j])) {  // strict: the first of equal magnitudes wins
        amax = fabsf(xb[j]);
        max = xb[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_0 block;
    block.d = F32ToF16Bits(d);
    for (size_t j = 0; j < kHalf; ++j) {
      const float x0 = xb[j] * id;
      const float x1 = xb[kHalf + j] * id;
      int q0 = TruncateToInt8(x0 + 8.5f);
      int q1 = TruncateToInt8(x1 + 8.5f);
      if (q0 > 15) q0 = 15;
      if (q1 > 15) q1 = 15;
      block.qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
    memcpy(out + b * kQ4_0BlockBytes, &block, kQ4_0BlockBytes);
  }
}

void QuantizeRowF16(const float* x, size_t n, void* out) {
  uint8_t* bytes = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = F32ToF16Bits(x[i]);
    memcpy(bytes + 2 * i, &h, sizeof(h));
  }
}

void DequantizeRowF16(const void* in, size_t n, float* y) {
  const uint8_t* bytes = static_cast<const uint8_t*>(in);
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    memcpy(&h, bytes + 2 * i, sizeof(h));
    y[i] = F16BitsToF32(h);
  }
}

void DequantizeRowQ8_0(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    BlockQ8_0 block;
    memcpy(&block, in + b * kQ8_0BlockBytes, kQ8_0BlockBytes);
    const float d = F16BitsToF32(block.d);
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      y[b * kQuantBlockSize + j] = static_cast<float>(block.qs[j]) * d;
    }
  }
}

void DequantizeRowQ4_0(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  constexpr size_t kHalf = kQuantBlockSize / 2;
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    BlockQ4_0 block;
    memcpy(&block, in + b * kQ4_0BlockBytes, kQ4_0BlockBytes);
    const float d = F16BitsToF32(block.d);
    float* yb = y + b * kQuantBlockSize;
    for (size_t j = 0; j < kHalf; ++j) {
      yb[j] = static_cast<float>((block.qs[j] & 0x0F) - 8) * d;
      yb[kHalf + j] = static_cast<float>((block.qs[j] >> 4) - 8) * d;
    }
  }
}

}  // namespace ops
}  // namespace cortiq
