// LinearRowsQ4_0 (ops/linear_rows.h): its per-target instantiation
// (ops/linear_rows-inl.h) and dispatch. One translation unit per weight type
// keeps compile time per file bounded.

#include <stddef.h>

#include "hwy/base.h"
#include "ops/linear_rows.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/linear_rows_q4_0.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/linear_rows-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// Per-target entry point exported below.
void LinearRowsQ4_0(const void* w, const float* x, size_t x_stride, float* y,
                   size_t y_stride, size_t batch, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end) {
  QuantRowsKernel(Q4_0Format(), w, x, x_stride, y, y_stride, batch, rows, cols,
                  row_begin, row_end);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(LinearRowsQ4_0);

void LinearRowsQ4_0(const void* w, const float* x, size_t x_stride, float* y,
                   size_t y_stride, size_t batch, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end) {
  HWY_DYNAMIC_DISPATCH(LinearRowsQ4_0)(w, x, x_stride, y, y_stride, batch, rows,
                                      cols, row_begin, row_end);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
