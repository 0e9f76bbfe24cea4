// LinearF16, MatMulF16 and GatherRowF16 (ops/linear.h, ops/matmul.h,
// ops/gather.h): the kernels of IEEE binary16 weights, compiled for every
// Highway target, and their dispatch. The f32 / bf16 kernels' code with the
// f16 -> f32 widening load (vec_util-inl.h LoadAsF32).

#include <stddef.h>

#include "hwy/base.h"
#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/matmul.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_f16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/gather-inl.h"
#include "ops/kernel_dispatch.h"
#include "ops/linear-inl.h"
#include "ops/matmul-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void LinearF16(const hwy::float16_t* w, const float* x, float* y, size_t rows,
               size_t cols, size_t row_begin, size_t row_end) {
  LinearRows(w, x, y, rows, cols, row_begin, row_end);
}
void MatMulF16(const hwy::float16_t* w, const float* x, size_t x_stride,
               float* y, size_t y_stride, size_t batch, size_t rows,
               size_t cols, size_t row_begin, size_t row_end) {
  MatMulRows(F16Weights{w, cols}, x, x_stride, y, y_stride, batch, rows, cols,
             row_begin, row_end);
}
void GatherRowF16(const hwy::float16_t* table, size_t cols, size_t row,
                  size_t col_begin, size_t count, float scale, float* y) {
  GatherRow(table, cols, row, col_begin, count, scale, y);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

CORTIQ_EXPORT_KERNELS(F16, hwy::float16_t)

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
