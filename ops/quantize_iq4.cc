// llama.cpp-exact IQ4_NL / IQ4_XS quantizers and dequantizers
// (ops/quantize_iq4.h). Compiled with -ffp-contract=off (ops/CMakeLists.txt),
// as llama.cpp's ggml-base is built without FMA.

#include "ops/quantize_iq4.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/base.h"  // HWY_ASSERT
#include "ops/quantize.h"
#include "ops/quantize_rounding.h"

namespace cortiq {
namespace ops {
namespace {

using quant_internal::NearestInt;

constexpr float kGroupMaxEps = 1e-15f;  // ggml-quants.c GROUP_MAX_EPS
constexpr int kNtry = 7;                // the scale search of quantize_iq4_*

// ggml-quants.c best_index_int8 for the 16 IQ4 levels: the index of the level
// nearest to x, the upper one on a tie, i.e. the largest j with
// 2x >= v[j - 1] + v[j] (0 if none). x + x and the integer sums are exact, so
// this is the exact midpoint rule. (Older llama.cpp compared x - v[j - 1] <
// v[j] - x in f32; near a midpoint of these levels both differences are
// exact, so the two agree for every finite x.)
int BestIndex(float x) {
  const float x2 = x + x;
  int idx = 0;
  for (int step = 8; step > 0; step >>= 1) {
    const int j = idx + step;
    if (x2 >= static_cast<float>(kIQ4NLValues[j - 1] + kIQ4NLValues[j])) idx = j;
  }
  return idx;
}

// The float scale of one 32-weight group (quantize_row_iq4_nl_impl's loop
// body, no importance weights: w = x^2, ntry = 7). 0 for an all-zero group.
float GroupScale(const float* xb) {
  float weight[32];
  for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j) {
    const float ax = fabsf(xb[j]);
    if (ax > amax) {
      amax = ax;
      max = xb[j];
    }
  }
  if (amax < kGroupMaxEps) return 0.0f;
  const float v0 = static_cast<float>(kIQ4NLValues[0]);
  float d = -max / v0;
  float id = 1 / d;
  float sumqx = 0, sumq2 = 0;
  for (int j = 0; j < 32; ++j) {
    const float q = static_cast<float>(kIQ4NLValues[BestIndex(id * xb[j])]);
    sumqx += weight[j] * q * xb[j];
    sumq2 += weight[j] * q * q;
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
  float best = d * sumqx;
  for (int itry = -kNtry; itry <= kNtry; ++itry) {
    id = static_cast<float>(itry + kIQ4NLValues[0]) / max;
    sumqx = sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
      const float q = static_cast<float>(kIQ4NLValues[BestIndex(id * xb[j])]);
      sumqx += weight[j] * q * xb[j];
      sumq2 += weight[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

// Indices of 32 weights in Q4_0's nibble layout.
void PackIndices(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
  }
}

int Index(const uint8_t* qs, size_t j) {
  return j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4);
}

}  // namespace

void QuantizeRowIQ4_NL(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* xb = x + b * kQuantBlockSize;
    const float scale = GroupScale(xb);
    BlockIQ4_NL y;
    y.d = F32ToF16Bits(scale);
    const float id = scale != 0 ? 1 / scale : 0;
    uint8_t L[32];
    for (int j = 0; j < 32; ++j) L[j] = static_cast<uint8_t>(BestIndex(id * xb[j]));
    PackIndices(L, y.qs);
    memcpy(out + b * kIQ4_NLBlockBytes, &y, kIQ4_NLBlockBytes);
  }
}

void QuantizeRowIQ4_XS(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    float scales[8];
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < 8; ++ib) {
      scales[ib] = GroupScale(x + 32 * ib);
      const float abs_d = fabsf(scales[ib]);
      if (abs_d > amax_scale) {
        amax_scale = abs_d;
        max_scale = scales[ib];
      }
    }
    BlockIQ4_XS y;
    memset(&y, 0, sizeof(y));
    const float d = -max_scale / 32;
    y.d = F32ToF16Bits(d);
    const float id = d != 0 ? 1 / d : 0.0f;
    for (int ib = 0; ib < 8; ++ib) {
      int l = NearestInt(id * scales[ib]);
      l = l < -32 ? -32 : (l > 31 ? 31 : l);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0 ? 1 / dl : 0.0f;
      const float* xb = x + 32 * ib;
      uint8_t L[32];
      for (int j = 0; j < 32; ++j) L[j] = static_cast<uint8_t>(BestIndex(idl * xb[j]));
      PackIndices(L, y.qs + 16 * ib);
      l += 32;
      const int l_l = l & 0xF, l_h = l >> 4;
      if (ib % 2 == 0) {
        y.scales_l[ib / 2] = static_cast<uint8_t>(l_l);
      } else {
        y.scales_l[ib / 2] = static_cast<uint8_t>(y.scales_l[ib / 2] | (l_l << 4));
      }
      y.scales_h = static_cast<uint16_t>(y.scales_h | (l_h << (2 * ib)));
    }
    memcpy(out + b * kIQ4_XSBlockBytes, &y, kIQ4_XSBlockBytes);
  }
}

void DequantizeRowIQ4_NL(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQuantBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kQuantBlockSize; ++b) {
    BlockIQ4_NL blk;
    memcpy(&blk, in + b * kIQ4_NLBlockBytes, kIQ4_NLBlockBytes);
    const float d = F16BitsToF32(blk.d);
    for (size_t j = 0; j < kQuantBlockSize; ++j) {
      y[b * kQuantBlockSize + j] =
          d * static_cast<float>(kIQ4NLValues[Index(blk.qs, j)]);
    }
  }
}

void DequantizeRowIQ4_XS(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b) {
    BlockIQ4_XS blk;
    memcpy(&blk, in + b * kIQ4_XSBlockBytes, kIQ4_XSBlockBytes);
    const float d = F16BitsToF32(blk.d);
    float* yb = y + b * kSuperBlockSize;
    for (size_t k = 0; k < 8; ++k) {
      const float dl = d * static_cast<float>(IQ4_XSScale(blk, k));
      for (size_t j = 0; j < 32; ++j) {
        yb[32 * k + j] =
            dl * static_cast<float>(kIQ4NLValues[Index(blk.qs + 16 * k, j)]);
      }
    }
  }
}

}  // namespace ops
}  // namespace cortiq
