// LinearQ4_Kx16, LinearRowsQ4_Kx16, MatMulQ4_Kx16 and GatherRowQ4_Kx16
// (ops/linear.h, ops/linear_rows.h, ops/matmul.h, ops/gather.h): the kernels
// of Q4_Kx16 weights (ops/quantize_q4_kx16.h), compiled for every Highway target on
// the decoded blocks (ops/kx16_block-inl.h, through ops/block_kernels-inl.h),
// and their dispatch (Linear and LinearRows to the integer digits of
// ops/linear_vnni.h where the CPU has AVX-512 VNNI or AVX2).

#include <stddef.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/linear_vnni.h"
#include "ops/matmul.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q4_kx16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

CORTIQ_BLOCK_FORMAT_KERNELS(Q4_Kx16, Q4_Kx16Format)

void LinearRowsQ4_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end) {
  LinearRowsKX16Rows(Q4_Kx16Format(), w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
                     row_end);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

CORTIQ_EXPORT_X16_KERNELS(Q4_Kx16)

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
