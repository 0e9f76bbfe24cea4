// Tests LinearQ6_K, MatMulQ6_K and GatherRowQ6_K (ops/kernels_q6_k.cc):
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
#define HWY_TARGET_INCLUDE "tests/ops/kernels_q6_k_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/block_kernels_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void Offsets(const void* blocks, size_t n, float* o) {
  // o = -32 * d * sc_k: the constant bias of the 6-bit quants.
  const uint8_t* p = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / 256; ++b) {
    BlockQ6_K blk;
    memcpy(&blk, p + b * sizeof(blk), sizeof(blk));
    for (size_t i = 0; i < 256; ++i) {
      o[256 * b + i] = -32.0f * (F16BitsToF32(blk.d) * static_cast<float>(blk.scales[i / 16]));
    }
  }
}

BlockKernelCase Case() {
  return {256,
          kQ6_KBlockBytes,
          {208},
          &QuantizeRowQ6_K,
          &DequantizeRowQ6_K,
          &Offsets,
          &LinearQ6_KReference,
          &::cortiq::ops::LinearQ6_K,
          &MatMulQ6_KReference,
          &::cortiq::ops::MatMulQ6_K,
          &GatherRowQ6_KReference,
          &::cortiq::ops::GatherRowQ6_K};
}

CORTIQ_BLOCK_KERNEL_TESTS(Q6_KFormat)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(KernelsQ6_KTest);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
