// LinearBF16 (ops/linear.h): per-target instantiation of LinearRows<bfloat16_t>
// and its dispatch. One translation unit per weight type keeps compile time per
// file bounded.

#include <stddef.h>

#include "hwy/base.h"
#include "ops/linear.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/linear_bf16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/linear-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// Per-target entry point exported below.
void LinearBF16(const hwy::bfloat16_t* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end) {
  LinearRows(w, x, y, rows, cols, row_begin, row_end);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(LinearBF16);

void LinearBF16(const hwy::bfloat16_t* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end) {
  HWY_DYNAMIC_DISPATCH(LinearBF16)(w, x, y, rows, cols, row_begin, row_end);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
