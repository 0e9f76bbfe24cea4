// Per-target element-wise kernels (GeluTanh, GeluTanhMul, Mul, Add, Scale,
// Softcap) and their vector formulas (GeluTanhV, SoftcapV) for fusion into
// other loops; API: ops/elementwise.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_ELEMENTWISE_INL_H_
#undef CORTIQ_OPS_ELEMENTWISE_INL_H_
#else
#define CORTIQ_OPS_ELEMENTWISE_INL_H_
#endif

#include <stddef.h>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// gelu_pytorch_tanh of each lane, evaluated as
//
//     y = x / (1 + exp(t)),  t = -2 sqrt(2/pi) (x + 0.044715 x^3)
//
// which equals 0.5 x (1 + tanh(-t/2)) because 0.5 (1 + tanh(u)) =
// 1 / (1 + exp(-2u)). t is clamped to 88 (exp(88) = 1.65e38 < FLT_MAX, inside
// the valid range <= 104 of Highway's Exp) and the result is 0 where t >= 88:
// there x <= -9.9 and |y| <= |x| e^-88 < 1e-37. Exp returns 0 for t < -104
// (including t = -inf when x^3 overflows), giving y = x.
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE V GeluTanhV(DF df, V x) {
  // -2 * sqrt(2 / pi) and 0.044715 (HF `NewGELUActivation` /
  // `gelu_pytorch_tanh` constants).
  const V k_neg_two_c = hn::Set(df, -1.5957691216057308f);
  const V k_cubic = hn::Set(df, 0.044715f);
  const V k_limit = hn::Set(df, 88.0f);
  const V inner =
      hn::MulAdd(hn::Mul(k_cubic, hn::Mul(x, x)), x, x);  // x + 0.044715 x^3
  const V t = hn::Mul(k_neg_two_c, inner);
  const V tc = hn::Min(t, k_limit);
  const V y = hn::Div(x, hn::Add(hn::Set(df, 1.0f), hn::Exp(df, tc)));
  return hn::IfThenZeroElse(hn::Ge(t, k_limit), y);
}

// cap * tanh(x / cap) of each lane (cap > 0).
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE V SoftcapV(DF df, V x, V cap) {
  return hn::Mul(cap, hn::Tanh(df, hn::Div(x, cap)));
}

// See ops/elementwise.h for the contracts of the functions below.
inline void GeluTanh(const float* x, float* y, size_t n) {
  const hn::ScalableTag<float> df;
  TransformUnary(df, x, y, n,
                 [](auto d, auto v) HWY_ATTR { return GeluTanhV(d, v); });
}

// GeluTanhV then one Mul per lane: the same operations, in the same order, as
// GeluTanh followed by Mul, so the result is bit-identical to that sequence.
inline void GeluTanhMul(const float* gate, const float* up, float* y,
                        size_t n) {
  const hn::ScalableTag<float> df;
  TransformBinary(df, gate, up, y, n, [](auto d, auto vg, auto vu) HWY_ATTR {
    return hn::Mul(GeluTanhV(d, vg), vu);
  });
}

inline void Mul(const float* a, const float* b, float* y, size_t n) {
  const hn::ScalableTag<float> df;
  TransformBinary(df, a, b, y, n, [](auto d, auto va, auto vb) HWY_ATTR {
    (void)d;
    return hn::Mul(va, vb);
  });
}

inline void Add(const float* a, const float* b, float* y, size_t n) {
  const hn::ScalableTag<float> df;
  TransformBinary(df, a, b, y, n, [](auto d, auto va, auto vb) HWY_ATTR {
    (void)d;
    return hn::Add(va, vb);
  });
}

inline void Scale(const float* x, float s, float* y, size_t n) {
  const hn::ScalableTag<float> df;
  const auto vs = hn::Set(df, s);
  TransformUnary(df, x, y, n, [vs](auto d, auto v) HWY_ATTR {
    (void)d;
    return hn::Mul(v, vs);
  });
}

inline void Softcap(const float* x, float cap, float* y, size_t n) {
  const hn::ScalableTag<float> df;
  const auto vcap = hn::Set(df, cap);
  TransformUnary(df, x, y, n, [vcap](auto d, auto v) HWY_ATTR {
    return SoftcapV(d, v, vcap);
  });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_ELEMENTWISE_INL_H_
