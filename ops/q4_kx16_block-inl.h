// Per-target format tag and block decode of Q4_Kx16 weights
// (ops/quantize_q4_kx16.h), for the generic matrix-matrix product and row
// gather (ops/matmul-inl.h, ops/gather-inl.h): the prompt's kernels and the
// embedding lookup read a block as the two Q4_K super-blocks it was made
// from. The decode product is ops/linear_vnni.h's (LinearQ4_Kx16Vnni).
// Translation unit: ops/kernels_q4_kx16.cc.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_Q4_KX16_BLOCK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_Q4_KX16_BLOCK_INL_H_
#undef CORTIQ_OPS_Q4_KX16_BLOCK_INL_H_
#else
#define CORTIQ_OPS_Q4_KX16_BLOCK_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "ops/kquant_block-inl.h"
#include "ops/quantize_q4_kx16.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// Format tag of Q4_Kx16: 512-weight blocks of 296 bytes.
struct Q4_Kx16Format {
  static constexpr size_t kBlockWeights = kQ4_Kx16BlockWeights;
  static constexpr size_t kBlockBytes = kQ4_Kx16BlockBytes;
};

// out[0, 512) = the block's f32 weights in row order, exactly
// DequantizeRowQ4_Kx16's values: its two Q4_K super-blocks are reassembled
// (Q4_Kx16ToQ4_K) and decoded as Q4_K (DecodeBlock(Q4_KFormat)). Once per
// weight row and token panel in the prompt's product, where the decode is
// not the bottleneck. out needs no alignment.
HWY_INLINE void DecodeBlock(Q4_Kx16Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  uint8_t q4_k[kQ4_Kx16SuperBlocks * kQ4_KBlockBytes];
  Q4_Kx16ToQ4_K(block, kQ4_Kx16BlockWeights, q4_k);
  for (size_t h = 0; h < kQ4_Kx16SuperBlocks; ++h) {
    DecodeBlock(Q4_KFormat(), q4_k + h * kQ4_KBlockBytes, out + h * kSuperBlockSize);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_Q4_KX16_BLOCK_INL_H_
