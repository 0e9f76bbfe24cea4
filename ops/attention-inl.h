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

// Scores of M query heads against R key rows: out[r * M + m] = dot(k[r], q[m]) over n elements.
// Each dot keeps two accumulators (the even and odd vectors of each 2N-element step; a last whole
// vector into the first, the partial tail into the second) and reduces their sum, the same
// operations whatever M and R, so a (head, row) score has the same bits in any block of heads
// and rows (how threads split the heads or the rows). The M heads share each load of a key row,
// the R rows each load of a query head: with M = 4, R = 2, 12 loads per 16 multiply-adds.
template <size_t M, size_t R, class DF, typename KT>
HWY_INLINE void DotHeadsRows(DF df, const KT* const* k, const float* const* q, size_t n,
                             float* out) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  V s[R][M][2];
  for (size_t r = 0; r < R; ++r) {
    for (size_t m = 0; m < M; ++m) s[r][m][0] = s[r][m][1] = hn::Zero(df);
  }
  size_t i = 0;
  if (n >= 2 * N) {
    for (; i <= n - 2 * N; i += 2 * N) {
      V q0[M], q1[M];
      for (size_t m = 0; m < M; ++m) {
        q0[m] = hn::LoadU(df, q[m] + i);
        q1[m] = hn::LoadU(df, q[m] + i + N);
      }
      for (size_t r = 0; r < R; ++r) {
        const V k0 = LoadAsF32(df, k[r] + i), k1 = LoadAsF32(df, k[r] + i + N);
        for (size_t m = 0; m < M; ++m) {
          s[r][m][0] = hn::MulAdd(k0, q0[m], s[r][m][0]);
          s[r][m][1] = hn::MulAdd(k1, q1[m], s[r][m][1]);
        }
      }
    }
  }
  if (n - i >= N) {
    for (size_t r = 0; r < R; ++r) {
      const V k0 = LoadAsF32(df, k[r] + i);
      for (size_t m = 0; m < M; ++m) {
        s[r][m][0] = hn::MulAdd(k0, hn::LoadU(df, q[m] + i), s[r][m][0]);
      }
    }
    i += N;
  }
  if (i != n) {
    if (n >= N) {
      const auto counted = hn::FirstN(df, N - (n - i));
      for (size_t r = 0; r < R; ++r) {
        const V kt = hn::IfThenZeroElse(counted, LoadAsF32(df, k[r] + n - N));
        for (size_t m = 0; m < M; ++m) {
          s[r][m][1] = hn::MulAdd(kt, hn::IfThenZeroElse(counted, hn::LoadU(df, q[m] + n - N)),
                                  s[r][m][1]);
        }
      }
    } else {
      for (size_t r = 0; r < R; ++r) {
        const V kt = LoadAsF32Padded(df, k[r], n);
        for (size_t m = 0; m < M; ++m) {
          s[r][m][1] = hn::MulAdd(kt, LoadPadded(df, q[m], n), s[r][m][1]);
        }
      }
    }
  }
  for (size_t r = 0; r < R; ++r) {
    for (size_t m = 0; m < M; ++m) {
      out[r * M + m] = ReduceSum(df, hn::Add(s[r][m][0], s[r][m][1]));
    }
  }
}

// The scores of M heads (q[m], the key rows of one KV head from k_rows) against the rows i in
// [row_begin, row_end) given by `row`: scores[m * num_rows + i] = scale * dot, two rows at a
// time (DotHeadsRows: the same bits one row at a time).
template <size_t M, class DF, typename KT, class RowFn>
HWY_INLINE void ScoreRows(DF df, const float* const* q, const KT* k_rows, const RowFn& row,
                          size_t row_stride, size_t head_dim, float scale, size_t row_begin,
                          size_t row_end, size_t num_rows, float* scores) {
  size_t i = row_begin;
#if !HWY_HAVE_SCALABLE  // no arrays of sizeless vectors beyond one row
  for (; i + 2 <= row_end; i += 2) {
    const KT* k[2] = {k_rows + row(i) * row_stride, k_rows + row(i + 1) * row_stride};
    float dots[2 * M];
    DotHeadsRows<M, 2>(df, k, q, head_dim, dots);
    for (size_t m = 0; m < M; ++m) {
      scores[m * num_rows + i] = scale * dots[m];
      scores[m * num_rows + i + 1] = scale * dots[M + m];
    }
  }
#endif
  for (; i < row_end; ++i) {
    const KT* k[1] = {k_rows + row(i) * row_stride};
    float dots[M];
    DotHeadsRows<M, 1>(df, k, q, head_dim, dots);
    for (size_t m = 0; m < M; ++m) scores[m * num_rows + i] = scale * dots[m];
  }
}

// out[m][d] = sum_i a[m][i] * v_i[d] for M heads and d < n, summed over i in [row_begin, row_end)
// in order, each term one MulAdd (out = a * v + out from a zeroed row, or, with `resume`, from
// the out a call over the preceding rows left: a sum cut into consecutive row ranges is the same
// sum bit for bit, as the f32 accumulators pass through memory unchanged): columns are
// accumulated in registers, kColumns vectors at a time, and the M heads share each load of v.
template <size_t M, class DF, typename VT, class RowFn>
HWY_INLINE void WeightedSumHeads(DF df, const VT* HWY_RESTRICT v_rows, const RowFn& row,
                                 size_t row_stride, size_t row_begin, size_t row_end,
                                 bool resume, const float* const* a, float* const* out,
                                 size_t n) {
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
    for (size_t i = row_begin; i < row_end; ++i) {
      const VT* vr = v_rows + row(i) * row_stride + d;
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
  ScoreRows<M>(df, qh, k_rows + kv_offset, row, row_stride, head_dim, scale, 0, num_rows,
               num_rows, scratch);
  float inv_sum[M];
  for (size_t m = 0; m < M; ++m) {
    inv_sum[m] = 1.0f / ExpMinusMaxInPlace(df, scratch + m * num_rows, num_rows);
  }
  WeightedSumHeads<M>(df, v_rows + kv_offset, row, row_stride, 0, num_rows, false, a, oh,
                      head_dim);
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

// Rows per pass of the phases: the head blocks of a KV head read the same key (value) rows, so
// the phases go through the rows in chunks of ~128 KiB of one KV head's keys (values), which stay
// in L2 while every head block reads them, instead of streaming the whole cache from memory once
// per head block (E2B at 16k positions: two 32 MiB passes per layer).
inline size_t RowsPerChunk(size_t row_bytes) {
  const size_t rows = (size_t{128} << 10) / (row_bytes == 0 ? 1 : row_bytes);
  return rows < 16 ? 16 : rows;
}

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
      WithHeadBlock(m, [&](auto block) HWY_ATTR {
        ScoreRows<decltype(block)::value>(df, qh, k, row, row_stride, head_dim, scale, c0, c1,
                                          num_rows, sh);
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
      WithHeadBlock(m, [&](auto block) HWY_ATTR {
        WeightedSumHeads<decltype(block)::value>(df, v, row, row_stride, c0, c1, c0 != 0, a, oh,
                                                 n);
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
