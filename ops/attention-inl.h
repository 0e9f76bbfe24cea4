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
// kExpFlushBelow, stores max_k s_k in *max_out and returns the f32 sum of the new
// values (>= 1, since the maximum maps to exp(0) = 1). Normalization is left to
// the caller.
template <class DF>
HWY_INLINE float ExpMinusMaxInPlace(DF df, float* s, size_t n, float* max_out) {
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
  *max_out = max;
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
// loads per 16 multiply-adds (M = 8, R = 2: 10, with half the key widenings), which keeps
// AVX-512's two FMA pipes busy where 4 x 2 rows with two
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

// Key rows per DotHeadsRows call of ScoreRows for a block of M heads (the rest one at a time):
// M x R <= 16 accumulators, half of AVX-512's registers, the rest for the M + R loads.
template <size_t M>
inline constexpr size_t kScoreRowBlock = M >= 8 ? 2 : 4;

// The row a pass of one softmax block prefetches `a` rows into its block (a chunk ahead of the
// row it reads): its own row a while a < n (the block's rows), then a row of the pass that
// follows, so the stream of prefetches runs on without a gap: the keys pass goes on to the same
// block's values (row a - n), the values pass to the next block's keys (row a of the view, up
// to next_end, the end of the thread's share). Past the end: the last row again (cached, and a
// valid address).
template <typename KT, class RowFn>
struct AheadRows {
  const KT* own;
  const KT* next;
  RowFn row;
  size_t row_stride, n, next_shift, next_end;
  const KT* operator()(size_t a) const {
    HWY_DASSERT(next_shift <= n && next_end >= 1);
    if (a < n) return own + row(a) * row_stride;
    const size_t j = a - next_shift;
    return next + row(j < next_end ? j : next_end - 1) * row_stride;
  }
};

// ScoreRows for one (kPrefetch, kTail): see ScoreRows.
template <size_t M, bool kPrefetch, bool kTail, class DF, typename KT, class RowFn, class Ahead>
HWY_INLINE void ScoreRowsT(DF df, const float* const* q, const KT* k_rows, const RowFn& row,
                           size_t row_stride, size_t head_dim, float scale, size_t row_begin,
                           size_t row_end, size_t num_rows, size_t prefetch_rows,
                           const Ahead& ahead, float* scores) {
  constexpr size_t R = kScoreRowBlock<M>;
  size_t i = row_begin;
#if !HWY_HAVE_SCALABLE  // no arrays of sizeless vectors beyond one row
  for (; i + R <= row_end; i += R) {
    const KT* k[R];
    const KT* pf[R] = {};
    for (size_t r = 0; r < R; ++r) {
      k[r] = k_rows + row(i + r) * row_stride;
      if constexpr (kPrefetch) pf[r] = ahead(i + r + prefetch_rows);
    }
    float dots[R * M];
    DotHeadsRows<M, R, kPrefetch, kTail>(df, k, q, head_dim, pf, dots);
    for (size_t m = 0; m < M; ++m) {
      for (size_t r = 0; r < R; ++r) scores[m * num_rows + i + r] = scale * dots[r * M + m];
    }
  }
#else
  (void)prefetch_rows;
  (void)ahead;
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
// [row_begin, row_end) given by `row`: scores[m * num_rows + i] = scale * dot, kScoreRowBlock<M>
// rows at a time (DotHeadsRows: the same bits one row at a time). With prefetch_rows > 0, the
// rows ahead(i + prefetch_rows) (AheadRows) are prefetched along the way.
template <size_t M, class DF, typename KT, class RowFn, class Ahead>
HWY_INLINE void ScoreRows(DF df, const float* const* q, const KT* k_rows, const RowFn& row,
                          size_t row_stride, size_t head_dim, float scale, size_t row_begin,
                          size_t row_end, size_t num_rows, size_t prefetch_rows,
                          const Ahead& ahead, float* scores) {
  const bool tail = head_dim % hn::Lanes(df) != 0;
  if (prefetch_rows != 0 && !tail) {
    ScoreRowsT<M, true, false>(df, q, k_rows, row, row_stride, head_dim, scale, row_begin,
                               row_end, num_rows, prefetch_rows, ahead, scores);
  } else if (!tail) {
    ScoreRowsT<M, false, false>(df, q, k_rows, row, row_stride, head_dim, scale, row_begin,
                                row_end, num_rows, 0, ahead, scores);
  } else {
    // A head_dim that is not a whole number of vectors: correct, without the prefetch.
    ScoreRowsT<M, false, true>(df, q, k_rows, row, row_stride, head_dim, scale, row_begin,
                               row_end, num_rows, 0, ahead, scores);
  }
}

// out[m][d] = sum_i a[m][i] * v_i[d] for M heads and d < n, summed over i in [row_begin, row_end)
// in order, each term one MulAdd (out = a * v + out from a zeroed row, or, with `resume`, from
// the out a call over the preceding rows left: a sum cut into consecutive row ranges is the same
// sum bit for bit, as the f32 accumulators pass through memory unchanged): columns are
// accumulated in registers, kColumns vectors at a time, and the M heads share each load of v.
//
// With prefetch_rows > 0, each column block prefetches its lines of row ahead(i + prefetch_rows)
// (AheadRows) as it reads row i: a block reads one or two lines of each row, a stride the
// hardware prefetchers follow poorly (E2B's 1 KiB f16 rows from DRAM: ~11 GB/s without, one
// thread; ~20 with).
template <size_t M, class DF, typename VT, class RowFn, class Ahead>
HWY_INLINE void WeightedSumHeads(DF df, const VT* HWY_RESTRICT v_rows, const RowFn& row,
                                 size_t row_stride, size_t row_begin, size_t row_end,
                                 bool resume, const float* const* a, float* const* out,
                                 size_t n, size_t prefetch_rows, const Ahead& ahead) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  // M * kColumns accumulators: 16 of AVX-512's 32 registers for M = 4 or 8.
  constexpr size_t kColumns = M >= 8 ? 2 : 4;
  size_t d = 0;
  for (; d + kColumns * N <= n; d += kColumns * N) {
    V acc[M][kColumns];
    for (size_t m = 0; m < M; ++m) {
      for (size_t c = 0; c < kColumns; ++c) {
        acc[m][c] = resume ? hn::LoadU(df, out[m] + d + c * N) : hn::Zero(df);
      }
    }
    for (size_t i = row_begin; i < row_end; ++i) {
      const VT* vr = v_rows + row(i) * row_stride + d;
      if (prefetch_rows != 0) {
        PrefetchBytes(ahead(i + prefetch_rows) + d, kColumns * N * sizeof(VT));
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

// The most query heads one kernel call takes.
inline constexpr size_t kMaxHeadBlock = 8;

// The number of heads of one KV head (group heads each) that the block starting at head h <
// head_end takes: 8, 4, 2 or 1 on AVX-512 (32 vector registers), at most 4 on other fixed-width
// targets; always 1 on scalable targets, which allow no arrays of sizeless vectors. With 8 (E2B:
// one KV head for 8 query heads) every key and value row is read and widened once per block of
// rows for all the heads, in one pass: with two blocks of 4 the second
// pass found the rows in L2 but the first had to fetch them at twice the rate (E2B's shape at
// 16k positions, f16, from DRAM on a Zen 4 VM: 6.2 -> 4.5 ms on one thread, 3.0 -> 2.1 ms on
// two sharing the blocks).
inline size_t HeadBlockAt(size_t h, size_t head_end, size_t group) {
  static_assert(kAttentionHeadBlock == 4 && kMaxHeadBlock == 8, "blocks of 8, 4, 2 and 1 heads");
  const size_t kv_end = (h / group + 1) * group;
  const size_t left = (head_end < kv_end ? head_end : kv_end) - h;
#if HWY_HAVE_SCALABLE
  (void)left;
  return 1;
#elif HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
#else
  // 16 vector registers (AVX2, SSE4): 8 heads' 16 accumulators and their loads would spill.
  return left >= 4 ? 4 : left >= 2 ? 2 : 1;
#endif
}

// Calls f(std::integral_constant<size_t, M>()) for a block of m = HeadBlockAt(...) heads, so the
// kernels templated on M are instantiated for 8, 4, 2 and 1 (1 only on scalable targets).
template <class F>
HWY_INLINE void WithHeadBlock(size_t m, const F& f) {
#if HWY_HAVE_SCALABLE
  (void)m;
  f(std::integral_constant<size_t, 1>());
#else
  if (m == 8) {
    f(std::integral_constant<size_t, 8>());
  } else if (m == 4) {
    f(std::integral_constant<size_t, 4>());
  } else if (m == 2) {
    f(std::integral_constant<size_t, 2>());
  } else {
    f(std::integral_constant<size_t, 1>());
  }
#endif
}

// Rows per chunk of a softmax block: the head blocks of a KV head read the same key (value)
// rows, so a block's scores and weighted sums go through its rows in chunks of ~128 KiB of one
// KV head's keys (values), which stay in L2 while every head block reads them, instead of
// streaming the rows from memory once per head block (E2B at 16k positions, one thread: two
// 32 MiB passes per layer, 11.9 ms against 7.3 from DRAM on a Zen 4 VM).
inline size_t RowsPerChunk(size_t row_bytes) {
  const size_t rows = (size_t{128} << 10) / (row_bytes == 0 ? 1 : row_bytes);
  return rows < 16 ? 16 : rows;
}

// View row i of one softmax block: row(base + i) of the whole view.
template <class RowFn>
struct BlockRows {
  RowFn row;
  size_t base;
  size_t operator()(size_t i) const { return row(base + i); }
};

// Calls f(c0, c1, h, m, lead) for the chunks [c0, c1) of RowsPerChunk rows of a block of n rows
// and, in each chunk, for the blocks of m heads (HeadBlockAt) starting at h in [head_begin,
// head_end): lead is `chunk` for the first block of each KV head (it reads the chunk from memory
// and prefetches the rows a chunk ahead, AheadRows), 0 for the others (they find the chunk in
// L2; with 8 heads per block, E2B's one KV head has no others).
template <class F>
HWY_INLINE void ForChunksAndHeadBlocks(size_t n, size_t chunk, size_t head_begin,
                                       size_t head_end, size_t group, const F& f) {
  for (size_t c0 = 0; c0 < n; c0 += chunk) {
    const size_t c1 = n - c0 < chunk ? n : c0 + chunk;
    for (size_t h = head_begin; h < head_end;) {
      const size_t m = HeadBlockAt(h, head_end, group);
      f(c0, c1, h, m, h == head_begin || h % group == 0 ? chunk : 0);
      h += m;
    }
  }
}

// The partial results (ops/attention.h, AttentionPartialFloats) of the heads [head_begin,
// head_end) over the softmax blocks [block_begin, block_end) of the view given by `row`. Per
// block: the scores of every head in the range, in chunks of RowsPerChunk rows (the chunk's
// key rows stay in L2 while each head block reads them); each head's exps against the block's
// maximum; then the weighted sums, in the same chunks. The first head block of each KV head
// prefetches the rows a chunk ahead in the order they are read (AheadRows: past the block's
// keys, its values; past its values, the next block's keys, to the end of the thread's share).
// `scores`: AttentionBlockScoreFloats(num_rows, head_end - head_begin) floats.
template <typename KT, class RowFn>
HWY_INLINE void BlockPartials(const float* q, const KT* k_rows, const KT* v_rows,
                              const RowFn& row, size_t num_rows, size_t num_heads,
                              size_t num_kv_heads, size_t head_dim, float scale,
                              size_t head_begin, size_t head_end, size_t block_begin,
                              size_t block_end, float* scores, float* partials) {
  const hn::ScalableTag<float> df;
  const size_t group = num_heads / num_kv_heads;
  const size_t row_stride = num_kv_heads * head_dim;
  const size_t record = head_dim + 2;
  const size_t stride = num_rows < kAttentionRowBlock ? num_rows : kAttentionRowBlock;
  const size_t chunk = RowsPerChunk(head_dim * sizeof(KT));
  const size_t range_end =
      block_end * kAttentionRowBlock < num_rows ? block_end * kAttentionRowBlock : num_rows;
  for (size_t b = block_begin; b < block_end; ++b) {
    const size_t r0 = b * kAttentionRowBlock;
    const size_t n = num_rows - r0 < kAttentionRowBlock ? num_rows - r0 : kAttentionRowBlock;
    const BlockRows<RowFn> local{row, r0};
    const size_t prefetch_end = range_end - r0;
    // Scores.
    ForChunksAndHeadBlocks(
        n, chunk, head_begin, head_end, group,
        [&](size_t c0, size_t c1, size_t h, size_t m, size_t lead) HWY_ATTR {
      const KT* k = k_rows + (h / group) * head_dim;
      const KT* v = v_rows + (h / group) * head_dim;
      const AheadRows<KT, BlockRows<RowFn>> ahead{k, v, local, row_stride, n, n, n};
      const float* qh[kMaxHeadBlock];
      for (size_t j = 0; j < kMaxHeadBlock; ++j) qh[j] = q + (h + (j < m ? j : 0)) * head_dim;
      float* sh = scores + (h - head_begin) * stride;
      WithHeadBlock(m, [&](auto block) HWY_ATTR {
        ScoreRows<decltype(block)::value>(df, qh, k, local, row_stride, head_dim, scale, c0, c1,
                                          stride, lead, ahead, sh);
      });
    });
    // Each head's exps against the block's maximum: record = {m, l, sums...}.
    for (size_t h = head_begin; h < head_end; ++h) {
      float* rec = partials + (b * num_heads + h) * record;
      rec[1] = ExpMinusMaxInPlace(df, scores + (h - head_begin) * stride, n, &rec[0]);
    }
    // Weighted sums into the records.
    ForChunksAndHeadBlocks(
        n, chunk, head_begin, head_end, group,
        [&](size_t c0, size_t c1, size_t h, size_t m, size_t lead) HWY_ATTR {
      const KT* k = k_rows + (h / group) * head_dim;
      const KT* v = v_rows + (h / group) * head_dim;
      const AheadRows<KT, BlockRows<RowFn>> ahead{v, k, local, row_stride, n, 0, prefetch_end};
      const float* a[kMaxHeadBlock];
      float* oh[kMaxHeadBlock];
      for (size_t j = 0; j < kMaxHeadBlock; ++j) {
        const size_t hj = h + (j < m ? j : 0);
        a[j] = scores + (hj - head_begin) * stride;
        oh[j] = partials + (b * num_heads + hj) * record + 2;
      }
      WithHeadBlock(m, [&](auto block) HWY_ATTR {
        WeightedSumHeads<decltype(block)::value>(df, v, local, row_stride, c0, c1, c0 != 0, a, oh,
                                                 head_dim, lead, ahead);
      });
    });
  }
}

// out for the heads [head_begin, head_end) from the partials of every block of a view of
// num_rows >= 1 rows (ops/attention.h): out = (sum_B w_B P_B) / (sum_B w_B l_B), the blocks in
// order, the first term a product (w = 1 exactly for the block that holds the maximum, so one
// block gives P / l with the bits of a plain softmax).
inline void MergeBlockPartials(const float* partials, size_t num_rows, size_t num_heads,
                               size_t head_dim, size_t head_begin, size_t head_end,
                               float* out) {
  const hn::ScalableTag<float> df;
  const size_t record = head_dim + 2;
  const size_t blocks = AttentionRowBlockCount(num_rows);
  for (size_t h = head_begin; h < head_end; ++h) {
    const auto rec = [&](size_t b) { return partials + (b * num_heads + h) * record; };
    float max = rec(0)[0];
    for (size_t b = 1; b < blocks; ++b) max = rec(b)[0] > max ? rec(b)[0] : max;
    float* oh = out + h * head_dim;
    float sum = 0.0f;
    for (size_t b = 0; b < blocks; ++b) {
      const float d = rec(b)[0] - max;
      // exp(d), 1 for the maximum's block, 0 below the flush threshold (as ExpMinusMaxInPlace).
      const float w = d == 0.0f            ? 1.0f
                      : d < kExpFlushBelow ? 0.0f
                                           : hn::GetLane(hn::Exp(df, hn::Set(df, d)));
      const auto vw = hn::Set(df, w);
      const float* p = rec(b) + 2;
      if (b == 0) {
        sum = w * rec(b)[1];
        TransformUnary(df, p, oh, head_dim, [vw](auto, auto pv) HWY_ATTR {
          return hn::Mul(vw, pv);
        });
      } else {
        sum = sum + w * rec(b)[1];
        TransformBinary(df, oh, p, oh, head_dim, [vw](auto, auto acc, auto pv) HWY_ATTR {
          return hn::MulAdd(vw, pv, acc);
        });
      }
    }
    const auto vinv = hn::Set(df, 1.0f / sum);
    TransformUnary(df, oh, oh, head_dim, [vinv](auto d, auto v) HWY_ATTR {
      (void)d;
      return hn::Mul(v, vinv);
    });
  }
}

// See ops/attention.h (AttentionBlocks, AttentionBlocksF16, AttentionMergeBlocks).
template <typename KT>
HWY_INLINE void AttentionBlocksT(const float* q, const KT* k_rows, const KT* v_rows,
                                 size_t ring_rows, size_t first_row, size_t num_rows,
                                 size_t num_heads, size_t num_kv_heads, size_t head_dim,
                                 float scale, size_t head_begin, size_t head_end,
                                 size_t block_begin, size_t block_end, float* scores,
                                 float* partials) {
  HWY_DASSERT(num_kv_heads >= 1 && num_heads % num_kv_heads == 0);
  HWY_DASSERT(num_rows >= 1 && num_rows <= ring_rows && first_row < ring_rows);
  HWY_DASSERT(block_end <= AttentionRowBlockCount(num_rows));
  BlockPartials(q, k_rows, v_rows, MakeRingRows(ring_rows, first_row, num_rows), num_rows,
                num_heads, num_kv_heads, head_dim, scale, head_begin, head_end, block_begin,
                block_end, scores, partials);
}

inline void AttentionBlocks(const float* q, const float* k_rows, const float* v_rows,
                            size_t ring_rows, size_t first_row, size_t num_rows,
                            size_t num_heads, size_t num_kv_heads, size_t head_dim, float scale,
                            size_t head_begin, size_t head_end, size_t block_begin,
                            size_t block_end, float* scores, float* partials) {
  AttentionBlocksT(q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads,
                   head_dim, scale, head_begin, head_end, block_begin, block_end, scores,
                   partials);
}

inline void AttentionBlocksF16(const float* q, const uint16_t* k_rows, const uint16_t* v_rows,
                               size_t ring_rows, size_t first_row, size_t num_rows,
                               size_t num_heads, size_t num_kv_heads, size_t head_dim,
                               float scale, size_t head_begin, size_t head_end,
                               size_t block_begin, size_t block_end, float* scores,
                               float* partials) {
  AttentionBlocksT(q, reinterpret_cast<const hwy::float16_t*>(k_rows),
                   reinterpret_cast<const hwy::float16_t*>(v_rows), ring_rows, first_row,
                   num_rows, num_heads, num_kv_heads, head_dim, scale, head_begin, head_end,
                   block_begin, block_end, scores, partials);
}

inline void AttentionMergeBlocks(const float* partials, size_t num_rows, size_t num_heads,
                                 size_t head_dim, size_t head_begin, size_t head_end,
                                 float* out) {
  HWY_DASSERT(num_rows >= 1);
  MergeBlockPartials(partials, num_rows, num_heads, head_dim, head_begin, head_end, out);
}

// See ops/attention.h (AttentionRingHeads; AttentionRing is all heads, Attention the ring that
// starts at row 0): both phases on one thread, the scores and partials in scratch.
template <typename KT>
HWY_INLINE void AttentionRingHeadsT(const float* q, const KT* k_rows, const KT* v_rows,
                                    size_t ring_rows, size_t first_row, size_t num_rows,
                                    size_t num_heads, size_t num_kv_heads, size_t head_dim,
                                    float scale, size_t head_begin, size_t head_end,
                                    float* scratch, float* out) {
  HWY_DASSERT(num_kv_heads >= 1 && num_heads % num_kv_heads == 0);
  HWY_DASSERT(num_rows <= ring_rows && (num_rows == 0 || first_row < ring_rows));
  HWY_DASSERT(head_begin <= head_end && head_end <= num_heads);
  if (num_rows == 0) {
    if (head_end > head_begin) {
      memset(out + head_begin * head_dim, 0, (head_end - head_begin) * head_dim * sizeof(float));
    }
    return;
  }
  float* partials = scratch + AttentionBlockScoreFloats(num_rows, num_heads);
  AttentionBlocksT(q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads,
                   head_dim, scale, head_begin, head_end, 0, AttentionRowBlockCount(num_rows),
                   scratch, partials);
  MergeBlockPartials(partials, num_rows, num_heads, head_dim, head_begin, head_end, out);
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
