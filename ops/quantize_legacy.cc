// llama.cpp-exact Q4_1 / Q5_0 / Q5_1 reference quantizers and dequantizers
// (ops/quantize_legacy.h). Compiled with -ffp-contract=off (ops/CMakeLists.txt):
// the reference rounds every product and sum on its own.

#include "ops/quantize_legacy.h"

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/base.h"  // HWY_ASSERT
#include "ops/quantize.h"
#include "ops/quantize_rounding.h"

namespace cortiq {
namespace ops {
namespace {

using quant_internal::TruncateToInt8;
using quant_internal::TruncateToUint8;

constexpr size_t kHalf = kQuantBlockSize / 2;

// The smallest and largest of xb[0, 32), as the reference's scan from
// (FLT_MAX, -FLT_MAX) with strict comparisons finds them.
void MinMax(const float* xb, float* min, float* max) {
  float lo = FLT_MAX, hi = -FLT_MAX;
  for (size_t j = 0; j < kQuantBlockSize; ++j) {
    if (xb[j] < lo) lo = xb[j];
    if (xb[j] > hi) hi = xb[j];
  }
  *min = lo;
  *max = hi;
}

// The x_i of largest magnitude with its sign, the first of equal magnitudes
// (0 if all are zero), as quantize_row_q4_0_ref / _q5_0_ref scan for it.
float SignedAbsMax(const float* xb) {
  float amax = 0.0f, max = 0.0f;
  for (size_t j = 0; j < kQuantBlockSize; ++j) {
    const float a = xb[j] < 0 ? -xb[j] : xb[j];
    if (amax < a) {
      amax = a;
      max = xb[j];
    }
  }
  return max;
}

// Q5_0 / Q5_1 packing of 32 five-bit quants: low nibbles into qs as in Q4_0,
// bit 4 of quant i into bit i of the little-endian qh.
void Pack5(const uint8_t* q, uint8_t* qs, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (size_t j = 0; j < kHalf; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + kHalf] & 0x0F) << 4));
    qh |= static_cast<uint32_t>((q[j] & 0x10u) >> 4) << j;
    qh |= static_cast<uint32_t>((q[j + kHalf] & 0x10u) >> 4) << (j + kHalf);
  }
  const uint8_t le[4] = {static_cast<uint8_t>(qh), static_cast<uint8_t>(qh >> 8),
                         static_cast<uint8_t>(qh >> 16),
                         static_cast<uint8_t>(qh >> 24)};
  memcpy(qh_bytes, le, 4);
}

// The 5-bit quant of weight j of a Q5_0 / Q5_1 block.
int Quant5(const uint8_t* qs, const uint8_t* qh, size_t j) {
  const int nibble = j < kHalf ? (qs[j] & 0x0F) : (qs[j - kHalf] >> 4);
  const int high = (qh[j / 8] >> (j % 8)) & 1;
  return nibble | (high << 4);
}

}  // namespace

void QuantizeRowQ4_1(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* xb = x + b * kQuantBlockSize;
    float min, max;
    MinMax(xb, &min, &max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_1 block;
    block.d = F32ToF16Bits(d);
    block.m = F32ToF16Bits(min);
    for (size_t j = 0; j < kHalf; ++j) {
      const float x0 = (xb[j] - min) * id;
      const float x1 = (xb[kHalf + j] - min) * id;
      int q0 = TruncateToInt8(x0 + 0.5f);
      int q1 = TruncateToInt8(x1 + 0.5f);
      if (q0 > 15) q0 = 15;
      if (q1 > 15) q1 = 15;
      // As the C code: the clamped values are stored as uint8_t, then
      // combined (only the low 8 bits of the shifted high nibble survive).
      const uint8_t lo = static_cast<uint8_t>(q0);
      const uint8_t hi = static_cast<uint8_t>(q1);
      block.qs[j] = static_cast<uint8_t>(lo | ((hi << 4) & 0xFF));
    }
    memcpy(out + b * kQ4_1BlockBytes, &block, kQ4_1BlockBytes);
  }
}

void QuantizeRowQ5_0(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* xb = x + b * kQuantBlockSize;
    const float d = SignedAbsMax(xb) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t q[kQuantBlockSize];
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      int v = TruncateToInt8(xb[j] * id + 16.5f);
      if (v > 31) v = 31;
      q[j] = static_cast<uint8_t>(v);
    }
    BlockQ5_0 block;
    block.d = F32ToF16Bits(d);
    Pack5(q, block.qs, block.qh);
    memcpy(out + b * kQ5_0BlockBytes, &block, kQ5_0BlockBytes);
  }
}

void QuantizeRowQ5_1(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* xb = x + b * kQuantBlockSize;
    float min, max;
    MinMax(xb, &min, &max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t q[kQuantBlockSize];
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      q[j] = TruncateToUint8((xb[j] - min) * id + 0.5f);
    }
    BlockQ5_1 block;
    block.d = F32ToF16Bits(d);
    block.m = F32ToF16Bits(min);
    Pack5(q, block.qs, block.qh);
    memcpy(out + b * kQ5_1BlockBytes, &block, kQ5_1BlockBytes);
  }
}

void DequantizeRowQ4_1(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    BlockQ4_1 block;
    memcpy(&block, in + b * kQ4_1BlockBytes, kQ4_1BlockBytes);
    const float d = F16BitsToF32(block.d);
    const float m = F16BitsToF32(block.m);
    float* yb = y + b * kQuantBlockSize;
    for (size_t j = 0; j < kHalf; ++j) {
      yb[j] = static_cast<float>(block.qs[j] & 0x0F) * d + m;
      yb[kHalf + j] = static_cast<float>(block.qs[j] >> 4) * d + m;
    }
  }
}

void DequantizeRowQ5_0(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    BlockQ5_0 block;
    memcpy(&block, in + b * kQ5_0BlockBytes, kQ5_0BlockBytes);
    const float d = F16BitsToF32(block.d);
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      y[b * kQuantBlockSize + j] =
          static_cast<float>(Quant5(block.qs, block.qh, j) - 16) * d;
    }
  }
}

void DequantizeRowQ5_1(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    BlockQ5_1 block;
    memcpy(&block, in + b * kQ5_1BlockBytes, kQ5_1BlockBytes);
    const float d = F16BitsToF32(block.d);
    const float m = F16BitsToF32(block.m);
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      y[b * kQuantBlockSize + j] =
          static_cast<float>(Quant5(block.qs, block.qh, j)) * d + m;
    }
  }
}

}  // namespace ops
}  // namespace cortiq
