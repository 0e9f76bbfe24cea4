// Per-target single-query attention (Attention, AttentionRing, AttentionRingHeads) over blocks of
// the query heads that share a KV head, and its building blocks; public API and formula:
// ops/attention.h.
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

#include <type_traits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "ops/attention.h"
#include "ops/dot-inl.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Below this, s_i - max gives 0 instead of its exp (< e^-40 ~ 4e-18 of the
// largest weight): at most 32k such terms move the sum and the weighted sums by
// < 2^-45 of the largest term, far under f32's rounding, while exponentials
// and products near the subnormal range (e^-87 and below) would each cost a
// microcode assist on Intel cores (measured on an Emerald Rapids VM, E2B at
// 4096 positions: attention 78-106 ms per token before, on a synthetic model
// whose far positions score low).
constexpr float kExpFlushBelow = -40.0f;

// Replaces s[0, n) (n >= 1) by exp(s_i - max_k s_k), 0 where s_i - max <
// kExpFlushBelow, and returns the f32 sum of the new values (>= 1, since the
// maximum maps to exp(0) = 1). Normalization is left to the caller.
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
  const V floor = hn::Set(df, kExpFlushBelow);
  // exp(d), or 0 for d < kExpFlushBelow (Exp never sees an input that small).
  const auto exp_or_zero = [&](V d) {
    return hn::IfThenElseZero(hn::Ge(d, floor), hn::Exp(df, hn::Max(d, floor)));
  };
  V sum = hn::Zero(df);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const V e = exp_or_zero(hn::Sub(hn::LoadU(df, s + i), vmax));
    sum = hn::Add(sum, e);
    hn::StoreU(e, df, s + i);
  }
  if (i != n) {
    // Padding lanes are set to max (so they compute exp(0), within Exp's valid
    // range); they are neither summed nor stored.
    const size_t r = n - i;
    const auto valid = hn::FirstN(df, r);
    const V e = exp_or_zero(
        hn::Sub(hn::IfThenElse(valid, LoadPadded(df, s + i, r), vmax), vmax));
    sum = hn::Add(sum, hn::IfThenElseZero(valid, e));
    StorePartial(df, e, s + i, r);
  }
  return ReduceSum(df, sum);
}

// Prefetches the `bytes` bytes at p, one 64-byte line at a time (PrefetchAt, ops/dot-inl.h).
template <typename T>
HWY_INLINE void PrefetchBytes(const T* p, size_t bytes) {
  for (size_t b = 0; b < bytes; b += 64) PrefetchAt(p, b);
}

// Scores of M query heads against R key rows: out[r * M + m] = dot(k[r], q[m]) over n elements.
// Each dot is one accumulator: s = k[0, N) q[0, N), then s += k[i, i + N) q[i, i + N) for i = N,
// 2N, ..., the partial tail (kTail: n % N != 0) zero-padded, then a reduction of the lanes
// (ReduceSum): the same operations whatever M and R, so a (head, row) score has the same bits in
// any block of heads and rows (how threads split the heads or the rows). The M heads share each
// load of a key row, the R rows each load of a query head: M = 4, R = 4 is 16 accumulators and 8
// loads per 16 multiply-adds, which keeps AVX-512's two FMA pipes busy where 4 x 2 rows with two
// accumulators per dot (the earlier kernel: 12 loads per 16) ran at ~40% of them from cache
// (Zen 5). kPrefetch: pf[r] is key row r of a later block, whose lines are prefetched along the
// way (one per 64 bytes of k[r]). Both are template parameters because GCC 12 kept the 16
// accumulators in registers only when neither the tail nor a run-time prefetch test was in the
// loop's function (with either, it stored them to the stack every step: ~2x slower).
template <size_t M, size_t R, bool kPrefetch, bool kTail, class DF, typename KT>
HWY_INLINE void DotHeadsRows(DF df, const KT* const* k, const float* const* q, size_t n,
                             const KT* const* pf, float* out) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  // Key elements per 64-byte line (Lanes(df) * sizeof(KT) is a multiple of 64 or divides it).
  constexpr size_t kLine = 64 / sizeof(KT);
  V s[R][M];
  for (size_t r = 0; r < R; ++r) {
    for (size_t m = 0; m < M; ++m) s[r][m] = hn::Zero(df);
  }
  size_t i = 0;
  for (; i + N <= n; i += N) {
    if (kPrefetch && i % kLine < N) {
      for (size_t r = 0; r < R; ++r) PrefetchBytes(pf[r] + i, N * sizeof(KT));
    }
    V qv[M];
    for (size_t m = 0; m < M; ++m) qv[m] = hn::LoadU(df, q[m] + i);
    for (size_t r = 0; r < R; ++r) {
      const V kv = LoadAsF32(df, k[r] + i);
      for (size_t m = 0; m < M; ++m) s[r][m] = hn::MulAdd(kv, qv[m], s[r][m]);
    }
  }
  if (kTail && i != n) {
    for (size_t r = 0; r < R; ++r) {
      const V kv = LoadAsF32Padded(df, k[r] + i, n - i);
      for (size_t m = 0; m < M; ++m) {
        s[r][m] = hn::MulAdd(kv, LoadPadded(df, q[m] + i, n - i), s[r][m]);
      }
    }
  }
  for (size_t r = 0; r < R; ++r) {
    for (size_t m = 0; m < M; ++m) out[r * M + m] = ReduceSum(df, s[r][m]);
  }
}

