// Single-query multi-head attention over a set of cached key/value rows (one
// decode step of one layer), with grouped-query (GQA) / multi-query (MQA) head
// sharing.

#ifndef CORTIQ_OPS_ATTENTION_H_
#define CORTIQ_OPS_ATTENTION_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {
namespace ops {

// Query heads of one KV head scored and summed together: they share every load of a key and a
// value row (scores: 4 heads x 4 key rows, one accumulator each = 16 of AVX-512's 32 vector
// registers; weighted sums: 4 heads x 4 column vectors). Each head is computed with the same
// operations in the same order whatever block it is in, so the results do not depend on the
// blocking or on a head range.
inline constexpr size_t kAttentionHeadBlock = 4;

// Floats of scratch the attention functions need for `num_rows` rows.
inline constexpr size_t AttentionScratchFloats(size_t num_rows) {
  return kAttentionHeadBlock * (num_rows > 0 ? num_rows : 1);
}

// For each query head h in [0, num_heads), with g = num_heads / num_kv_heads
// and kv head j = h / g (HF `repeat_kv`: kv head j serves q heads j*g .. j*g +
// g - 1):
//
//     s_i = scale * dot(q_h, k_ij)        for the rows i < num_rows
//     a = softmax(s) = exp(s - max s) / sum_i exp(s_i - max s)
//     out_h = sum_i a_i * v_ij
//
// Spec §3.3 step 4; Gemma 4 uses scale = 1.0 (no 1/sqrt(d), no logit softcap).
//
// Shapes (all f32, no alignment required):
// - q: [num_heads, head_dim].
// - k_rows: [num_rows, num_kv_heads * head_dim]; k_ij is at row i, offset
//   j * head_dim.
// - v_rows: same layout as k_rows.
// - scratch: at least AttentionScratchFloats(num_rows) floats; overwritten.
// - out: [num_heads, head_dim].
//
// Requires num_kv_heads >= 1 and num_heads % num_kv_heads == 0. The caller
// passes exactly the visible rows (causal / sliding-window masking is done by
// choosing the rows); their order does not matter (softmax and the weighted sum
// are order-independent up to rounding), so a ring buffer can be passed as is.
// num_rows == 0 writes out = 0.
// Aliasing: out and scratch must not overlap each other or the inputs.
// Precision: scores are f32 dot products (error <= ~(head_dim / (4 lanes) + 8)
// * 2^-24 * sum_d |q_d k_d|), exp via Highway's Exp (1 ulp), sums in f32;
// compare with AttentionReference (double).
void Attention(const float* q, const float* k_rows, const float* v_rows,
               size_t num_rows, size_t num_heads, size_t num_kv_heads,
               size_t head_dim, float scale, float* scratch, float* out);

// As Attention over `num_rows` rows of a ring of `ring_rows` storage rows: row i (i <
// num_rows) is storage row (first_row + i) mod ring_rows of k_rows / v_rows ([ring_rows,
// num_kv_heads * head_dim] each). Scores, softmax and the weighted sum run over the rows in
// that order (oldest position first for a sliding-window ring), so the batched prefill and
// token-by-token decode sum in the same order. Requires num_rows <= ring_rows and, when
// num_rows > 0, first_row < ring_rows. Attention(...) is AttentionRing with first_row 0 and
// ring_rows = num_rows. Scalar reference: AttentionReference on the rows in this order.
void AttentionRing(const float* q, const float* k_rows, const float* v_rows,
                   size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                   size_t num_kv_heads, size_t head_dim, float scale, float* scratch,
                   float* out);

// As AttentionRing for the query heads [head_begin, head_end) only (head_begin <= head_end <=
// num_heads): writes only their rows of `out`, bit-identical to AttentionRing's, so threads can
// split the heads of one query (each with its own scratch).
void AttentionRingHeads(const float* q, const float* k_rows, const float* v_rows,
                        size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                        size_t num_kv_heads, size_t head_dim, float scale, size_t head_begin,
                        size_t head_end, float* scratch, float* out);

// As AttentionRingHeads with the keys and values stored as IEEE binary16 (uint16_t bits, the
// KV cache's KvType::kF16), widened exactly to f32 in registers: the same result as
// AttentionRingHeads over the widened rows, bit for bit.
void AttentionRingHeadsF16(const float* q, const uint16_t* k_rows, const uint16_t* v_rows,
                           size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                           size_t num_kv_heads, size_t head_dim, float scale, size_t head_begin,
                           size_t head_end, float* scratch, float* out);

// AttentionRingHeads over all heads of one query, cut into three phases that threads can share
// when splitting the heads would make each thread stream the same key and value rows (one KV
// head for several query heads: E2B's 8 query heads read one cache). Run in order, each phase's
// ranges covering its whole domain once (any split, any thread), they write `out` bit for bit
// as AttentionRing does:
//
// 1. AttentionScores: scores[h * num_rows + i] = scale * dot(q_h, k_i) for every head h and
//    the rows i in [row_begin, row_end) of the ring view (row i as in AttentionRing).
// 2. AttentionSoftmax: for the heads in [head_begin, head_end), scores row h replaced by
//    exp(s - max s) and inv_sum[h] = 1 / its sum.
// 3. AttentionWeightedSum: out[h][d] = (sum_i a_hi v_i[d]) * inv_sum[h] for every head and the
//    columns d in [col_begin, col_end) (each column summed over the rows in order).
//
// Shapes as AttentionRing; scores: [num_heads, num_rows] floats (num_rows >= 1); inv_sum:
// [num_heads]. The F16 variants read keys / values stored as binary16 (KvType::kF16), as
// AttentionRingHeadsF16. Aliasing: scores, inv_sum and out must not overlap each other or the
// inputs. Scalar reference: AttentionReference (tests/ops/attention_test.cc checks the three
// phases against AttentionRing bit for bit, for several splits).
void AttentionScores(const float* q, const float* k_rows, size_t ring_rows, size_t first_row,
                     size_t num_rows, size_t row_begin, size_t row_end, size_t num_heads,
                     size_t num_kv_heads, size_t head_dim, float scale, float* scores);
void AttentionScoresF16(const float* q, const uint16_t* k_rows, size_t ring_rows,
                        size_t first_row, size_t num_rows, size_t row_begin, size_t row_end,
                        size_t num_heads, size_t num_kv_heads, size_t head_dim, float scale,
                        float* scores);
void AttentionSoftmax(float* scores, size_t num_rows, size_t head_begin, size_t head_end,
                      float* inv_sum);
void AttentionWeightedSum(const float* v_rows, size_t ring_rows, size_t first_row,
                          size_t num_rows, size_t num_heads, size_t num_kv_heads,
                          size_t head_dim, const float* scores, const float* inv_sum,
                          size_t col_begin, size_t col_end, float* out);
void AttentionWeightedSumF16(const uint16_t* v_rows, size_t ring_rows, size_t first_row,
                             size_t num_rows, size_t num_heads, size_t num_kv_heads,
                             size_t head_dim, const float* scores, const float* inv_sum,
                             size_t col_begin, size_t col_end, float* out);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_ATTENTION_H_
