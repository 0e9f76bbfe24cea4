// Tests LinearIQ4_NL, MatMulIQ4_NL and GatherRowIQ4_NL (ops/kernels_iq4_nl.cc):
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
#include "ops/quantize_iq4.h"
#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/kernels_iq4_nl_test.cc"
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
          kIQ4_NLBlockBytes,
          {0},
          &QuantizeRowIQ4_NL,
          &DequantizeRowIQ4_NL,
          &Offsets,
          &LinearIQ4_NLReference,
          &::cortiq::ops::LinearIQ4_NL,
          &MatMulIQ4_NLReference,
          &::cortiq::ops::MatMulIQ4_NL,
          &GatherRowIQ4_NLReference,
          &::cortiq::ops::GatherRowIQ4_NL};
}

CORTIQ_BLOCK_KERNEL_TESTS(IQ4_NLFormat)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
CORTIQ_EXPORT_BLOCK_KERNEL_TESTS(KernelsIQ4_NLTest);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
