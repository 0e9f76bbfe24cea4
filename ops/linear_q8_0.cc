// LinearQ8_0 (ops/linear.h): per-target instantiation of
// LinearQuantRows<Q8_0Format> and its dispatch. One translation unit per weight
// type keeps compile time per file bounded.

#include <stddef.h>

#include "ops/linear.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/linear_q8_0.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/linear_quant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// Per-target entry point exported below.
void LinearQ8_0(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end) {
  LinearQuantRows(Q8_0Format(), w, x, y, rows, cols, row_begin, row_end);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(LinearQ8_0);

void LinearQ8_0(const void* w, const float* x, float* y, size_t rows,
                size_t cols, size_t row_begin, size_t row_end) {
  HWY_DYNAMIC_DISPATCH(LinearQ8_0)(w, x, y, rows, cols, row_begin, row_end);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
