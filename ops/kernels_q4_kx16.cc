// LinearQ4_Kx16, LinearRowsQ4_Kx16, MatMulQ4_Kx16 and GatherRowQ4_Kx16
// (ops/linear.h, ops/linear_rows.h, ops/matmul.h, ops/gather.h): the kernels
// of Q4_Kx16 weights (ops/quantize_q4_kx16.h). MatMul and GatherRow are
// compiled for every Highway target on the decoded blocks; Linear and
// LinearRows take the integer digits (VNNI, AVX2; ops/linear_vnni.h), elsewhere the
// Q4_K kernels on the rows turned back into Q4_K (ops/ungrouped_linear.h).

#include <stddef.h>
#include <stdint.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/linear_vnni.h"
#include "ops/matmul.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/ungrouped_linear.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q4_kx16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/kx16_block-inl.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void MatMulQ4_Kx16(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                   size_t batch, size_t rows, size_t cols, size_t row_begin, size_t row_end) {
  MatMulBlockRows(Q4_Kx16Format(), w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
                  row_end);
}
void GatherRowQ4_Kx16(const void* table, size_t cols, size_t row, size_t col_begin,
                      size_t count, float scale, float* y) {
  GatherRowQuant(Q4_Kx16Format(), table, cols, row, col_begin, count, scale, y);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

CORTIQ_EXPORT_MATMUL_GATHER(Q4_Kx16, void)

void LinearQ4_Kx16(const void* w, const float* x, float* y, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end) {
  HWY_DASSERT(cols % kQ4_Kx16BlockWeights == 0);
  if (LinearQ4_Kx16Digits(w, x, y, rows, cols, row_begin, row_end)) return;
  LinearByUngrouping(&Q4_Kx16ToQ4_K, Q4_Kx16RowBytes(cols), Q4_KRowBytes(cols), &LinearQ4_K, w, x,
                     y, rows, cols, row_begin, row_end);
}

void LinearRowsQ4_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end) {
  if (LinearRowsQ4_Kx16Digits(w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
                              row_end)) {
    return;
  }
  LinearRowsByRowBlocks(&LinearQ4_Kx16, w, x, x_stride, y, y_stride, batch, rows, cols,
                        row_begin, row_end);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
