// Per-target Linear, MatMul and GatherRow for any llama.cpp block format, by
// its format tag (ops/quant_block-inl.h, ops/kquant_block-inl.h): the bodies of
// the per-format translation units ops/kernels_*.cc (see ops/kernel_dispatch.h).
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_BLOCK_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_BLOCK_KERNELS_INL_H_
#undef CORTIQ_OPS_BLOCK_KERNELS_INL_H_
#else
#define CORTIQ_OPS_BLOCK_KERNELS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "hwy/highway.h"
#include "ops/gather-inl.h"
#include "ops/kquant_block-inl.h"
#include "ops/kx16_block-inl.h"
#include "ops/linear-inl.h"
#include "ops/linear_q4_0x16-inl.h"
#include "ops/linear_q8_0x16-inl.h"
#include "ops/linear_quant-inl.h"
#include "ops/linear_superblock-inl.h"
#include "ops/matmul-inl.h"
#include "ops/quant_block-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// ops/linear.h for Format's rows (Q4_0x16 / Q8_0x16: their own row kernels; Q4_Kx16 /
// Q5_Kx16: LinearKX16Rows on the decoded blocks; other 32-weight blocks: LinearQuantRows;
// super-blocks: LinearSuperBlockRows).
template <class Format>
HWY_INLINE void LinearBlockRows(Format tag, const void* w, const float* x,
                                float* y, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  if constexpr (std::is_same_v<Format, Q4_0x16Format>) {
    LinearQ4_0x16Rows(w, x, y, rows, cols, row_begin, row_end);
  } else if constexpr (std::is_same_v<Format, Q8_0x16Format>) {
    LinearQ8_0x16Rows(w, x, y, rows, cols, row_begin, row_end);
  } else if constexpr (std::is_same_v<Format, Q4_Kx16Format> ||
                       std::is_same_v<Format, Q5_Kx16Format>) {
    LinearKX16Rows(tag, w, x, y, rows, cols, row_begin, row_end);
  } else if constexpr (Format::kBlockWeights == kQuantBlockSize) {
    LinearQuantRows(tag, w, x, y, rows, cols, row_begin, row_end);
  } else {
    LinearSuperBlockRows(tag, w, x, y, rows, cols, row_begin, row_end);
  }
}

// ops/matmul.h for Format's rows.
template <class Format>
HWY_INLINE void MatMulBlockRows(Format /*tag*/, const void* w, const float* x,
                                size_t x_stride, float* y, size_t y_stride,
                                size_t batch, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  HWY_DASSERT(cols % Format::kBlockWeights == 0);
  MatMulRows(QuantWeights<Format>{static_cast<const uint8_t*>(w),
                                  cols / Format::kBlockWeights *
                                      Format::kBlockBytes},
             x, x_stride, y, y_stride, batch, rows, cols, row_begin, row_end);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_BLOCK_KERNELS_INL_H_