// Key rows per DotHeadsRows call of ScoreRows (the rest one at a time).
inline constexpr size_t kScoreRowBlock = 4;

// ScoreRows for one (kPrefetch, kTail): see ScoreRows.
template <size_t M, bool kPrefetch, bool kTail, class DF, typename KT, class RowFn>
HWY_INLINE void ScoreRowsT(DF df, const float* const* q, const KT* k_rows, const RowFn& row,
                           size_t row_stride, size_t head_dim, float scale, size_t row_begin,
                           size_t row_end, size_t num_rows, size_t prefetch_rows,
                           size_t prefetch_end, float* scores) {
  constexpr size_t R = kScoreRowBlock;
  size_t i = row_begin;
#if !HWY_HAVE_SCALABLE  // no arrays of sizeless vectors beyond one row
  for (; i + R <= row_end; i += R) {
    const KT* k[R];
    const KT* pf[R] = {};
    for (size_t r = 0; r < R; ++r) {
      k[r] = k_rows + row(i + r) * row_stride;
      if constexpr (kPrefetch) {
        // Past the end: the last row again (already cached, and a valid address).
        const size_t ahead = i + r + prefetch_rows;
        pf[r] = k_rows + row(ahead < prefetch_end ? ahead : prefetch_end - 1) * row_stride;
      }
    }
    float dots[R * M];
    DotHeadsRows<M, R, kPrefetch, kTail>(df, k, q, head_dim, pf, dots);
    for (size_t m = 0; m < M; ++m) {
      for (size_t r = 0; r < R; ++r) scores[m * num_rows + i + r] = scale * dots[r * M + m];
    }
  }
#else
  (void)prefetch_rows;
  (void)prefetch_end;
#endif
  for (; i < row_end; ++i) {
    const KT* k[1] = {k_rows + row(i) * row_stride};
    float dots[M];
    DotHeadsRows<M, 1, false, kTail>(df, k, q, head_dim, static_cast<const KT* const*>(nullptr),
                                     dots);
    for (size_t m = 0; m < M; ++m) scores[m * num_rows + i] = scale * dots[m];
  }
}

// The scores of M heads (q[m], the key rows of one KV head from k_rows) against the rows i in
// [row_begin, row_end) given by `row`: scores[m * num_rows + i] = scale * dot, kScoreRowBlock
// rows at a time (DotHeadsRows: the same bits one row at a time). With prefetch_rows > 0, the
// rows i + prefetch_rows (while < prefetch_end, prefetch_end >= 1) are prefetched along the way.
template <size_t M, class DF, typename KT, class RowFn>
HWY_INLINE void ScoreRows(DF df, const float* const* q, const KT* k_rows, const RowFn& row,
                          size_t row_stride, size_t head_dim, float scale, size_t row_begin,
                          size_t row_end, size_t num_rows, size_t prefetch_rows,
                          size_t prefetch_end, float* scores) {
  const bool tail = head_dim % hn::Lanes(df) != 0;
  if (prefetch_rows != 0 && !tail) {
    ScoreRowsT<M, true, false>(df, q, k_rows, row, row_stride, head_dim, scale, row_begin,
                               row_end, num_rows, prefetch_rows, prefetch_end, scores);
  } else if (!tail) {
    ScoreRowsT<M, false, false>(df, q, k_rows, row, row_stride, head_dim, scale, row_begin,
                                row_end, num_rows, 0, 0, scores);
  } else {
    // A head_dim that is not a whole number of vectors: correct, without the prefetch.
    ScoreRowsT<M, false, true>(df, q, k_rows, row, row_stride, head_dim, scale, row_begin,
                               row_end, num_rows, 0, 0, scores);
  }
}

