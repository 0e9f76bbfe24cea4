// Q4_Kx16 regrouping (see quantize_q4_kx16.h).
#include "ops/quantize_q4_kx16.h"

#include <stdint.h>
#include <string.h>

#include <vector>

#include "hwy/base.h"

namespace cortiq {
namespace ops {

void Q4_KToQ4_Kx16(const void* q4_k, size_t n, void* out) {
  HWY_ASSERT(n % kQ4_Kx16BlockWeights == 0);
  const uint8_t* src = static_cast<const uint8_t*>(q4_k);
  uint8_t* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ4_Kx16BlockWeights; ++g) {
    uint8_t* group = dst + g * kQ4_Kx16BlockBytes;
    for (size_t h = 0; h < kQ4_Kx16SuperBlocks; ++h) {
      BlockQ4_K block;
      memcpy(&block, src + (kQ4_Kx16SuperBlocks * g + h) * kQ4_KBlockBytes, sizeof(block));
      memcpy(group + kQ4_Kx16SuperScales + 4 * h, &block.d, 2);
      memcpy(group + kQ4_Kx16SuperScales + 4 * h + 2, &block.dmin, 2);
      for (size_t k = 0; k < 8; ++k) {
        const size_t j = 8 * h + k;
        int sc, m;
        KScaleMin(block.scales, k, &sc, &m);
        group[j] = static_cast<uint8_t>(sc);
        group[kQ4_Kx16Mins + j] = static_cast<uint8_t>(m);
        // Sub-block k's quant i: nibble k % 2 of qs[32 (k / 2) + i].
        const uint8_t* qs = block.qs + 32 * (k / 2);
        const int shift = 4 * (k % 2);
        for (size_t z = 0; z < 4; ++z) {
          for (size_t b = 0; b < 4; ++b) {
            const int low = (qs[4 * z + b] >> shift) & 15;
            const int high = (qs[16 + 4 * z + b] >> shift) & 15;
            group[kQ4_Kx16Quants + 64 * z + 4 * j + b] = static_cast<uint8_t>(low | high << 4);
          }
        }
      }
    }
  }
}

void Q4_Kx16ToQ4_K(const void* q4_kx16, size_t n, void* out) {
  HWY_ASSERT(n % kQ4_Kx16BlockWeights == 0);
  const uint8_t* src = static_cast<const uint8_t*>(q4_kx16);
  uint8_t* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ4_Kx16BlockWeights; ++g) {
    const uint8_t* group = src + g * kQ4_Kx16BlockBytes;
    for (size_t h = 0; h < kQ4_Kx16SuperBlocks; ++h) {
      BlockQ4_K block;
      memset(&block, 0, sizeof(block));
      memcpy(&block.d, group + kQ4_Kx16SuperScales + 4 * h, 2);
      memcpy(&block.dmin, group + kQ4_Kx16SuperScales + 4 * h + 2, 2);
      for (size_t k = 0; k < 8; ++k) {
        const size_t j = 8 * h + k;
        const int sc = group[j] & 63, m = group[kQ4_Kx16Mins + j] & 63;
        // ggml-quants.c quantize_row_q4_K_ref's packing, the inverse of KScaleMin.
        if (k < 4) {
          block.scales[k] |= static_cast<uint8_t>(sc);
          block.scales[k + 4] |= static_cast<uint8_t>(m);
        } else {
          block.scales[k + 4] = static_cast<uint8_t>((sc & 0xF) | (m & 0xF) << 4);
          block.scales[k - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
          block.scales[k] |= static_cast<uint8_t>((m >> 4) << 6);
        }
        uint8_t* qs = block.qs + 32 * (k / 2);
        const int shift = 4 * (k % 2);
        for (size_t z = 0; z < 4; ++z) {
          for (size_t b = 0; b < 4; ++b) {
            const int byte = group[kQ4_Kx16Quants + 64 * z + 4 * j + b];
            qs[4 * z + b] |= static_cast<uint8_t>((byte & 15) << shift);
            qs[16 + 4 * z + b] |= static_cast<uint8_t>((byte >> 4) << shift);
          }
        }
      }
      memcpy(dst + (kQ4_Kx16SuperBlocks * g + h) * kQ4_KBlockBytes, &block, sizeof(block));
    }
  }
}

void QuantizeRowQ4_Kx16(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQ4_Kx16BlockWeights == 0);
  std::vector<uint8_t> q4_k(Q4_KRowBytes(n));
  QuantizeRowQ4_K(x, n, q4_k.data());
  Q4_KToQ4_Kx16(q4_k.data(), n, blocks);
}

void DequantizeRowQ4_Kx16(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQ4_Kx16BlockWeights == 0);
  uint8_t q4_k[kQ4_Kx16SuperBlocks * kQ4_KBlockBytes];
  for (size_t g = 0; g < n / kQ4_Kx16BlockWeights; ++g) {
    Q4_Kx16ToQ4_K(static_cast<const uint8_t*>(blocks) + g * kQ4_Kx16BlockBytes,
                  kQ4_Kx16BlockWeights, q4_k);
    DequantizeRowQ4_K(q4_k, kQ4_Kx16BlockWeights, y + g * kQ4_Kx16BlockWeights);
  }
}

}  // namespace ops
}  // namespace cortiq
