// Per-target RMS normalization (RmsNorm); public API and formula:
// ops/rms_norm.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_RMS_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_RMS_NORM_INL_H_
#undef CORTIQ_OPS_RMS_NORM_INL_H_
#else
#define CORTIQ_OPS_RMS_NORM_INL_H_
#endif

#include <math.h>
#include <stddef.h>

#include "hwy/highway.h"
#include "ops/dot-inl.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// See ops/rms_norm.h. x may equal y.
inline void RmsNorm(const float* x, const float* gain, float* y, size_t n,
                    size_t group_size, float eps) {
  HWY_DASSERT(group_size >= 1 && n % group_size == 0);
  const hn::ScalableTag<float> df;
  for (size_t g = 0; g < n; g += group_size) {
    const float* xg = x + g;
    float* yg = y + g;
    const float sum_sq = Dot(df, xg, xg, group_size);
    const double mean_sq =
        static_cast<double>(sum_sq) / static_cast<double>(group_size);
    const auto scale = hn::Set(
        df, static_cast<float>(1.0 / sqrt(mean_sq + static_cast<double>(eps))));
    if (gain != nullptr) {
      TransformBinary(df, xg, gain, yg, group_size,
                      [scale](auto d, auto vx, auto vg) HWY_ATTR {
                        (void)d;
                        return hn::Mul(hn::Mul(vx, scale), vg);
                      });
    } else {
      TransformUnary(df, xg, yg, group_size, [scale](auto d, auto vx) HWY_ATTR {
        (void)d;
        return hn::Mul(vx, scale);
      });
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_RMS_NORM_INL_H_
