// Q8_0x16 regrouping (see quantize_q8_0x16.h).
#include "ops/quantize_q8_0x16.h"

#include <stdint.h>
#include <string.h>

#include <vector>

#include "hwy/base.h"

namespace cortiq {
namespace ops {

void Q8_0ToQ8_0x16(const void* q8_0, size_t n, void* out) {
  HWY_ASSERT(n % kQ8_0x16BlockWeights == 0);
  const auto* src = static_cast<const uint8_t*>(q8_0);
  auto* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ8_0x16BlockWeights; ++g) {
    const uint8_t* blocks = src + g * kQ8_0x16BlockBytes;
    uint8_t* group = dst + g * kQ8_0x16BlockBytes;
    for (size_t j = 0; j < kQ8_0x16Blocks; ++j) {
      const uint8_t* block = blocks + j * kQ8_0BlockBytes;
      memcpy(group + 2 * j, block, 2);
      for (size_t v = 0; v < 8; ++v) memcpy(group + 32 + 64 * v + 4 * j, block + 2 + 4 * v, 4);
    }
  }
}

void Q8_0x16ToQ8_0(const void* q8_0x16, size_t n, void* out) {
  HWY_ASSERT(n % kQ8_0x16BlockWeights == 0);
  const auto* src = static_cast<const uint8_t*>(q8_0x16);
  auto* dst = static_cast<uint8_t*>(out);
  for (size_t g = 0; g < n / kQ8_0x16BlockWeights; ++g) {
    const uint8_t* group = src + g * kQ8_0x16BlockBytes;
    uint8_t* blocks = dst + g * kQ8_0x16BlockBytes;
    for (size_t j = 0; j < kQ8_0x16Blocks; ++j) {
      uint8_t* block = blocks + j * kQ8_0BlockBytes;
      memcpy(block, group + 2 * j, 2);
      for (size_t v = 0; v < 8; ++v) memcpy(block + 2 + 4 * v, group + 32 + 64 * v + 4 * j, 4);
    }
  }
}

void QuantizeRowQ8_0x16(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kQ8_0x16BlockWeights == 0);
  std::vector<uint8_t> q8_0(Q8_0RowBytes(n));
  QuantizeRowQ8_0(x, n, q8_0.data());
  Q8_0ToQ8_0x16(q8_0.data(), n, blocks);
}

void DequantizeRowQ8_0x16(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kQ8_0x16BlockWeights == 0);
  uint8_t q8_0[kQ8_0x16BlockBytes];
  for (size_t g = 0; g < n / kQ8_0x16BlockWeights; ++g) {
    Q8_0x16ToQ8_0(static_cast<const uint8_t*>(blocks) + g * kQ8_0x16BlockBytes,
                  kQ8_0x16BlockWeights, q8_0);
    DequantizeRowQ8_0(q8_0, kQ8_0x16BlockWeights, y + g * kQ8_0x16BlockWeights);
  }
}

}  // namespace ops
}  // namespace cortiq
