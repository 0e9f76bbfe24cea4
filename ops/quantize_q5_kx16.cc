// Q5_Kx16 regrouping (see quantize_q5_kx16.h).
#include "ops/quantize_q5_kx16.h"

#include <stdint.h>
#include <string.h>

#include <vector>

#include "hwy/base.h"
#include "ops/quantize_q4_kx16.h"

namespace cortiq {
namespace ops {

// The low 4 bits of Q5_K's quants, its d, dmin and scales are a Q4_K super-block's
// (ops/quantize_k.h), and Q5_Kx16's first 288 bytes and d / dmin are Q4_Kx16's: the
// conversions below go through the Q4_K ones and add the fifth bits.
namespace {

// The Q4_K super-block of a Q5_K one's d, dmin, scales and low quant bits.
BlockQ4_K LowBits(const BlockQ5_K& q5) {
  BlockQ4_K q4;
  q4.d = q5.d;
  q4.dmin = q5.dmin;
  memcpy(q4.scales, q5.scales, sizeof(q4.scales));
  memcpy(q4.qs, q5.qs, sizeof(q4.qs));
  return q4;
}

}  // namespace

void Q5_KToQ5_Kx16(const void* q5_k, size_t n, void* out) {
  HWY_ASSERT(n % kQ5_Kx16BlockWeights == 0);
  const uint8_t* src = static_cast<const uint8_t*>(q5_k);
  uint8_t* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ5_Kx16BlockWeights; ++g) {
    uint8_t* group = dst + g * kQ5_Kx16BlockBytes;
    BlockQ5_K blocks[2];
    memcpy(blocks, src + 2 * g * kQ5_KBlockBytes, sizeof(blocks));
    const BlockQ4_K low[2] = {LowBits(blocks[0]), LowBits(blocks[1])};
    uint8_t q4_kx16[kQ4_Kx16BlockBytes];
    Q4_KToQ4_Kx16(low, kQ5_Kx16BlockWeights, q4_kx16);
    memcpy(group, q4_kx16, kQ5_Kx16HighBits);
    memcpy(group + kQ5_Kx16SuperScales, q4_kx16 + kQ4_Kx16SuperScales, 8);
    // Bit 4 j + b of mask (z, h) = bit k of qh[16 h + 4 z + b] of super-block j / 8, k = j % 8.
    for (size_t z = 0; z < 4; ++z) {
      for (size_t h = 0; h < 2; ++h) {
        uint64_t mask = 0;
        for (size_t j = 0; j < kQ4_Kx16SubBlocks; ++j) {
          for (size_t b = 0; b < 4; ++b) {
            const uint64_t bit = (blocks[j / 8].qh[16 * h + 4 * z + b] >> (j % 8)) & 1;
            mask |= bit << (4 * j + b);
          }
        }
        for (size_t i = 0; i < 8; ++i) {
          group[kQ5_Kx16HighBits + 16 * z + 8 * h + i] = static_cast<uint8_t>(mask >> (8 * i));
        }
      }
    }
  }
}

void Q5_Kx16ToQ5_K(const void* q5_kx16, size_t n, void* out) {
  HWY_ASSERT(n % kQ5_Kx16BlockWeights == 0);
  const uint8_t* src = static_cast<const uint8_t*>(q5_kx16);
  uint8_t* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ5_Kx16BlockWeights; ++g) {
    const uint8_t* group = src + g * kQ5_Kx16BlockBytes;
    uint8_t q4_kx16[kQ4_Kx16BlockBytes];
    memcpy(q4_kx16, group, kQ5_Kx16HighBits);
    memcpy(q4_kx16 + kQ4_Kx16SuperScales, group + kQ5_Kx16SuperScales, 8);
    BlockQ4_K low[2];
    Q4_Kx16ToQ4_K(q4_kx16, kQ5_Kx16BlockWeights, low);
    BlockQ5_K blocks[2];
    memset(blocks, 0, sizeof(blocks));
    for (size_t t = 0; t < 2; ++t) {
      blocks[t].d = low[t].d;
      blocks[t].dmin = low[t].dmin;
      memcpy(blocks[t].scales, low[t].scales, sizeof(low[t].scales));
      memcpy(blocks[t].qs, low[t].qs, sizeof(low[t].qs));
    }
    for (size_t z = 0; z < 4; ++z) {
      for (size_t h = 0; h < 2; ++h) {
        uint64_t mask = 0;
        for (size_t i = 0; i < 8; ++i) {
          mask |= static_cast<uint64_t>(group[kQ5_Kx16HighBits + 16 * z + 8 * h + i]) << (8 * i);
        }
        for (size_t j = 0; j < kQ4_Kx16SubBlocks; ++j) {
          for (size_t b = 0; b < 4; ++b) {
            const int bit = static_cast<int>((mask >> (4 * j + b)) & 1);
            blocks[j / 8].qh[16 * h + 4 * z + b] |= static_cast<uint8_t>(bit << (j % 8));
          }
        }
      }
    }
    memcpy(dst + 2 * g * kQ5_KBlockBytes, blocks, sizeof(blocks));
  }
}

void QuantizeRowQ5_Kx16(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQ5_Kx16BlockWeights == 0);
  std::vector<uint8_t> q5_k(Q5_KRowBytes(n));
  QuantizeRowQ5_K(x, n, q5_k.data());
  Q5_KToQ5_Kx16(q5_k.data(), n, blocks);
}

void DequantizeRowQ5_Kx16(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQ5_Kx16BlockWeights == 0);
  uint8_t q5_k[2 * kQ5_KBlockBytes];
  for (size_t g = 0; g < n / kQ5_Kx16BlockWeights; ++g) {
    Q5_Kx16ToQ5_K(static_cast<const uint8_t*>(blocks) + g * kQ5_Kx16BlockBytes,
                  kQ5_Kx16BlockWeights, q5_k);
    DequantizeRowQ5_K(q5_k, kQ5_Kx16BlockWeights, y + g * kQ5_Kx16BlockWeights);
  }
}

}  // namespace ops
}  // namespace cortiq
