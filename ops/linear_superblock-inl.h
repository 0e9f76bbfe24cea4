// Per-target matrix-vector product over rows of 256-weight super-blocks
// (LinearSuperBlockRows<Format>: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS),
// decoding each super-block in registers (ops/kquant_block-inl.h). Shared by
// the per-format translation units ops/kernels_*.cc. Public API: ops/linear.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_LINEAR_SUPERBLOCK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_LINEAR_SUPERBLOCK_INL_H_
#undef CORTIQ_OPS_LINEAR_SUPERBLOCK_INL_H_
#else
#define CORTIQ_OPS_LINEAR_SUPERBLOCK_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "hwy/base.h"
#include "hwy/highway.h"
#include "ops/block_sums-inl.h"
#include "ops/dot-inl.h"  // PrefetchAt
#include "ops/kquant_block-inl.h"
#include "ops/kquant_dot_avx3-inl.h"
#include "ops/linear_quant-inl.h"  // QuantPrefetchDistance
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The precomputed activation sums Format's SuperBlockDot reads (16 floats per
// super-block; see SumLayout), once per call.
template <class Format>
HWY_INLINE void ComputeSuperBlockSums(const float* x, size_t num_blocks,
                                      BlockSums& sums) {
  if constexpr (Format::kSums == SumLayout::kSums16) {
    sums.Compute(x, num_blocks * 16, 16, Format::kSumFactor);
  } else if constexpr (Format::kSums == SumLayout::kSumsUpper32) {
    sums.ComputeUpper32(x, num_blocks, Format::kSumFactor);
  }
}

// Rows [0, kRows) of y = W x for the kRows consecutive weight rows starting at
// w0 (row_bytes apart): y[i] for i < kRows. Per row, the same operations in the
// same order whatever kRows is. Super-block b of each row adds
// SuperBlockDot(block, x + 256 b, sums + 16 b) to the row's accumulators (on
// AVX3: every row's SuperBlockScales, then each row's SuperBlockDotScaled); every
// 64-byte line of the rows is software-prefetched `distance` bytes ahead,
// wrapping past the end of a row to the same row of the next pass (`next`
// bytes on), as LinearQuantPass does.
template <size_t kRows, class Format, class DF>
HWY_INLINE void LinearSuperBlockPass(Format tag, DF df, const uint8_t* w0,
                                     size_t row_bytes, size_t num_blocks,
                                     const float* HWY_RESTRICT x,
                                     const float* HWY_RESTRICT sums,
                                     size_t distance, size_t next,
                                     float* HWY_RESTRICT y) {
  using V = hn::VFromD<DF>;
  constexpr size_t kBytes = Format::kBlockBytes;
  const uint8_t* rows[kRows];
  V acc[kRows], acc1[kRows];  // two accumulators per row (two FMA chains)
  for (size_t i = 0; i < kRows; ++i) {
    rows[i] = w0 + i * row_bytes;
    acc[i] = hn::Zero(df);
    acc1[i] = hn::Zero(df);
  }
  const size_t wrap = next - row_bytes;
  size_t off = 0;
  for (size_t b = 0; b < num_blocks; ++b, off += kBytes) {
    // The lines of bytes [off + distance, off + distance + kBytes), each line
    // once: the first at or after that start, then every 64 bytes.
    for (size_t p = 0; p < kBytes; p += 64) {
      const size_t pos = off + distance + p;
      const size_t ahead = pos < row_bytes ? pos : pos + wrap;
      for (size_t i = 0; i < kRows; ++i) PrefetchAt(rows[i], ahead);
    }
    const float* xb = x + b * kSuperBlockSize;
#if CORTIQ_KQUANT_TABLE_DOT
    (void)sums;
    HWY_ALIGN float sm[kRows][kScaleFloats];
    for (size_t i = 0; i < kRows; ++i) SuperBlockScales(tag, rows[i] + off, sm[i]);
    avx3::ReloadScales();
    for (size_t i = 0; i < kRows; ++i) {
      SuperBlockDotScaled(tag, rows[i] + off, xb, sm[i], acc[i].raw, acc1[i].raw);
    }
#else
    const float* sb = sums == nullptr ? nullptr : sums + 16 * b;
    for (size_t i = 0; i < kRows; ++i) {
      SuperBlockDot(tag, df, rows[i] + off, xb, sb, acc[i], acc1[i]);
    }
#endif
  }
  for (size_t i = 0; i < kRows; ++i) y[i] = ReduceSum(df, hn::Add(acc[i], acc1[i]));
}

// y[r] = sum_c w_rc * x[c] for r in [row_begin, row_end), w in Format's
// super-blocks (row r starts at byte r * cols / 256 * Format::kBlockBytes of
// w). Contract and precision: ops/linear.h (LinearQ4_K and the formats after
// it). Rows go kQuantRowsPerPass at a time, the leftover rows one at a time,
// every row through the same per-row code, so y[r] does not depend on
// row_begin / row_end.
template <class Format>
HWY_INLINE void LinearSuperBlockRows(Format tag, const void* HWY_RESTRICT w,
                                     const float* HWY_RESTRICT x,
                                     float* HWY_RESTRICT y, size_t rows,
                                     size_t cols, size_t row_begin,
                                     size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
  if (row_begin == row_end) return;
  const QuantDF df;
  constexpr size_t kPass = kQuantRowsPerPass;
  const size_t num_blocks = cols / kSuperBlockSize;
  const size_t row_bytes = num_blocks * Format::kBlockBytes;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t distance = QuantPrefetchDistance(row_bytes);
  std::conditional_t<Format::kSums == SumLayout::kNoSums, NoBlockSums, BlockSums>
      sums;
  if constexpr (Format::kSums != SumLayout::kNoSums) {
    ComputeSuperBlockSums<Format>(x, num_blocks, sums);
  }
  size_t r = row_begin;
  for (; r + kPass <= row_end; r += kPass) {
    LinearSuperBlockPass<kPass>(tag, df, base + r * row_bytes, row_bytes,
                                num_blocks, x, sums.data(), distance,
                                kPass * row_bytes, y + r);
  }
  for (; r < row_end; ++r) {
    LinearSuperBlockPass<1>(tag, df, base + r * row_bytes, row_bytes,
                            num_blocks, x, sums.data(), distance, row_bytes,
                            y + r);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_SUPERBLOCK_INL_H_
