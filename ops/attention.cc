// Attention (ops/attention.h): per-target compilation of ops/attention-inl.h
// and its dispatch.

#include "ops/attention.h"

#include <stddef.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/attention-inl.h"

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(Attention);
HWY_EXPORT(AttentionRing);
HWY_EXPORT(AttentionRingHeads);
HWY_EXPORT(AttentionRingHeadsF16);
HWY_EXPORT(AttentionBlocks);
HWY_EXPORT(AttentionBlocksF16);
HWY_EXPORT(AttentionMergeBlocks);

void Attention(const float* q, const float* k_rows, const float* v_rows,
               size_t num_rows, size_t num_heads, size_t num_kv_heads,
               size_t head_dim, float scale, float* scratch, float* out) {
  HWY_DYNAMIC_DISPATCH(Attention)
  (q, k_rows, v_rows, num_rows, num_heads, num_kv_heads, head_dim, scale,
   scratch, out);
}

void AttentionRing(const float* q, const float* k_rows, const float* v_rows,
                   size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                   size_t num_kv_heads, size_t head_dim, float scale, float* scratch,
                   float* out) {
  HWY_DYNAMIC_DISPATCH(AttentionRing)
  (q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads, head_dim,
   scale, scratch, out);
}

void AttentionRingHeads(const float* q, const float* k_rows, const float* v_rows,
                        size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                        size_t num_kv_heads, size_t head_dim, float scale, size_t head_begin,
                        size_t head_end, float* scratch, float* out) {
  HWY_DYNAMIC_DISPATCH(AttentionRingHeads)
  (q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads, head_dim, scale,
   head_begin, head_end, scratch, out);
}

void AttentionRingHeadsF16(const float* q, const uint16_t* k_rows, const uint16_t* v_rows,
                           size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                           size_t num_kv_heads, size_t head_dim, float scale, size_t head_begin,
                           size_t head_end, float* scratch, float* out) {
  HWY_DYNAMIC_DISPATCH(AttentionRingHeadsF16)
  (q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads, head_dim, scale,
   head_begin, head_end, scratch, out);
}

void AttentionBlocks(const float* q, const float* k_rows, const float* v_rows, size_t ring_rows,
                     size_t first_row, size_t num_rows, size_t num_heads, size_t num_kv_heads,
                     size_t head_dim, float scale, size_t head_begin, size_t head_end,
                     size_t block_begin, size_t block_end, float* scores, float* partials) {
  HWY_DYNAMIC_DISPATCH(AttentionBlocks)
  (q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads, head_dim, scale,
   head_begin, head_end, block_begin, block_end, scores, partials);
}

void AttentionBlocksF16(const float* q, const uint16_t* k_rows, const uint16_t* v_rows,
                        size_t ring_rows, size_t first_row, size_t num_rows, size_t num_heads,
                        size_t num_kv_heads, size_t head_dim, float scale, size_t head_begin,
                        size_t head_end, size_t block_begin, size_t block_end, float* scores,
                        float* partials) {
  HWY_DYNAMIC_DISPATCH(AttentionBlocksF16)
  (q, k_rows, v_rows, ring_rows, first_row, num_rows, num_heads, num_kv_heads, head_dim, scale,
   head_begin, head_end, block_begin, block_end, scores, partials);
}

void AttentionMergeBlocks(const float* partials, size_t num_rows, size_t num_heads,
                          size_t head_dim, size_t head_begin, size_t head_end, float* out) {
  HWY_DYNAMIC_DISPATCH(AttentionMergeBlocks)
  (partials, num_rows, num_heads, head_dim, head_begin, head_end, out);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