// out[m][d] = sum_i a[m][i] * v_i[d] for M heads and d < n, summed over i in [row_begin, row_end)
// in order, each term one MulAdd (out = a * v + out from a zeroed row, or, with `resume`, from
// the out a call over the preceding rows left: a sum cut into consecutive row ranges is the same
// sum bit for bit, as the f32 accumulators pass through memory unchanged): columns are
// accumulated in registers, kColumns vectors at a time, and the M heads share each load of v.
//
// With prefetch_rows > 0, each column block prefetches its lines of row i + prefetch_rows (while
// < prefetch_end) as it reads row i: a block reads one or two lines of each row, a stride the
// hardware prefetchers follow poorly (E2B's 1 KiB f16 rows from DRAM: ~11 GB/s without, one
// thread; ~20 with).
template <size_t M, class DF, typename VT, class RowFn>
HWY_INLINE void WeightedSumHeads(DF df, const VT* HWY_RESTRICT v_rows, const RowFn& row,
                                 size_t row_stride, size_t row_begin, size_t row_end,
                                 bool resume, const float* const* a, float* const* out,
                                 size_t n, size_t prefetch_rows, size_t prefetch_end) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  // M * kColumns accumulators: 16 of AVX-512's 32 registers for M = 4.
  constexpr size_t kColumns = 4;
  size_t d = 0;
  for (; d + kColumns * N <= n; d += kColumns * N) {
    V acc[M][kColumns];
    for (size_t m = 0; m < M; ++m) {
      for (size_t c = 0; c < kColumns; ++c) {
        acc[m][c] = resume ? hn::LoadU(df, out[m] + d + c * N) : hn::Zero(df);
      }
    }
    // Rows i < prefetch_stop prefetch row i + prefetch_rows (< prefetch_end).
    const size_t prefetch_stop =
        prefetch_rows != 0 && prefetch_end > prefetch_rows ? prefetch_end - prefetch_rows : 0;
    for (size_t i = row_begin; i < row_end; ++i) {
      const VT* vr = v_rows + row(i) * row_stride + d;
      if (i < prefetch_stop) {
        PrefetchBytes(v_rows + row(i + prefetch_rows) * row_stride + d, kColumns * N * sizeof(VT));
      }
      V vv[kColumns];
      for (size_t c = 0; c < kColumns; ++c) vv[c] = LoadAsF32(df, vr + c * N);
      for (size_t m = 0; m < M; ++m) {
        const V am = hn::Set(df, a[m][i]);
        for (size_t c = 0; c < kColumns; ++c) acc[m][c] = hn::MulAdd(am, vv[c], acc[m][c]);
      }
    }
    for (size_t m = 0; m < M; ++m) {
      for (size_t c = 0; c < kColumns; ++c) hn::StoreU(acc[m][c], df, out[m] + d + c * N);
    }
  }
  // The remaining columns one vector (or a partial one) at a time.
  for (; d < n; d += N) {
    const size_t r = n - d < N ? n - d : N;
    V acc[M];
    for (size_t m = 0; m < M; ++m) acc[m] = resume ? LoadPadded(df, out[m] + d, r) : hn::Zero(df);
    for (size_t i = row_begin; i < row_end; ++i) {
      const VT* vr = v_rows + row(i) * row_stride + d;
      const V vv = r == N ? LoadAsF32(df, vr) : LoadAsF32Padded(df, vr, r);
      for (size_t m = 0; m < M; ++m) acc[m] = hn::MulAdd(hn::Set(df, a[m][i]), vv, acc[m]);
    }
    for (size_t m = 0; m < M; ++m) StorePartial(df, acc[m], out[m] + d, r);
  }
}

// The ring-order row map: view row i (0 = the oldest visible) is storage row first_row + i
// until the ring's end (i < wrap), then wraps to 0, 1, ...
struct RingRows {
  size_t wrap, first_row;
  size_t operator()(size_t i) const { return i < wrap ? first_row + i : i - wrap; }
};
inline RingRows MakeRingRows(size_t ring_rows, size_t first_row, size_t num_rows) {
  return {num_rows < ring_rows - first_row ? num_rows : ring_rows - first_row, first_row};
}

