// Q8_0x16 regrouping (see quantize_q8_0x16.h).
#include "ops/quantize_q8_0x16.h"

#include <stdint.h>

#include <vector>

#include "hwy/base.h"
#include "ops/regroup_x16.h"

namespace cortiq {
namespace ops {

void Q8_0ToQ8_0x16(const void* q8_0, size_t n, void* out) {
  HWY_ASSERT(n % kQ8_0x16BlockWeights == 0);
  static_assert(X16GroupBytes<32>() == kQ8_0x16BlockBytes, "block_q8_0: f16 + 32 bytes");
  RegroupX16<32>(static_cast<const uint8_t*>(q8_0), n / kQ8_0x16BlockWeights,
                 static_cast<uint8_t*>(out));
}

void Q8_0x16ToQ8_0(const void* q8_0x16, size_t n, void* out) {
  HWY_ASSERT(n % kQ8_0x16BlockWeights == 0);
  UngroupX16<32>(static_cast<const uint8_t*>(q8_0x16), n / kQ8_0x16BlockWeights,
                 static_cast<uint8_t*>(out));
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
