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
#include <stdint.h>

#include "hwy/base.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// DotRows4 (ops/dot-inl.h) for one row: the same operations in the same order
// as DotRows4 performs for each of its rows (chain a over the even vectors,
// chain b over the odd ones and the tail, then ReduceSum(a + b)), so a row
// gets the same bits whether it is computed in a group of four or alone.
template <class DF, typename WT>
HWY_INLINE float DotRows1(DF df, const WT* HWY_RESTRICT w,
                          const float* HWY_RESTRICT x, size_t n) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  V a = hn::Zero(df), b = hn::Zero(df);
  size_t i = 0;
  if (n >= 2 * N) {
    for (; i <= n - 2 * N; i += 2 * N) {
      a = hn::MulAdd(LoadAsF32(df, w + i), hn::LoadU(df, x + i), a);
      b = hn::MulAdd(LoadAsF32(df, w + i + N), hn::LoadU(df, x + i + N), b);
    }
  }
  if (i + N <= n) {
    a = hn::MulAdd(LoadAsF32(df, w + i), hn::LoadU(df, x + i), a);
    i += N;
  }
  if (i != n) {
    if (n >= N) {
      const auto counted = hn::FirstN(df, N - (n - i));
      const size_t s = n - N;
      b = hn::MulAdd(hn::IfThenZeroElse(counted, LoadAsF32(df, w + s)),
                     hn::IfThenZeroElse(counted, hn::LoadU(df, x + s)), b);
    } else {
      b = hn::MulAdd(LoadAsF32Padded(df, w, n), LoadPadded(df, x, n), b);
    }
  }
  return ReduceSum(df, hn::Add(a, b));
}

// Prefetches the line `offset` bytes past p (computed on integers: the address
// may lie past the end of the matrix; a prefetch never faults).
template <typename T>
HWY_INLINE void PrefetchRowAt(const T* p, size_t offset) {
  hwy::Prefetch(reinterpret_cast<const uint8_t*>(
      reinterpret_cast<uintptr_t>(p) + offset));
}

