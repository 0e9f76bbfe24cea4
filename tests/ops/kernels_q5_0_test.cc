// Tests LinearQ5_0, MatMulQ5_0 and GatherRowQ5_0 (ops/kernels_q5_0.cc):
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
#define HWY_TARGET_INCLUDE "tests/ops/kernels_q5_0_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "tests/ops/block_kernels_test-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void Offsets(const void* blocks, size_t n, float* o) {
  (void)blocks;
  for (size_t i = 0; i < n; ++i) o[i] = 0.0f;  // no offset
}

BlockKernelCase Case() {
  return {32,
          kQ5_0BlockBytes,
          {0},
          &QuantizeRowQ5_0,
          &DequantizeRowQ5_0,
          &Offsets,
          &LinearQ5_0Reference,
          &::cortiq::ops::LinearQ5_0,
          &MatMulQ5_0Reference,
          &::cortiq::ops::MatMulQ5_0,
          &GatherRowQ5_0Reference,
          &::cortiq::ops::GatherRowQ5_0};
}

CORTIQ_BLOCK_KERNEL_TESTS(Q5_0Format)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(KernelsQ5_0Test);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
