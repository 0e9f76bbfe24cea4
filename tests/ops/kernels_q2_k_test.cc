// Tests LinearQ2_K, MatMulQ2_K and GatherRowQ2_K (ops/kernels_q2_k.cc):
// the per-target kernels and the dispatched functions on every compiled
// Highway target, against the double references of ops/reference.h
// (tests/ops/block_kernels_test-inl.h).

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/quantize_k.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/kernels_q2_k_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/block_kernels_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void Offsets(const void* blocks, size_t n, float* o) {
  // o = -dmin * m_k for sub-block k (of 16).
  const uint8_t* p = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / 256; ++b) {
    BlockQ2_K blk;
    memcpy(&blk, p + b * sizeof(blk), sizeof(blk));
    for (size_t i = 0; i < 256; ++i) {
      o[256 * b + i] = -(F16BitsToF32(blk.dmin) * static_cast<float>(blk.scales[i / 16] >> 4));
    }
  }
}

BlockKernelCase Case() {
  return {256,
          kQ2_KBlockBytes,
          {80, 82},
          &QuantizeRowQ2_K,
          &DequantizeRowQ2_K,
          &Offsets,
          &LinearQ2_KReference,
          &::cortiq::ops::LinearQ2_K,
          &MatMulQ2_KReference,
          &::cortiq::ops::MatMulQ2_K,
          &GatherRowQ2_KReference,
          &::cortiq::ops::GatherRowQ2_K};
}

CORTIQ_BLOCK_KERNEL_TESTS(Q2_KFormat)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(KernelsQ2_KTest);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
