// Per-target SIMD building blocks shared by the ops/ kernels: tail-safe loads
// and stores, bf16 / f16 -> f32 widening loads, and element-wise transform
// loops with a vector tail.
//
// Per-target code (Highway "toggle" include guard): include this after
// hwy/highway.h from a -inl.h or from a .cc that is re-included by
// hwy/foreach_target.h.

#if defined(CORTIQ_OPS_VEC_UTIL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_VEC_UTIL_INL_H_
#undef CORTIQ_OPS_VEC_UTIL_INL_H_
#else
#define CORTIQ_OPS_VEC_UTIL_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include "hwy/base.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Loads p[0, count) into the low lanes of a vector of `d` and zeroes the other
// lanes. Reads exactly count elements (never past the end of an array); count
// <= Lanes(d). Used only for the final partial vector of a loop, so the copy
// through a stack buffer is not hot.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE hn::VFromD<D> LoadPadded(D d, const T* p, size_t count) {
  HWY_ALIGN T buf[HWY_MAX_BYTES / sizeof(T)];
  memset(buf, 0, sizeof(buf));
  memcpy(buf, p, count * sizeof(T));
  return hn::Load(d, buf);
}

// Stores the low `count` lanes of v to p[0, count); writes nothing else. count
// <= Lanes(d).
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE void StorePartial(D d, hn::VFromD<D> v, T* p, size_t count) {
  HWY_ALIGN T buf[HWY_MAX_BYTES / sizeof(T)];
  hn::Store(v, d, buf);
  memcpy(p, buf, count * sizeof(T));
}

// Loads Lanes(df) consecutive values starting at p (unaligned) as f32. For bf16
// the values are widened exactly (bf16 is the upper half of an f32), in
// registers; memory stays bf16.
template <class DF>
HWY_INLINE hn::VFromD<DF> LoadAsF32(DF df, const float* p) {
  return hn::LoadU(df, p);
}
template <class DF>
HWY_INLINE hn::VFromD<DF> LoadAsF32(DF df, const hwy::bfloat16_t* p) {
  const hn::Rebind<hwy::bfloat16_t, DF> dbf;
  return hn::PromoteTo(df, hn::LoadU(dbf, p));
}


// The IEEE binary16 values whose bits are in the u16 lanes of `bits`, widened
// exactly to f32 (zero, subnormal, normal, inf; a NaN stays a NaN), as
// F16BitsToF32 (ops/quantize.h). x86 targets with F16C (AVX2, AVX-512): one
// vcvtph2ps. Elsewhere integer code (Highway's emulated conversion would turn
// inf and NaN into finite values).
template <class DF>
HWY_INLINE hn::VFromD<DF> PromoteF16Bits(
    DF df, hn::VFromD<hn::Rebind<uint16_t, DF>> bits) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  const hn::Rebind<hwy::float16_t, DF> df16;
  return hn::PromoteTo(df, hn::BitCast(df16, bits));
#else
  const hn::Rebind<uint32_t, DF> du;
  const hn::Rebind<int32_t, DF> di;
  const auto b = hn::PromoteTo(du, bits);
  const auto sign = hn::ShiftLeft<16>(hn::And(b, hn::Set(du, 0x8000u)));
  const auto exp = hn::And(hn::ShiftRight<10>(b), hn::Set(du, 0x1Fu));
  const auto mant = hn::And(b, hn::Set(du, 0x3FFu));
  const auto normal = hn::Or(hn::ShiftLeft<23>(hn::Add(exp, hn::Set(du, 112u))),
                             hn::ShiftLeft<13>(mant));
  const auto inf_nan = hn::Or(hn::Set(du, 0x7F800000u), hn::ShiftLeft<13>(mant));
  const auto subnormal = hn::BitCast(
      du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, mant)),
                  hn::Set(df, 1.0f / 16777216.0f)));  // mant * 2^-24, exact
  const auto magnitude = hn::IfThenElse(
      hn::Eq(exp, hn::Zero(du)), subnormal,
      hn::IfThenElse(hn::Eq(exp, hn::Set(du, 0x1Fu)), inf_nan, normal));
  return hn::BitCast(df, hn::Or(sign, magnitude));
#endif
}

template <class DF>
HWY_INLINE hn::VFromD<DF> LoadAsF32(DF df, const hwy::float16_t* p) {
  const hn::Rebind<uint16_t, DF> du16;
  return PromoteF16Bits(df, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p)));
}

