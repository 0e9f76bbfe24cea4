// LinearQ4_K, MatMulQ4_K and GatherRowQ4_K (ops/linear.h, ops/matmul.h,
// ops/gather.h): the kernels of Q4_K weights, compiled for every Highway
// target, and their dispatch (LinearQ4_K to the exact integer kernel of
// ops/linear_vnni.h where the CPU has AVX-512 VNNI). One translation unit per
// weight format keeps compile time per file bounded.

#include <stddef.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_vnni.h"
#include "ops/matmul.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q4_k.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

CORTIQ_BLOCK_FORMAT_KERNELS(Q4_K, Q4_KFormat)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(LinearQ4_K);
void LinearQ4_K(const void* w, const float* x, float* y, size_t rows, size_t cols,
                size_t row_begin, size_t row_end) {
  if (LinearKDigits(&LinearQ4_KVnni, &LinearQ4_KAvx2, w, x, y, rows, cols, row_begin,
                    row_end)) {
    return;
  }
  HWY_DYNAMIC_DISPATCH(LinearQ4_K)(w, x, y, rows, cols, row_begin, row_end);
}
CORTIQ_EXPORT_MATMUL_GATHER(Q4_K, void)

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
