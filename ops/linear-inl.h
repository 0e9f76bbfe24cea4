// Per-target matrix-vector product over a row range (LinearRows<WT>), shared by
// the f32 and bf16 translation units linear_f32.cc / linear_bf16.cc, which each
// instantiate one WT. Public API: ops/linear.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_LINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_LINEAR_INL_H_
#undef CORTIQ_OPS_LINEAR_INL_H_
#else
#define CORTIQ_OPS_LINEAR_INL_H_
#endif

#include <stddef.h>

#include "hwy/base.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y[r] = sum_c w[r * cols + c] * x[c] for r in [row_begin, row_end); WT is
// float or hwy::bfloat16_t. Contract and precision as LinearF32 / LinearBF16 in
// ops/linear.h. Rows go four at a time through DotRows4 (x loaded once per four
// rows); the < 4 leftover rows use Dot.
template <typename WT>
HWY_INLINE void LinearRows(const WT* HWY_RESTRICT w,
                           const float* HWY_RESTRICT x, float* HWY_RESTRICT y,
                           size_t rows, size_t cols, size_t row_begin,
                           size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows && cols >= 1);
  (void)rows;
  const hn::ScalableTag<float> df;
  size_t r = row_begin;
  for (; r + 4 <= row_end; r += 4) {
    DotRows4(df, w + r * cols, cols, x, cols, y + r);
  }
  for (; r < row_end; ++r) {
    y[r] = Dot(df, w + r * cols, x, cols);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_INL_H_