// As LoadAsF32, but reads only p[0, count) and zeroes the remaining lanes
// (count <= Lanes(df)).
template <class DF>
HWY_INLINE hn::VFromD<DF> LoadAsF32Padded(DF df, const float* p, size_t count) {
  return LoadPadded(df, p, count);
}
template <class DF>
HWY_INLINE hn::VFromD<DF> LoadAsF32Padded(DF df, const hwy::bfloat16_t* p,
                                          size_t count) {
  const hn::Rebind<hwy::bfloat16_t, DF> dbf;
  return hn::PromoteTo(df, LoadPadded(dbf, p, count));
}

template <class DF>
HWY_INLINE hn::VFromD<DF> LoadAsF32Padded(DF df, const hwy::float16_t* p,
                                          size_t count) {
  const hn::Rebind<uint16_t, DF> du16;
  return PromoteF16Bits(
      df, LoadPadded(du16, reinterpret_cast<const uint16_t*>(p), count));
}

// Horizontal sum of all lanes of v, as a scalar.
template <class D>
HWY_INLINE hn::TFromD<D> ReduceSum(D d, hn::VFromD<D> v) {
  return hn::GetLane(hn::SumOfLanes(d, v));
}

// y[i] = func(df, LoadAsF32(x + i)) for i in [0, n), Lanes(df) at a time; the
// final partial vector goes through LoadAsF32Padded / StorePartial, so every
// element is computed by the same vector code (no scalar fallback whose
// rounding could differ). x and y may be the same array (in place); otherwise
// they must not overlap. T is float, hwy::bfloat16_t or hwy::float16_t.
template <class DF, typename T, class Func>
HWY_INLINE void TransformUnary(DF df, const T* x, float* y, size_t n,
                               const Func& func) {
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  if (n >= 2 * N) {
    for (; i <= n - 2 * N; i += 2 * N) {
      const auto v0 = func(df, LoadAsF32(df, x + i));
      const auto v1 = func(df, LoadAsF32(df, x + i + N));
      hn::StoreU(v0, df, y + i);
      hn::StoreU(v1, df, y + i + N);
    }
  }
  for (; i + N <= n; i += N) {
    hn::StoreU(func(df, LoadAsF32(df, x + i)), df, y + i);
  }
  if (i != n) {
    StorePartial(df, func(df, LoadAsF32Padded(df, x + i, n - i)), y + i, n - i);
  }
}

// y[i] = func(df, a[i..], b[i..]) for i in [0, n), as TransformUnary. y may
// equal a and/or b.
template <class DF, class Func>
HWY_INLINE void TransformBinary(DF df, const float* a, const float* b, float* y,
                                size_t n, const Func& func) {
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  if (n >= 2 * N) {
    for (; i <= n - 2 * N; i += 2 * N) {
      const auto v0 = func(df, hn::LoadU(df, a + i), hn::LoadU(df, b + i));
      const auto v1 =
          func(df, hn::LoadU(df, a + i + N), hn::LoadU(df, b + i + N));
      hn::StoreU(v0, df, y + i);
      hn::StoreU(v1, df, y + i + N);
    }
  }
  for (; i + N <= n; i += N) {
    hn::StoreU(func(df, hn::LoadU(df, a + i), hn::LoadU(df, b + i)), df, y + i);
  }
  if (i != n) {
    const size_t r = n - i;
    StorePartial(df,
                 func(df, LoadPadded(df, a + i, r), LoadPadded(df, b + i, r)),
                 y + i, r);
  }
}

// y[i] = func(df, a[i..], b[i..], c[i..]) for i in [0, n), as TransformUnary.
// y may equal a, b and/or c.
template <class DF, class Func>
HWY_INLINE void TransformTernary(DF df, const float* a, const float* b,
                                 const float* c, float* y, size_t n,
                                 const Func& func) {
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  if (n >= 2 * N) {
    for (; i <= n - 2 * N; i += 2 * N) {
      const auto v0 = func(df, hn::LoadU(df, a + i), hn::LoadU(df, b + i),
                           hn::LoadU(df, c + i));
      const auto v1 = func(df, hn::LoadU(df, a + i + N),
                           hn::LoadU(df, b + i + N), hn::LoadU(df, c + i + N));
      hn::StoreU(v0, df, y + i);
      hn::StoreU(v1, df, y + i + N);
    }
  }
  for (; i + N <= n; i += N) {
    hn::StoreU(func(df, hn::LoadU(df, a + i), hn::LoadU(df, b + i),
                    hn::LoadU(df, c + i)),
               df, y + i);
  }
  if (i != n) {
    const size_t r = n - i;
    StorePartial(df,
                 func(df, LoadPadded(df, a + i, r), LoadPadded(df, b + i, r),
                      LoadPadded(df, c + i, r)),
                 y + i, r);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_VEC_UTIL_INL_H_
