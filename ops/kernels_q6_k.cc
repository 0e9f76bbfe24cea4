// LinearQ6_K, MatMulQ6_K and GatherRowQ6_K (ops/linear.h, ops/matmul.h,
// ops/gather.h): the kernels of Q6_K weights, compiled for every Highway
// target, and their dispatch (LinearQ6_K to the exact integer digits of
// LinearQ6_KVnni / LinearQ6_KAvx2, ops/linear_vnni.h, where
// DispatchedDecodeLinearPath() is kVnni / kAvx2). One translation unit per weight format keeps compile time per
// file bounded.

#include <stddef.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_vnni.h"
#include "ops/matmul.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q6_k.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

CORTIQ_BLOCK_FORMAT_KERNELS(Q6_K, Q6_KFormat)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(LinearQ6_K);
void LinearQ6_K(const void* w, const float* x, float* y, size_t rows, size_t cols,
                size_t row_begin, size_t row_end) {
  if (LinearKDigits(&LinearQ6_KVnni, &LinearQ6_KAvx2, w, x, y, rows, cols, row_begin,
                    row_end)) {
    return;
  }
  HWY_DYNAMIC_DISPATCH(LinearQ6_K)(w, x, y, rows, cols, row_begin, row_end);
}
CORTIQ_EXPORT_MATMUL_GATHER(Q6_K, void)

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
