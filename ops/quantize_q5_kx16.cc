// Q5_Kx16 regrouping (see quantize_q5_kx16.h).
#include "ops/quantize_q5_kx16.h"

#include <stdint.h>
#include <string.h>

#include <vector>

#include "hwy/base.h"

namespace cortiq {
namespace ops {

void Q5_KToQ5_Kx16(const void* q5_k, size_t n, void* out) {
  HWY_ASSERT(n % kQ5_Kx16BlockWeights == 0);
  const uint8_t* src = static_cast<const uint8_t*>(q5_k);
  uint8_t* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ5_Kx16BlockWeights; ++g) {
    uint8_t* group = dst + g * kQ5_Kx16BlockBytes;
    uint64_t masks[4][2] = {};
    for (size_t t = 0; t < 2; ++t) {
      BlockQ5_K block;
      memcpy(&block, src + (2 * g + t) * kQ5_KBlockBytes, sizeof(block));
      memcpy(group + kQ5_Kx16SuperScales + 4 * t, &block.d, 2);
      memcpy(group + kQ5_Kx16SuperScales + 4 * t + 2, &block.dmin, 2);
      for (size_t k = 0; k < 8; ++k) {
        const size_t j = 8 * t + k;
        int sc, m;
        KScaleMin(block.scales, k, &sc, &m);
        group[j] = static_cast<uint8_t>(sc);
        group[kQ5_Kx16Mins + j] = static_cast<uint8_t>(m);
        // Sub-block k's quant i: nibble k % 2 of qs[32 (k / 2) + i], bit k of qh[i].
        const uint8_t* qs = block.qs + 32 * (k / 2);
        const int shift = 4 * (k % 2);
        for (size_t z = 0; z < 4; ++z) {
          for (size_t b = 0; b < 4; ++b) {
            const int low = (qs[4 * z + b] >> shift) & 15;
            const int high = (qs[16 + 4 * z + b] >> shift) & 15;
            group[kQ5_Kx16Quants + 64 * z + 4 * j + b] = static_cast<uint8_t>(low | high << 4);
            for (size_t h = 0; h < 2; ++h) {
              const uint64_t bit = (block.qh[16 * h + 4 * z + b] >> k) & 1;
              masks[z][h] |= bit << (4 * j + b);
            }
          }
        }
      }
    }
    for (size_t z = 0; z < 4; ++z) {
      for (size_t h = 0; h < 2; ++h) {
        uint8_t bytes[8];
        for (size_t i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(masks[z][h] >> (8 * i));
        memcpy(group + kQ5_Kx16HighBits + 16 * z + 8 * h, bytes, 8);
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
    uint64_t masks[4][2];
    for (size_t z = 0; z < 4; ++z) {
      for (size_t h = 0; h < 2; ++h) {
        const uint8_t* bytes = group + kQ5_Kx16HighBits + 16 * z + 8 * h;
        masks[z][h] = 0;
        for (size_t i = 0; i < 8; ++i) masks[z][h] |= static_cast<uint64_t>(bytes[i]) << (8 * i);
      }
    }
    for (size_t t = 0; t < 2; ++t) {
      BlockQ5_K block;
      memset(&block, 0, sizeof(block));
      memcpy(&block.d, group + kQ5_Kx16SuperScales + 4 * t, 2);
      memcpy(&block.dmin, group + kQ5_Kx16SuperScales + 4 * t + 2, 2);
      for (size_t k = 0; k < 8; ++k) {
        const size_t j = 8 * t + k;
        const int sc = group[j] & 63, m = group[kQ5_Kx16Mins + j] & 63;
        // ggml-quants.c quantize_row_q5_K_ref's packing, the inverse of KScaleMin.
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
            const int byte = group[kQ5_Kx16Quants + 64 * z + 4 * j + b];
            qs[4 * z + b] |= static_cast<uint8_t>((byte & 15) << shift);
            qs[16 + 4 * z + b] |= static_cast<uint8_t>((byte >> 4) << shift);
            for (size_t h = 0; h < 2; ++h) {
              const int bit = static_cast<int>((masks[z][h] >> (4 * j + b)) & 1);
              block.qh[16 * h + 4 * z + b] |= static_cast<uint8_t>(bit << k);
            }
          }
        }
      }
      memcpy(dst + (2 * g + t) * kQ5_KBlockBytes, &block, sizeof(block));
    }
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
