// Per-target in-place rotate-half RoPE (ApplyRope); public API and formula:
// ops/rope.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_ROPE_INL_H_
#undef CORTIQ_OPS_ROPE_INL_H_
#else
#define CORTIQ_OPS_ROPE_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rotates `count` pairs (lo[k], hi[k]) by the angles whose cos/sin are c[k],
// s[k], in place. The final partial vector goes through zero-padded copies so
// all elements see the same vector arithmetic; only lo[0, count) and hi[0,
// count) are written.
template <class DF>
HWY_INLINE void RotatePairs(DF df, float* HWY_RESTRICT lo,
                            float* HWY_RESTRICT hi, const float* HWY_RESTRICT c,
                            const float* HWY_RESTRICT s, size_t count) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  const auto rotate = [](V a, V b, V vc, V vs, V* out_lo, V* out_hi) HWY_ATTR {
    *out_lo = hn::MulSub(a, vc, hn::Mul(b, vs));  // a cos - b sin
    *out_hi = hn::MulAdd(b, vc, hn::Mul(a, vs));  // b cos + a sin
  };
  size_t k = 0;
  for (; k + N <= count; k += N) {
    V out_lo, out_hi;
    rotate(hn::LoadU(df, lo + k), hn::LoadU(df, hi + k), hn::LoadU(df, c + k),
           hn::LoadU(df, s + k), &out_lo, &out_hi);
    hn::StoreU(out_lo, df, lo + k);
    hn::StoreU(out_hi, df, hi + k);
  }
  if (k != count) {
    const size_t r = count - k;
    V out_lo, out_hi;
    rotate(LoadPadded(df, lo + k, r), LoadPadded(df, hi + k, r),
           LoadPadded(df, c + k, r), LoadPadded(df, s + k, r), &out_lo,
           &out_hi);
    StorePartial(df, out_lo, lo + k, r);
    StorePartial(df, out_hi, hi + k, r);
  }
}

// See ops/rope.h.
inline void ApplyRope(float* x, size_t num_heads, size_t head_dim,
                      size_t rotated_pairs, const float* cos,
                      const float* sin) {
  HWY_DASSERT(head_dim % 2 == 0 && rotated_pairs <= head_dim / 2);
  const hn::ScalableTag<float> df;
  const size_t half = head_dim / 2;
  for (size_t h = 0; h < num_heads; ++h) {
    float* xh = x + h * head_dim;
    RotatePairs(df, xh, xh + half, cos, sin, rotated_pairs);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_ROPE_INL_H_
