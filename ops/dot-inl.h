// Per-target dot products with f32 accumulation: Dot (one row against a vector,
// weights f32 or bf16) and DotRows4 (four rows against the same vector, sharing
// the vector's loads). Used by Linear, Attention and RmsNorm.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_DOT_INL_H_
#undef CORTIQ_OPS_DOT_INL_H_
#else
#define CORTIQ_OPS_DOT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Returns sum_{i<n} a[i] * b[i] (n >= 0), a f32 or bf16 (widened exactly), b
// f32.
//
// Accumulation: four independent vector accumulators of f32 FMAs (4 chains hide
// the FMA latency of 4 cycles at one FMA per cycle per chain), then one
// horizontal sum. The final partial vector, if n >= Lanes, re-reads the last
// full vector [n - N, n) with the lanes that were already counted zeroed in
// both operands (so no reads past the end and no per-element branch); if n <
// Lanes it goes through a zero-padded copy. Error bound: |err| <= (n / (4 N) +
// 2 + log2 N) * 2^-24 * sum_i |a_i b_i| (standard blocked-summation bound).
template <class DF, typename WT>
HWY_INLINE float Dot(DF df, const WT* a, const float* b, size_t n) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  V s0 = hn::Zero(df), s1 = hn::Zero(df), s2 = hn::Zero(df), s3 = hn::Zero(df);
  size_t i = 0;
  if (n >= 4 * N) {
    for (; i <= n - 4 * N; i += 4 * N) {
      s0 = hn::MulAdd(LoadAsF32(df, a + i), hn::LoadU(df, b + i), s0);
      s1 = hn::MulAdd(LoadAsF32(df, a + i + N), hn::LoadU(df, b + i + N), s1);
      s2 = hn::MulAdd(LoadAsF32(df, a + i + 2 * N),
                      hn::LoadU(df, b + i + 2 * N), s2);
      s3 = hn::MulAdd(LoadAsF32(df, a + i + 3 * N),
                      hn::LoadU(df, b + i + 3 * N), s3);
    }
  }
  for (size_t v = (n - i) / N; v != 0;
       --v, i += N) {  // remaining whole vectors
    s0 = hn::MulAdd(LoadAsF32(df, a + i), hn::LoadU(df, b + i), s0);
  }
  if (i != n) {
    if (n >= N) {
      // Lanes [0, N - (n - i)) of the last full vector were counted above.
      const auto counted = hn::FirstN(df, N - (n - i));
      const V va = hn::IfThenZeroElse(counted, LoadAsF32(df, a + n - N));
      const V vb = hn::IfThenZeroElse(counted, hn::LoadU(df, b + n - N));
      s1 = hn::MulAdd(va, vb, s1);
    } else {
      s1 = hn::MulAdd(LoadAsF32Padded(df, a, n), LoadPadded(df, b, n), s1);
    }
  }
  return ReduceSum(df, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)));
}

// How far ahead of the current column DotRows4 prefetches each weight row, in
// bytes. Measured on the AVX-512 (Zen 4) dev machine, 10240 x 2560 matrices
// streamed from DRAM: 2 KiB ahead raised bf16 from ~18 to ~24 GB/s and f32 from
// ~27 to ~36 GB/s; 1 KiB was slightly worse, 4 KiB worse than none (lines
// evicted before use).
constexpr size_t kPrefetchBytes = 2048;

// Prefetches the line `offset` bytes past p. Computed on integers: the address
// may lie past the end of the matrix, which is harmless for a prefetch (it
// never faults).
template <typename T>
HWY_INLINE void PrefetchAt(const T* p, size_t offset) {
  hwy::Prefetch(reinterpret_cast<const uint8_t*>(
      reinterpret_cast<uintptr_t>(p) + offset));
}

// Prefetches the line `offset` bytes past p into L2 (not L1): x86
// prefetcht1 (GCC's locality 2); computed on integers as PrefetchAt. Where
// the L1 has few miss buffers, lines requested into L2 whole passes ahead
// keep more of them in flight (DotRows4's kIntoL2; ops/cpu_features.h
// DecodePrefetchIntoL2).
template <typename T>
HWY_INLINE void PrefetchIntoL2At(const T* p, size_t offset) {
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + offset),
                     /*rw=*/0, /*locality=*/2);
}

// out[k] = Dot(rows[k], x, n) for the four rows rows[k] = w + k * stride, k
// < 4.
//
// The hot loop of a matrix-vector product: each x vector is loaded once for
// four weight rows, and two column vectors per step give 8 independent FMA
// chains (enough to cover latency on 2 FMA ports). Rows are streamed front to
// back with software prefetch kPrefetchBytes ahead on top of the hardware
// prefetchers. With kPrefetchNextGroup (stride == n: consecutive rows), once
// that distance runs past the end of row k, the line prefetched is at the same
// distance in row k + 4, the same row of the next group, instead of in row
// k + 1, which this group is already streaming (rows are short: 5 KiB in bf16
// at n = 2560). With kIntoL2 (stride == n) instead, each line is prefetched
// into L2 `pass_ahead` bytes ahead (a whole number of groups: the same line of
// a later group's row), kPrefetchNextGroup then unused. Same tail handling and
// error bound as Dot (with 2 N instead of 4 N per chain step); each row gets
// the bits DotRows1 gives it.
template <bool kPrefetchNextGroup, bool kIntoL2 = false, class DF, typename WT>
HWY_INLINE void DotRows4(DF df, const WT* w, size_t stride, const float* x,
                         size_t n, float* out, size_t pass_ahead = 0) {
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
      // One prefetch per 64-byte line of the 2 N weights of this step, per row
      // (the bound is a compile-time constant on fixed-width targets, so this
      // loop unrolls).
      for (size_t line = 0; line < 2 * N * sizeof(WT); line += 64) {
        if constexpr (kIntoL2) {
          const size_t ahead = i * sizeof(WT) + line + pass_ahead;
          PrefetchIntoL2At(w0, ahead);
          PrefetchIntoL2At(w1, ahead);
          PrefetchIntoL2At(w2, ahead);
          PrefetchIntoL2At(w3, ahead);
        } else {
          const size_t pos = i * sizeof(WT) + line + kPrefetchBytes;
          const size_t ahead = kPrefetchNextGroup && pos >= row_bytes ? pos + wrap : pos;
          PrefetchAt(w0, ahead);
          PrefetchAt(w1, ahead);
          PrefetchAt(w2, ahead);
          PrefetchAt(w3, ahead);
        }
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

// DotRows4 for one row: the same operations in the same order
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

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_DOT_INL_H_
