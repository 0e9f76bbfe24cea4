// Tests LinearQ5_K, MatMulQ5_K and GatherRowQ5_K (ops/kernels_q5_k.cc):
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
#define HWY_TARGET_INCLUDE "tests/ops/kernels_q5_k_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/block_kernels_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void Offsets(const void* blocks, size_t n, float* o) {
  // o = -dmin * m_k for sub-block k (of 32).
  const uint8_t* p = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / 256; ++b) {
    BlockQ5_K blk;
    memcpy(&blk, p + b * sizeof(blk), sizeof(blk));
    for (size_t i = 0; i < 256; ++i) {
      int sc, m;
      KScaleMin(blk.scales, i / 32, &sc, &m);
      o[256 * b + i] = -(F16BitsToF32(blk.dmin) * static_cast<float>(m));
    }
  }
}

BlockKernelCase Case() {
  return {256,
          kQ5_KBlockBytes,
          {0, 2},
          &QuantizeRowQ5_K,
          &DequantizeRowQ5_K,
          &Offsets,
          &LinearQ5_KReference,
          &::cortiq::ops::LinearQ5_K,
          &MatMulQ5_KReference,
          &::cortiq::ops::MatMulQ5_K,
          &GatherRowQ5_KReference,
          &::cortiq::ops::GatherRowQ5_K};
}

CORTIQ_BLOCK_KERNEL_TESTS(Q5_KFormat)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(KernelsQ5_KTest);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