// The number of heads of one KV head (group heads each) that the block starting at head h <
// head_end takes: 4, 2 or 1 (kAttentionHeadBlock); always 1 on scalable targets, which allow no
// arrays of sizeless vectors.
inline size_t HeadBlockAt(size_t h, size_t head_end, size_t group) {
  static_assert(kAttentionHeadBlock == 4, "blocks of 4, 2 and 1 heads");
  const size_t kv_end = (h / group + 1) * group;
  const size_t left = (head_end < kv_end ? head_end : kv_end) - h;
#if HWY_HAVE_SCALABLE
  (void)left;
  return 1;
#else
  return left >= 4 ? 4 : left >= 2 ? 2 : 1;
#endif
}

// Calls f(std::integral_constant<size_t, M>()) for a block of m = HeadBlockAt(...) heads, so the
// kernels templated on M are instantiated for 4, 2 and 1 (1 only on scalable targets).
template <class F>
HWY_INLINE void WithHeadBlock(size_t m, const F& f) {
#if HWY_HAVE_SCALABLE
  (void)m;
  f(std::integral_constant<size_t, 1>());
#else
  if (m == 4) {
    f(std::integral_constant<size_t, 4>());
  } else if (m == 2) {
    f(std::integral_constant<size_t, 2>());
  } else {
    f(std::integral_constant<size_t, 1>());
  }
#endif
}

// Rows per pass of the phases: the head blocks of a KV head read the same key (value) rows, so
// the phases go through the rows in chunks of ~128 KiB of one KV head's keys (values), which stay
// in L2 while every head block reads them, instead of streaming the whole cache from memory once
// per head block (E2B at 16k positions: two 32 MiB passes per layer).
inline size_t RowsPerChunk(size_t row_bytes) {
  const size_t rows = (size_t{128} << 10) / (row_bytes == 0 ? 1 : row_bytes);
  return rows < 16 ? 16 : rows;
}

// Heads [h0, h0 + M) of one KV head (kv_offset), over the rows given by `row`; scratch holds
// M * num_rows floats.
template <size_t M, class DF, typename KT, class RowFn>
HWY_INLINE void AttentionHeads(DF df, const float* q, const KT* k_rows, const KT* v_rows,
                               const RowFn& row, size_t num_rows, size_t row_stride,
                               size_t kv_offset, size_t h0, size_t head_dim, float scale,
                               float* scratch, float* out) {
  const float* qh[M];
  float* oh[M];
  const float* a[M];
  for (size_t m = 0; m < M; ++m) {
    qh[m] = q + (h0 + m) * head_dim;
    oh[m] = out + (h0 + m) * head_dim;
    a[m] = scratch + m * num_rows;
  }
  if (num_rows == 0) {
    for (size_t m = 0; m < M; ++m) memset(oh[m], 0, head_dim * sizeof(float));
    return;
  }
  // Rows stream from memory once (one block of heads per KV head here): prefetched a chunk
  // ahead (RowsPerChunk) by the scores and by each column block of the weighted sums.
  const size_t ahead = RowsPerChunk(head_dim * sizeof(KT));
  ScoreRows<M>(df, qh, k_rows + kv_offset, row, row_stride, head_dim, scale, 0, num_rows,
               num_rows, ahead, num_rows, scratch);
  float inv_sum[M];
  for (size_t m = 0; m < M; ++m) {
    inv_sum[m] = 1.0f / ExpMinusMaxInPlace(df, scratch + m * num_rows, num_rows);
  }
  WeightedSumHeads<M>(df, v_rows + kv_offset, row, row_stride, 0, num_rows, false, a, oh,
                      head_dim, ahead, num_rows);
  for (size_t m = 0; m < M; ++m) {
    const auto vinv = hn::Set(df, inv_sum[m]);
    TransformUnary(df, oh[m], oh[m], head_dim, [vinv](auto d, auto v) HWY_ATTR {
      (void)d;
      return hn::Mul(v, vinv);
    });
  }
}

// The phases of AttentionRingHeads over one query, each a range of the work, for threads that
// share the query's key and value rows instead of splitting its heads (ops/attention.h,
// AttentionScores / AttentionSoftmax / AttentionWeightedSum): each phase computes every value
// with AttentionHeads' operations in its order, so together they give its bits.

