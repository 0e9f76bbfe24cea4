// Per-target single-query attention (Attention) and its softmax building block
// (SoftmaxInPlace); public API and formula: ops/attention.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_ATTENTION_INL_H_
#undef CORTIQ_OPS_ATTENTION_INL_H_
#else
#define CORTIQ_OPS_ATTENTION_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Replaces s[0, n) (n >= 1) by exp(s_i - max_k s_k) and returns the f32 sum of
// the new values (>= 1, since the maximum maps to exp(0) = 1). Normalization is
// left to the caller.
template <class DF>
HWY_INLINE float ExpMinusMaxInPlace(DF df, float* s, size_t n) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  // Max: the partial tail is read as the last full vector when n >= N (max is
  // idempotent, so lanes counted twice do no harm).
  float max;
  if (n >= N) {
    V m = hn::LoadU(df, s);
    size_t i = N;
    for (; i + N <= n; i += N) m = hn::Max(m, hn::LoadU(df, s + i));
    if (i != n) m = hn::Max(m, hn::LoadU(df, s + n - N));
    max = hn::GetLane(hn::MaxOfLanes(df, m));
  } else {
    max = s[0];
    for (size_t i = 1; i < n; ++i) max = s[i] > max ? s[i] : max;
  }
  const V vmax = hn::Set(df, max);
  V sum = hn::Zero(df);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const V e = hn::Exp(df, hn::Sub(hn::LoadU(df, s + i), vmax));
    sum = hn::Add(sum, e);
    hn::StoreU(e, df, s + i);
  }
  if (i != n) {
    // Padding lanes are set to max (so they compute exp(0), within Exp's valid
    // range); they are neither summed nor stored.
    const size_t r = n - i;
    const auto valid = hn::FirstN(df, r);
    const V e = hn::Exp(
        df,
        hn::Sub(hn::IfThenElse(valid, LoadPadded(df, s + i, r), vmax), vmax));
    sum = hn::Add(sum, hn::IfThenElseZero(valid, e));
    StorePartial(df, e, s + i, r);
  }
  return ReduceSum(df, sum);
}

// out[d] += a * v[d] for d < n (n >= 1).
template <class DF>
HWY_INLINE void AddScaled(DF df, float a, const float* HWY_RESTRICT v,
                          float* HWY_RESTRICT out, size_t n) {
  const size_t N = hn::Lanes(df);
  const auto va = hn::Set(df, a);
  size_t d = 0;
  for (; d + N <= n; d += N) {
    hn::StoreU(hn::MulAdd(va, hn::LoadU(df, v + d), hn::LoadU(df, out + d)), df,
               out + d);
  }
  if (d != n) {
    const size_t r = n - d;
    StorePartial(
        df,
        hn::MulAdd(va, LoadPadded(df, v + d, r), LoadPadded(df, out + d, r)),
        out + d, r);
  }
}

// See ops/attention.h (AttentionRing; Attention is the ring that starts at row 0).
inline void AttentionRing(const float* q, const float* k_rows, const float* v_rows,
                          size_t ring_rows, size_t first_row, size_t num_rows,
                          size_t num_heads, size_t num_kv_heads, size_t head_dim,
                          float scale, float* scratch, float* out) {
  HWY_DASSERT(num_kv_heads >= 1 && num_heads % num_kv_heads == 0);
  HWY_DASSERT(num_rows <= ring_rows && (num_rows == 0 || first_row < ring_rows));
  const hn::ScalableTag<float> df;
  const size_t group = num_heads / num_kv_heads;
  const size_t row_stride = num_kv_heads * head_dim;
  // Rows i < wrap are storage rows first_row + i; the rest wrapped to 0, 1, ...
  const size_t wrap = num_rows < ring_rows - first_row ? num_rows : ring_rows - first_row;
  const auto row = [&](size_t i) {
    return i < wrap ? first_row + i : i - wrap;
  };
  for (size_t h = 0; h < num_heads; ++h) {
    const size_t kv_offset = (h / group) * head_dim;
    const float* qh = q + h * head_dim;
    float* oh = out + h * head_dim;
    memset(oh, 0, head_dim * sizeof(float));
    if (num_rows == 0) continue;

    for (size_t i = 0; i < num_rows; ++i) {
      scratch[i] =
          scale * Dot(df, k_rows + row(i) * row_stride + kv_offset, qh, head_dim);
    }
    const float sum = ExpMinusMaxInPlace(df, scratch, num_rows);
    for (size_t i = 0; i < num_rows; ++i) {
      AddScaled(df, scratch[i], v_rows + row(i) * row_stride + kv_offset, oh,
                head_dim);
    }
    const auto inv_sum = hn::Set(df, 1.0f / sum);
    TransformUnary(df, oh, oh, head_dim, [inv_sum](auto d, auto v) HWY_ATTR {
      (void)d;
      return hn::Mul(v, inv_sum);
    });
  }
}

// See ops/attention.h.
inline void Attention(const float* q, const float* k_rows, const float* v_rows,
                      size_t num_rows, size_t num_heads, size_t num_kv_heads,
                      size_t head_dim, float scale, float* scratch,
                      float* out) {
  AttentionRing(q, k_rows, v_rows, num_rows, 0, num_rows, num_heads, num_kv_heads,
                head_dim, scale, scratch, out);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_ATTENTION_INL_H_
