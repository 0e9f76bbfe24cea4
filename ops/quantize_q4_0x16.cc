// Q4_0x16 regrouping (see quantize_q4_0x16.h).
#include "ops/quantize_q4_0x16.h"

#include <stdint.h>
#include <string.h>

#include <vector>

#include "hwy/base.h"

namespace cortiq {
namespace ops {

void Q4_0ToQ4_0x16(const void* q4_0, size_t n, void* out) {
  HWY_ASSERT(n % kQ4_0x16BlockWeights == 0);
  const auto* src = static_cast<const uint8_t*>(q4_0);
  auto* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ4_0x16BlockWeights; ++g) {
    const uint8_t* blocks = src + g * kQ4_0x16BlockBytes;
    uint8_t* group = dst + g * kQ4_0x16BlockBytes;
    for (size_t j = 0; j < kQ4_0x16Blocks; ++j) {
      const uint8_t* block = blocks + j * kQ4_0BlockBytes;
      memcpy(group + 2 * j, block, 2);
      for (size_t z = 0; z < 4; ++z) memcpy(group + 32 + 64 * z + 4 * j, block + 2 + 4 * z, 4);
    }
  }
}

void Q4_0x16ToQ4_0(const void* q4_0x16, size_t n, void* out) {
  HWY_ASSERT(n % kQ4_0x16BlockWeights == 0);
  const auto* src = static_cast<const uint8_t*>(q4_0x16);
  auto* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ4_0x16BlockWeights; ++g) {
    const uint8_t* group = src + g * kQ4_0x16BlockBytes;
    uint8_t* blocks = dst + g * kQ4_0x16BlockBytes;
    for (size_t j = 0; j < kQ4_0x16Blocks; ++j) {
      uint8_t* block = blocks + j * kQ4_0BlockBytes;
      memcpy(block, group + 2 * j, 2);
      for (size_t z = 0; z < 4; ++z) memcpy(block + 2 + 4 * z, group + 32 + 64 * z + 4 * j, 4);
    }
  }
}

void QuantizeRowQ4_0x16(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQ4_0x16BlockWeights == 0);
  std::vector<uint8_t> q4_0(Q4_0RowBytes(n));
  QuantizeRowQ4_0(x, n, q4_0.data());
  Q4_0ToQ4_0x16(q4_0.data(), n, blocks);
}

void DequantizeRowQ4_0x16(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQ4_0x16BlockWeights == 0);
  uint8_t q4_0[kQ4_0x16BlockBytes];
  for (size_t g = 0; g < n / kQ4_0x16BlockWeights; ++g) {
    Q4_0x16ToQ4_0(static_cast<const uint8_t*>(blocks) + g * kQ4_0x16BlockBytes,
                  kQ4_0x16BlockWeights, q4_0);
    DequantizeRowQ4_0(q4_0, kQ4_0x16BlockWeights, y + g * kQ4_0x16BlockWeights);
  }
}

}  // namespace ops
}  // namespace cortiq