template <typename KT>
HWY_INLINE void AttentionScoresT(const float* q, const KT* k_rows, size_t ring_rows,
                                 size_t first_row, size_t num_rows, size_t row_begin,
                                 size_t row_end, size_t num_heads, size_t num_kv_heads,
                                 size_t head_dim, float scale, float* scores) {
  const hn::ScalableTag<float> df;
  const size_t group = num_heads / num_kv_heads;
  const size_t row_stride = num_kv_heads * head_dim;
  const RingRows row = MakeRingRows(ring_rows, first_row, num_rows);
  const size_t chunk = RowsPerChunk(head_dim * sizeof(KT));
  for (size_t c0 = row_begin; c0 < row_end; c0 += chunk) {
    const size_t c1 = row_end - c0 < chunk ? row_end : c0 + chunk;
    for (size_t h = 0; h < num_heads;) {
      const size_t m = HeadBlockAt(h, num_heads, group);
      const KT* k = k_rows + (h / group) * head_dim;
      const float* qh[4];
      for (size_t j = 0; j < 4; ++j) qh[j] = q + (h + (j < m ? j : 0)) * head_dim;
      float* sh = scores + h * num_rows;
      // The first block of heads of a KV head reads the chunk from memory and prefetches the
      // next one; the others find it in L2.
      const size_t ahead = h % group == 0 ? chunk : 0;
      WithHeadBlock(m, [&](auto block) HWY_ATTR {
        ScoreRows<decltype(block)::value>(df, qh, k, row, row_stride, head_dim, scale, c0, c1,
                                          num_rows, ahead, row_end, sh);
      });
      h += m;
    }
  }
}

inline void AttentionScores(const float* q, const float* k_rows, size_t ring_rows,
                            size_t first_row, size_t num_rows, size_t row_begin, size_t row_end,
                            size_t num_heads, size_t num_kv_heads, size_t head_dim, float scale,
                            float* scores) {
  AttentionScoresT(q, k_rows, ring_rows, first_row, num_rows, row_begin, row_end, num_heads,
                   num_kv_heads, head_dim, scale, scores);
}

inline void AttentionScoresF16(const float* q, const uint16_t* k_rows, size_t ring_rows,
                               size_t first_row, size_t num_rows, size_t row_begin,
                               size_t row_end, size_t num_heads, size_t num_kv_heads,
                               size_t head_dim, float scale, float* scores) {
  AttentionScoresT(q, reinterpret_cast<const hwy::float16_t*>(k_rows), ring_rows, first_row,
                   num_rows, row_begin, row_end, num_heads, num_kv_heads, head_dim, scale,
                   scores);
}

inline void AttentionSoftmax(float* scores, size_t num_rows, size_t head_begin, size_t head_end,
                             float* inv_sum) {
  const hn::ScalableTag<float> df;
  for (size_t h = head_begin; h < head_end; ++h) {
    inv_sum[h] = 1.0f / ExpMinusMaxInPlace(df, scores + h * num_rows, num_rows);
  }
}

template <typename VT>
HWY_INLINE void AttentionWeightedSumT(const VT* v_rows, size_t ring_rows, size_t first_row,
                                      size_t num_rows, size_t num_heads, size_t num_kv_heads,
                                      size_t head_dim, const float* weights,
                                      const float* inv_sum, size_t col_begin, size_t col_end,
                                      float* out) {
  const hn::ScalableTag<float> df;
  const size_t group = num_heads / num_kv_heads;
  const size_t row_stride = num_kv_heads * head_dim;
  const RingRows row = MakeRingRows(ring_rows, first_row, num_rows);
  const size_t n = col_end - col_begin;
  const size_t chunk = RowsPerChunk(n * sizeof(VT));
  for (size_t c0 = 0; c0 < num_rows; c0 += chunk) {
    const size_t c1 = num_rows - c0 < chunk ? num_rows : c0 + chunk;
    for (size_t h = 0; h < num_heads;) {
      const size_t m = HeadBlockAt(h, num_heads, group);
      const VT* v = v_rows + (h / group) * head_dim + col_begin;
      const float* a[4];
      float* oh[4];
      for (size_t j = 0; j < 4; ++j) {
        const size_t hj = h + (j < m ? j : 0);
        a[j] = weights + hj * num_rows;
        oh[j] = out + hj * head_dim + col_begin;
      }
      const size_t ahead = h % group == 0 ? chunk : 0;  // as AttentionScoresT
      WithHeadBlock(m, [&](auto block) HWY_ATTR {
        WeightedSumHeads<decltype(block)::value>(df, v, row, row_stride, c0, c1, c0 != 0, a, oh,
                                                 n, ahead, num_rows);
      });
      h += m;
    }
  }
  for (size_t h = 0; h < num_heads; ++h) {
    float* oh = out + h * head_dim + col_begin;
    const auto vinv = hn::Set(df, inv_sum[h]);
    TransformUnary(df, oh, oh, n, [vinv](auto d, auto x) HWY_ATTR {
      (void)d;
      return hn::Mul(x, vinv);
    });
  }
}

