// RmsNorm and ResidualRmsNorm (ops/rms_norm.h): per-target compilation of
// ops/rms_norm-inl.h and the dispatch.

#include "ops/rms_norm.h"

#include <stddef.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/rms_norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/rms_norm-inl.h"

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(RmsNorm);
HWY_EXPORT(ResidualRmsNorm);

void RmsNorm(const float* x, const float* gain, float* y, size_t n,
             size_t group_size, float eps) {
  HWY_DYNAMIC_DISPATCH(RmsNorm)(x, gain, y, n, group_size, eps);
}

void ResidualRmsNorm(const float* residual, const float* x, const float* gain,
                     float scalar, float* y, size_t n, size_t group_size,
                     float eps) {
  HWY_DYNAMIC_DISPATCH(ResidualRmsNorm)
  (residual, x, gain, scalar, y, n, group_size, eps);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
