// Single-query multi-head attention over a set of cached key/value rows (one
// decode step of one layer), with grouped-query (GQA) / multi-query (MQA) head
// sharing.

#ifndef CORTIQ_OPS_ATTENTION_H_
#define CORTIQ_OPS_ATTENTION_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {
namespace ops {

// A block of query heads a thread split keeps together. The kernels take up to 8 query heads
// of one KV head at a time, which share every load of a key and a value row (scores: 8 heads x 2
// key rows or 4 x 4, one accumulator each = 16 of AVX-512's 32 vector registers; weighted sums:
// 8 heads x 2 column vectors or 4 x 4). Each head is computed with the same operations in the
// same order whatever block it is in, so the results do not depend on the blocking or on a head
// range; blocks of 4 keep threads that split the heads on the 4-head kernels.
inline constexpr size_t kAttentionHeadBlock = 4;

// Rows of one softmax block: the visible rows are cut into blocks of this many (the last one
// shorter), each block's softmax taken against its own maximum and the blocks merged at the end
// (the "flash decoding" split: Dao et al., 2023; llama.cpp's and FlashAttention's online softmax
// is the same identity). Fixed, not a tuning knob: the block boundaries are part of the
// arithmetic, so every path (one thread or several, a batch row or a decode step) sums in the
// same order and gets the same bits. A window of at most this many rows is one block, computed
// exactly as a plain softmax (E2B's and E4B's 512-row sliding windows).
inline constexpr size_t kAttentionRowBlock = 512;

// Softmax blocks of `num_rows` visible rows.
inline constexpr size_t AttentionRowBlockCount(size_t num_rows) {
  return (num_rows + kAttentionRowBlock - 1) / kAttentionRowBlock;
}

// Floats of the per-block partial results of `num_rows` rows and `num_heads` heads: for block b
// and head h, at (b * num_heads + h) * (head_dim + 2): the block's maximum score m, the sum l of
// exp(s_i - m) over its rows and the head_dim weighted sums of exp(s_i - m) v_i.
inline constexpr size_t AttentionPartialFloats(size_t num_rows, size_t num_heads,
                                               size_t head_dim) {
  return AttentionRowBlockCount(num_rows) * num_heads * (head_dim + 2);
}

// Floats of the scores of `num_heads` heads over one softmax block of a `num_rows`-row window.
inline constexpr size_t AttentionBlockScoreFloats(size_t num_rows, size_t num_heads) {
  return num_heads * (num_rows < kAttentionRowBlock ? num_rows : kAttentionRowBlock);
}

// Floats of scratch AttentionRingHeads (and Attention, AttentionRing) needs for `num_rows` rows
// of `num_heads` heads of `head_dim`: one block's scores and every block's partial results (at
// least 1).
inline constexpr size_t AttentionScratchFloats(size_t num_rows, size_t num_heads,
                                               size_t head_dim) {
  const size_t floats = AttentionBlockScoreFloats(num_rows, num_heads) +
                        AttentionPartialFloats(num_rows, num_heads, head_dim);
  return floats > 0 ? floats : 1;
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
// Computed per softmax block B of kAttentionRowBlock rows (see there), in f32:
//
//     m_B = max_{i in B} s_i,  l_B = sum_{i in B} e_i,  P_B = sum_{i in B} e_i v_ij,
//     e_i = exp(s_i - m_B);    w_B = exp(m_B - max_B m_B)
//     out_h = (sum_B w_B P_B) / (sum_B w_B l_B)
//
// which is the formula above (w_B e_i = exp(s_i - max s)), with one more rounding per block.
// Terms more than e^-40 below their maximum (an element against its block's, a block against
// the largest) count as 0 (ops/attention-inl.h: kExpFlushBelow).
//
// Shapes (all f32, no alignment required):
// - q: [num_heads, head_dim].
// - k_rows: [num_rows, num_kv_heads * head_dim]; k_ij is at row i, offset
//   j * head_dim.
// - v_rows: same layout as k_rows.
// - scratch: at least AttentionScratchFloats(num_rows, num_heads, head_dim) floats;
//   overwritten.
// - out: [num_heads, head_dim].
//
// Requires num_kv_heads >= 1 and num_heads % num_kv_heads == 0. The caller
// passes exactly the visible rows (causal / sliding-window masking is done by
// choosing the rows); their order matters only to the rounding, so a ring buffer
// can be passed as is.
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
// num_kv_heads * head_dim] each). The softmax blocks and every sum run over the rows in that
// order (oldest position first for a sliding-window ring), so the batched prefill and
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

// AttentionRingHeads cut in two phases, for threads that share one query's rows instead of its
// heads (splitting the heads would make each thread stream the same key and value rows when a
// KV head serves several query heads: E2B's 8 query heads read one cache). Run in order, each
// phase's ranges covering its whole domain once (any split, any thread), they write `out` bit
// for bit as AttentionRing does:
//
// 1. AttentionBlocks: the partial results (AttentionPartialFloats) of the heads [head_begin,
//    head_end) over the softmax blocks [block_begin, block_end) (< AttentionRowBlockCount
//    (num_rows)): each thread reads whole key and value rows, once for all the heads.
// 2. AttentionMergeBlocks: out for the heads [head_begin, head_end) from every block's partials.
//
// Shapes as AttentionRing; scores: AttentionBlockScoreFloats(num_rows, head_end - head_begin)
// floats of the caller's (per thread) scratch, overwritten; partials:
// AttentionPartialFloats(num_rows, num_heads, head_dim) floats, shared (each call writes only
// its blocks' records of its heads). The F16 variant reads keys and values stored as binary16
// (KvType::kF16), as AttentionRingHeadsF16. Requires num_rows >= 1. Aliasing: scores, partials
// and out must not overlap each other or the inputs. Scalar reference: AttentionReference
// (tests/ops/attention_test.cc checks the two phases against AttentionRing bit for bit, for
// several splits).
void AttentionBlocks(const float* q, const float* k_rows, const float* v_rows, size_t ring_rows,
                     size_t first_row, size_t num_rows, size_t num_heads, size_t num_kv_heads,
                     size_t head_dim, float scale, size_t head_begin, size_t head_end,
                     size_t block_begin, size_t block_end, float* scores, float* partials);
void AttentionBlocksF16(const float* q, const uint16_t* k_rows, const uint16_t* v_rows,
                        size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                        size_t num_kv_heads, size_t head_dim, float scale, size_t head_begin,
                        size_t head_end, size_t block_begin, size_t block_end, float* scores,
                        float* partials);
void AttentionMergeBlocks(const float* partials, size_t num_rows, size_t num_heads,
                          size_t head_dim, size_t head_begin, size_t head_end, float* out);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_ATTENTION_H_