inline void AttentionWeightedSum(const float* v_rows, size_t ring_rows, size_t first_row,
                                 size_t num_rows, size_t num_heads, size_t num_kv_heads,
                                 size_t head_dim, const float* weights, const float* inv_sum,
                                 size_t col_begin, size_t col_end, float* out) {
  AttentionWeightedSumT(v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads,
                        head_dim, weights, inv_sum, col_begin, col_end, out);
}

inline void AttentionWeightedSumF16(const uint16_t* v_rows, size_t ring_rows, size_t first_row,
                                    size_t num_rows, size_t num_heads, size_t num_kv_heads,
                                    size_t head_dim, const float* weights, const float* inv_sum,
                                    size_t col_begin, size_t col_end, float* out) {
  AttentionWeightedSumT(reinterpret_cast<const hwy::float16_t*>(v_rows), ring_rows, first_row,
                        num_rows, num_heads, num_kv_heads, head_dim, weights, inv_sum, col_begin,
                        col_end, out);
}

// See ops/attention.h (AttentionRingHeads; AttentionRing is all heads, Attention the ring that
// starts at row 0).
template <typename KT>
HWY_INLINE void AttentionRingHeadsT(const float* q, const KT* k_rows, const KT* v_rows,
                               size_t ring_rows, size_t first_row, size_t num_rows,
                               size_t num_heads, size_t num_kv_heads, size_t head_dim,
                               float scale, size_t head_begin, size_t head_end, float* scratch,
                               float* out) {
  HWY_DASSERT(num_kv_heads >= 1 && num_heads % num_kv_heads == 0);
  HWY_DASSERT(num_rows <= ring_rows && (num_rows == 0 || first_row < ring_rows));
  HWY_DASSERT(head_begin <= head_end && head_end <= num_heads);
  const hn::ScalableTag<float> df;
  const size_t group = num_heads / num_kv_heads;
  const size_t row_stride = num_kv_heads * head_dim;
  const RingRows row = MakeRingRows(ring_rows, first_row, num_rows);
  // Blocks of up to kAttentionHeadBlock heads of one KV head.
  for (size_t h = head_begin; h < head_end;) {
    const size_t m = HeadBlockAt(h, head_end, group);
    const size_t kv_offset = (h / group) * head_dim;
    WithHeadBlock(m, [&](auto block) HWY_ATTR {
      AttentionHeads<decltype(block)::value>(df, q, k_rows, v_rows, row, num_rows, row_stride,
                                             kv_offset, h, head_dim, scale, scratch, out);
    });
    h += m;
  }
}

inline void AttentionRingHeads(const float* q, const float* k_rows, const float* v_rows,
                               size_t ring_rows, size_t first_row, size_t num_rows,
                               size_t num_heads, size_t num_kv_heads, size_t head_dim,
                               float scale, size_t head_begin, size_t head_end, float* scratch,
                               float* out) {
  AttentionRingHeadsT(q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads,
                      head_dim, scale, head_begin, head_end, scratch, out);
}

// See ops/attention.h (keys and values in binary16).
inline void AttentionRingHeadsF16(const float* q, const uint16_t* k_rows, const uint16_t* v_rows,
                                  size_t ring_rows, size_t first_row, size_t num_rows,
                                  size_t num_heads, size_t num_kv_heads, size_t head_dim,
                                  float scale, size_t head_begin, size_t head_end,
                                  float* scratch, float* out) {
  AttentionRingHeadsT(q, reinterpret_cast<const hwy::float16_t*>(k_rows),
                      reinterpret_cast<const hwy::float16_t*>(v_rows), ring_rows, first_row,
                      num_rows, num_heads, num_kv_heads, head_dim, scale, head_begin, head_end,
                      scratch, out);
}

// See ops/attention.h.
inline void AttentionRing(const float* q, const float* k_rows, const float* v_rows,
                          size_t ring_rows, size_t first_row, size_t num_rows,
                          size_t num_heads, size_t num_kv_heads, size_t head_dim,
                          float scale, float* scratch, float* out) {
  AttentionRingHeads(q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads,
                     head_dim, scale, 0, num_heads, scratch, out);
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
