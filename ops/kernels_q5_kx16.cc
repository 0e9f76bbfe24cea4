// LinearQ5_Kx16, LinearRowsQ5_Kx16, MatMulQ5_Kx16 and GatherRowQ5_Kx16
// (ops/linear.h, ops/linear_rows.h, ops/matmul.h, ops/gather.h): the kernels
// of Q5_Kx16 weights (ops/quantize_q5_kx16.h). MatMul and GatherRow are
// compiled for every Highway target on the decoded blocks; Linear and
// LinearRows take the integer digits (VNNI, AVX2; ops/linear_vnni.h), elsewhere the
// Q5_K kernels on the rows turned back into Q5_K (ops/ungrouped_linear.h).

#include <stddef.h>
#include <stdint.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/linear_vnni.h"
#include "ops/matmul.h"
#include "ops/quantize_q5_kx16.h"
#include "ops/ungrouped_linear.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q5_kx16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/kx16_block-inl.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void MatMulQ5_Kx16(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                   size_t batch, size_t rows, size_t cols, size_t row_begin, size_t row_end) {
  MatMulBlockRows(Q5_Kx16Format(), w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
                  row_end);
}
void GatherRowQ5_Kx16(const void* table, size_t cols, size_t row, size_t col_begin,
                      size_t count, float scale, float* y) {
  GatherRowQuant(Q5_Kx16Format(), table, cols, row, col_begin, count, scale, y);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

CORTIQ_EXPORT_MATMUL_GATHER(Q5_Kx16, void)

void LinearQ5_Kx16(const void* w, const float* x, float* y, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end) {
  HWY_DASSERT(cols % kQ5_Kx16BlockWeights == 0);
  if (LinearQ5_Kx16Digits(w, x, y, rows, cols, row_begin, row_end)) return;
  LinearByUngrouping(&Q5_Kx16ToQ5_K, Q5_Kx16RowBytes(cols), Q5_KRowBytes(cols), &LinearQ5_K, w, x,
                     y, rows, cols, row_begin, row_end);
}

void LinearRowsQ5_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end) {
  if (LinearRowsQ5_Kx16Digits(w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
                              row_end)) {
    return;
  }
  LinearRowsByRowBlocks(&LinearQ5_Kx16, w, x, x_stride, y, y_stride, batch, rows, cols,
                        row_begin, row_end);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