// DotRows4 (ops/dot-inl.h) with the prefetch of LinearQuantRows
// (ops/linear_quant-inl.h): out[k] =
// dot(w + k * stride, x) for k < 4, the same operations in the same order as
// DotRows4 (so the same bits as DotRows1 per row), but once kPrefetchBytes
// ahead runs past the end of row k, the line prefetched is at the same
// distance in row k + 4, the same row of the next group, instead of in row k +
// 1, which this group is already streaming (rows are short: 5 KiB in bf16 at
// cols = 2560).
template <class DF, typename WT>
HWY_INLINE void LinearDotRows4(DF df, const WT* HWY_RESTRICT w, size_t stride,
                               const float* HWY_RESTRICT x, size_t n,
                               float* HWY_RESTRICT out) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  const WT* w0 = w;
  const WT* w1 = w + stride;
  const WT* w2 = w + 2 * stride;
  const WT* w3 = w + 3 * stride;
  V a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
  V b0 = hn::Zero(df), b1 = hn::Zero(df), b2 = hn::Zero(df), b3 = hn::Zero(df);
  const size_t row_bytes = n * sizeof(WT);
  const size_t wrap = 3 * stride * sizeof(WT);
  size_t i = 0;
  if (n >= 2 * N) {
    for (; i <= n - 2 * N; i += 2 * N) {
      for (size_t line = 0; line < 2 * N * sizeof(WT); line += 64) {
        const size_t pos = i * sizeof(WT) + line + kPrefetchBytes;
        const size_t ahead = pos < row_bytes ? pos : pos + wrap;
        PrefetchRowAt(w0, ahead);
        PrefetchRowAt(w1, ahead);
        PrefetchRowAt(w2, ahead);
        PrefetchRowAt(w3, ahead);
      }
      const V x0 = hn::LoadU(df, x + i);
      const V x1 = hn::LoadU(df, x + i + N);
      a0 = hn::MulAdd(LoadAsF32(df, w0 + i), x0, a0);
      a1 = hn::MulAdd(LoadAsF32(df, w1 + i), x0, a1);
      a2 = hn::MulAdd(LoadAsF32(df, w2 + i), x0, a2);
      a3 = hn::MulAdd(LoadAsF32(df, w3 + i), x0, a3);
      b0 = hn::MulAdd(LoadAsF32(df, w0 + i + N), x1, b0);
      b1 = hn::MulAdd(LoadAsF32(df, w1 + i + N), x1, b1);
      b2 = hn::MulAdd(LoadAsF32(df, w2 + i + N), x1, b2);
      b3 = hn::MulAdd(LoadAsF32(df, w3 + i + N), x1, b3);
    }
  }
  if (i + N <= n) {
    const V x0 = hn::LoadU(df, x + i);
    a0 = hn::MulAdd(LoadAsF32(df, w0 + i), x0, a0);
    a1 = hn::MulAdd(LoadAsF32(df, w1 + i), x0, a1);
    a2 = hn::MulAdd(LoadAsF32(df, w2 + i), x0, a2);
    a3 = hn::MulAdd(LoadAsF32(df, w3 + i), x0, a3);
    i += N;
  }
  if (i != n) {
    if (n >= N) {
      const auto counted = hn::FirstN(df, N - (n - i));
      const size_t s = n - N;
      const V xt = hn::IfThenZeroElse(counted, hn::LoadU(df, x + s));
      b0 = hn::MulAdd(hn::IfThenZeroElse(counted, LoadAsF32(df, w0 + s)), xt,
                      b0);
      b1 = hn::MulAdd(hn::IfThenZeroElse(counted, LoadAsF32(df, w1 + s)), xt,
                      b1);
      b2 = hn::MulAdd(hn::IfThenZeroElse(counted, LoadAsF32(df, w2 + s)), xt,
                      b2);
      b3 = hn::MulAdd(hn::IfThenZeroElse(counted, LoadAsF32(df, w3 + s)), xt,
                      b3);
    } else {
      const V xt = LoadPadded(df, x, n);
      b0 = hn::MulAdd(LoadAsF32Padded(df, w0, n), xt, b0);
      b1 = hn::MulAdd(LoadAsF32Padded(df, w1, n), xt, b1);
      b2 = hn::MulAdd(LoadAsF32Padded(df, w2, n), xt, b2);
      b3 = hn::MulAdd(LoadAsF32Padded(df, w3, n), xt, b3);
    }
  }
  out[0] = ReduceSum(df, hn::Add(a0, b0));
  out[1] = ReduceSum(df, hn::Add(a1, b1));
  out[2] = ReduceSum(df, hn::Add(a2, b2));
  out[3] = ReduceSum(df, hn::Add(a3, b3));
}

// y[r] = sum_c w[r * cols + c] * x[c] for r in [row_begin, row_end); WT is
// float or hwy::bfloat16_t. Contract and precision as LinearF32 / LinearBF16 in
// ops/linear.h. Rows go four at a time (x loaded once per four rows) through
// LinearDotRows4 for bf16 and DotRows4 for f32; the < 4 leftover rows use
// DotRows1, which computes a row exactly as both do, so every y[r] is
// independent of row_begin / row_end (of how the rows are split between
// threads).
//
// Prefetch (measured, E4B shapes from DRAM, this machine, interleaved runs):
// LinearDotRows4's wrap to the next group raised bf16 from 20-26 to 26-28 GB/s
// with one thread (2560x2048: 22 -> 27) and from 42-55 to 52-61 GB/s with two;
// for f32 (rows of 8-40 KiB, so the wrap matters less) it measured the same or
// ~5% slower, so f32 keeps DotRows4. Distance: kPrefetchBytes (2 KiB); 1 KiB
// and 3 KiB measured 3-10% slower for bf16 (one and two threads).
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
    if constexpr (sizeof(WT) == 2) {
      LinearDotRows4(df, w + r * cols, cols, x, cols, y + r);
    } else {
      DotRows4(df, w + r * cols, cols, x, cols, y + r);
    }
  }
  for (; r < row_end; ++r) {
    y[r] = DotRows1(df, w + r * cols, x, cols);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_INL_H_
