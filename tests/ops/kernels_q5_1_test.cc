// Tests LinearQ5_1, MatMulQ5_1 and GatherRowQ5_1 (ops/kernels_q5_1.cc):
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
#include "ops/quantize_legacy.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/kernels_q5_1_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/block_kernels_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void Offsets(const void* blocks, size_t n, float* o) {
  // o = m, the block's offset.
  const uint8_t* p = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / 32; ++b) {
    BlockQ5_1 blk;
    memcpy(&blk, p + b * sizeof(blk), sizeof(blk));
    for (size_t j = 0; j < 32; ++j) o[32 * b + j] = F16BitsToF32(blk.m);
  }
}

BlockKernelCase Case() {
  return {32,
          kQ5_1BlockBytes,
          {0, 2},
          &QuantizeRowQ5_1,
          &DequantizeRowQ5_1,
          &Offsets,
          &LinearQ5_1Reference,
          &::cortiq::ops::LinearQ5_1,
          &MatMulQ5_1Reference,
          &::cortiq::ops::MatMulQ5_1,
          &GatherRowQ5_1Reference,
          &::cortiq::ops::GatherRowQ5_1};
}

CORTIQ_BLOCK_KERNEL_TESTS(Q5_1Format)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(KernelsQ5_1Test);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
