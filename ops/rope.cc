// RopeCosSin (scalar, double) and ApplyRope (per-target compilation of
// ops/rope-inl.h and its dispatch); API: ops/rope.h.

#include "ops/rope.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/rope.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/rope-inl.h"

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(ApplyRope);

void RopeCosSin(int64_t position, double theta, size_t head_dim,
                size_t rotated_pairs, float* cos_out, float* sin_out) {
  HWY_DASSERT(2 * rotated_pairs <= head_dim);
  const double p = static_cast<double>(position);
  const double d = static_cast<double>(head_dim);
  for (size_t i = 0; i < rotated_pairs; ++i) {
    const double inv_freq = pow(theta, -2.0 * static_cast<double>(i) / d);
    const double angle = p * inv_freq;
    cos_out[i] = static_cast<float>(cos(angle));
    sin_out[i] = static_cast<float>(sin(angle));
  }
}

void ApplyRope(float* x, size_t num_heads, size_t head_dim,
               size_t rotated_pairs, const float* cos, const float* sin) {
  HWY_DYNAMIC_DISPATCH(ApplyRope)
  (x, num_heads, head_dim, rotated_pairs, cos, sin);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
