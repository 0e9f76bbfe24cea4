// Q4_0x16 regrouping (see quantize_q4_0x16.h).
#include "ops/quantize_q4_0x16.h"

#include <stdint.h>

#include <vector>

#include "hwy/base.h"
#include "ops/regroup_x16.h"

namespace cortiq {
namespace ops {

void Q4_0ToQ4_0x16(const void* q4_0, size_t n, void* out) {
  HWY_ASSERT(n % kQ4_0x16BlockWeights == 0);
  static_assert(X16GroupBytes<16>() == kQ4_0x16BlockBytes, "block_q4_0: f16 + 16 bytes");
  RegroupX16<16>(static_cast<const uint8_t*>(q4_0), n / kQ4_0x16BlockWeights,
                 static_cast<uint8_t*>(out));
}

void Q4_0x16ToQ4_0(const void* q4_0x16, size_t n, void* out) {
  HWY_ASSERT(n % kQ4_0x16BlockWeights == 0);
  UngroupX16<16>(static_cast<const uint8_t*>(q4_0x16), n / kQ4_0x16BlockWeights,
                 static_cast<uint8_t*>(out));
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
