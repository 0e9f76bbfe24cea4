// Per-target RMS normalization (RmsNorm) and its fusion with the residual add
// and scalar (ResidualRmsNorm); public API and formulas: ops/rms_norm.h.
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

// (mean_{i < group_size} x_i^2 + eps)^(-1/2) as f32: the sum of squares in
// f32 vector accumulators (Dot), the mean, root and reciprocal in double. The
// one definition shared by RmsNorm and ResidualRmsNorm, which are therefore
// bit-identical in their normalization.
template <class DF>
HWY_INLINE float RmsInvScale(DF df, const float* x, size_t group_size,
                             float eps) {
  const float sum_sq = Dot(df, x, x, group_size);
  const double mean_sq =
      static_cast<double>(sum_sq) / static_cast<double>(group_size);
  return static_cast<float>(1.0 / sqrt(mean_sq + static_cast<double>(eps)));
}

// See ops/rms_norm.h. x may equal y.
inline void RmsNorm(const float* x, const float* gain, float* y, size_t n,
                    size_t group_size, float eps) {
  HWY_DASSERT(group_size >= 1 && n % group_size == 0);
  const hn::ScalableTag<float> df;
  for (size_t g = 0; g < n; g += group_size) {
    const float* xg = x + g;
    float* yg = y + g;
    const auto scale = hn::Set(df, RmsInvScale(df, xg, group_size, eps));
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

// See ops/rms_norm.h. y may equal residual and/or x: each group's sum of
// squares is complete before any of its outputs is stored, and a group's
// outputs overwrite only that group's inputs.
inline void ResidualRmsNorm(const float* residual, const float* x,
                            const float* gain, float scalar, float* y, size_t n,
                            size_t group_size, float eps) {
  HWY_DASSERT(group_size >= 1 && n % group_size == 0);
  const hn::ScalableTag<float> df;
  const auto vs = hn::Set(df, scalar);
  for (size_t g = 0; g < n; g += group_size) {
    const float* xg = x + g;
    float* yg = y + g;
    const auto scale = hn::Set(df, RmsInvScale(df, xg, group_size, eps));
    // Operation for operation the sequence RmsNorm, Add, Scale.
    if (gain != nullptr) {
      TransformTernary(df, residual + g, xg, gain, yg, group_size,
                       [scale, vs](auto d, auto vr, auto vx, auto vg) HWY_ATTR {
                         (void)d;
                         const auto normed = hn::Mul(hn::Mul(vx, scale), vg);
                         return hn::Mul(hn::Add(vr, normed), vs);
                       });
    } else {
      TransformBinary(df, residual + g, xg, yg, group_size,
                      [scale, vs](auto d, auto vr, auto vx) HWY_ATTR {
                        (void)d;
                        return hn::Mul(hn::Add(vr, hn::Mul(vx, scale)), vs);
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
