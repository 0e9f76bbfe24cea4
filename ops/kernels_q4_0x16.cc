// LinearQ4_0x16, MatMulQ4_0x16, GatherRowQ4_0x16 and LinearRowsQ4_0x16
// (ops/linear.h, ops/matmul.h, ops/gather.h, ops/linear_rows.h): the kernels
// of Q4_0x16 weights (ops/quantize_q4_0x16.h), compiled for every Highway
// target, and their dispatch (Linear and LinearRows to
// ops/linear_vnni.h where the CPU has AVX-512 VNNI).

#include <stddef.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_vnni.h"
#include "ops/linear_rows.h"
#include "ops/matmul.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q4_0x16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"
#include "ops/linear_q4_0x16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

CORTIQ_BLOCK_FORMAT_KERNELS(Q4_0x16, Q4_0x16Format)

void LinearRowsQ4_0x16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end) {
  LinearRowsQ4_0x16Rows(w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
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

CORTIQ_EXPORT_X16_KERNELS(Q4_0x16)

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
