// Per-target matrix-vector product over Q8_0 / Q4_0 weight rows
// (LinearQuantRows<Format>), shared by the translation units linear_q8_0.cc and
// linear_q4_0.cc, which each instantiate one format. Blocks are decoded in
// registers (ops/quant_block-inl.h); no f32 copy of a row is made. Public API:
// ops/linear.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_LINEAR_QUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_LINEAR_QUANT_INL_H_
#undef CORTIQ_OPS_LINEAR_QUANT_INL_H_
#else
#define CORTIQ_OPS_LINEAR_QUANT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/base.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"  // kPrefetchBytes
#include "ops/quant_block-inl.h"
#include "ops/quantize.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// s_r += sum_{j < 32} q_rj * x_j (lane-wise partial sums, quants as f32, the
// block scale not applied) for the blocks b0..b3 of four rows at the same
// column block; xb points at the block's 32 activations, loaded once for the
// four rows. 32 / Lanes(df) FMAs per row.
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void BlockDots4(Q8_0Format /*tag*/, DF df, const uint8_t* b0,
                           const uint8_t* b1, const uint8_t* b2,
                           const uint8_t* b3, const float* xb, V& s0, V& s1,
                           V& s2, V& s3) {
  const size_t N = hn::Lanes(df);
  for (size_t k = 0; k < kQuantBlockSize; k += N) {
    const V xv = hn::LoadU(df, xb + k);
    s0 = hn::MulAdd(Q8_0Quants(df, b0, k), xv, s0);
    s1 = hn::MulAdd(Q8_0Quants(df, b1, k), xv, s1);
    s2 = hn::MulAdd(Q8_0Quants(df, b2, k), xv, s2);
    s3 = hn::MulAdd(Q8_0Quants(df, b3, k), xv, s3);
  }
}
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void BlockDots4(Q4_0Format /*tag*/, DF df, const uint8_t* b0,
                           const uint8_t* b1, const uint8_t* b2,
                           const uint8_t* b3, const float* xb, V& s0, V& s1,
                           V& s2, V& s3) {
  const size_t N = hn::Lanes(df);
  constexpr size_t kHalf = kQuantBlockSize / 2;
  for (size_t k = 0; k < kHalf; k += N) {
    const V xlo = hn::LoadU(df, xb + k);
    const V xhi = hn::LoadU(df, xb + kHalf + k);
    V lo, hi;
    Q4_0Quants(df, b0, k, lo, hi);
    s0 = hn::MulAdd(hi, xhi, hn::MulAdd(lo, xlo, s0));
    Q4_0Quants(df, b1, k, lo, hi);
    s1 = hn::MulAdd(hi, xhi, hn::MulAdd(lo, xlo, s1));
    Q4_0Quants(df, b2, k, lo, hi);
    s2 = hn::MulAdd(hi, xhi, hn::MulAdd(lo, xlo, s2));
    Q4_0Quants(df, b3, k, lo, hi);
    s3 = hn::MulAdd(hi, xhi, hn::MulAdd(lo, xlo, s3));
  }
}

// As BlockDots4 for one row.
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void BlockDot1(Q8_0Format /*tag*/, DF df, const uint8_t* b0,
                          const float* xb, V& s0) {
  const size_t N = hn::Lanes(df);
  for (size_t k = 0; k < kQuantBlockSize; k += N) {
    s0 = hn::MulAdd(Q8_0Quants(df, b0, k), hn::LoadU(df, xb + k), s0);
  }
}
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void BlockDot1(Q4_0Format /*tag*/, DF df, const uint8_t* b0,
                          const float* xb, V& s0) {
  const size_t N = hn::Lanes(df);
  constexpr size_t kHalf = kQuantBlockSize / 2;
  for (size_t k = 0; k < kHalf; k += N) {
    V lo, hi;
    Q4_0Quants(df, b0, k, lo, hi);
    s0 = hn::MulAdd(lo, hn::LoadU(df, xb + k), s0);
    s0 = hn::MulAdd(hi, hn::LoadU(df, xb + kHalf + k), s0);
  }
}

// Prefetch distance within a row, in bytes: kPrefetchBytes (ops/dot-inl.h,
// 2 KiB, measured) or the row length if shorter. 1 KiB measured ~25% slower
// for Q8_0; 4 KiB and whole rows (10240 columns) no better and noisier.
HWY_INLINE size_t QuantPrefetchDistance(size_t row_bytes) {
  return HWY_MIN(row_bytes, kPrefetchBytes);
}

// Prefetches the line `offset` bytes past p. Computed on integers, as
// PrefetchAhead: the address may lie past the end of the weights.
HWY_INLINE void PrefetchAt(const uint8_t* p, size_t offset) {
  hwy::Prefetch(reinterpret_cast<const uint8_t*>(
      reinterpret_cast<uintptr_t>(p) + offset));
}

// y[r] = sum_c w_rc * x[c] for r in [row_begin, row_end), w in Format's blocks
// (row r starts at byte r * cols / 32 * Format::kBlockBytes of w). Contract
// and precision: LinearQ8_0 / LinearQ4_0 in ops/linear.h.
//
// Rows go four at a time (the activations of a block are loaded once for four
// rows); per row and block, the quants are dotted with x in f32 FMAs (lane-wise
// partial sums s), then one FMA adds d * s to the row's accumulator, so the
// scale costs one multiply per block instead of one per weight.
//
// Prefetch: every weight line is software-prefetched, QuantPrefetchDistance
// bytes ahead of its use. Rows are short (cols = 2560: 2720 bytes in Q8_0,
// 1440 in Q4_0), so a fixed "2 KiB further along the same row" would mostly
// land in the next row, which another of the four streams is already reading,
// and the start of the next four rows would never be prefetched. Instead, once
// the distance runs past the end of row k, the prefetch goes to row k + 4 (the
// same row of the next group) at the corresponding position. Measured on the
// Zen 4 dev machine, one thread, 10240 x 2560 streamed from DRAM: Q8_0 went
// from ~10 GB/s (same-row prefetch, or none) to ~27 GB/s; skipping even one
// line in 17 (a prefetch every other 34-byte block) fell back to ~13 GB/s.
template <class Format>
HWY_INLINE void LinearQuantRows(Format tag, const void* HWY_RESTRICT w,
                                const float* HWY_RESTRICT x,
                                float* HWY_RESTRICT y, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kQuantBlockSize == 0);
  (void)rows;
  using V = hn::VFromD<QuantDF>;
  const QuantDF df;
  constexpr size_t kBytes = Format::kBlockBytes;
  const size_t num_blocks = cols / kQuantBlockSize;
  const size_t row_bytes = num_blocks * kBytes;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t distance = QuantPrefetchDistance(row_bytes);
  size_t r = row_begin;
  for (; r + 4 <= row_end; r += 4) {
    const uint8_t* w0 = base + r * row_bytes;
    const uint8_t* w1 = w0 + row_bytes;
    const uint8_t* w2 = w1 + row_bytes;
    const uint8_t* w3 = w2 + row_bytes;
    V a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df),
      a3 = hn::Zero(df);
    for (size_t b = 0; b < num_blocks; ++b) {
      // Same row `distance` ahead, or row + 4 once that passes the row's end
      // (addresses past the matrix are harmless: a prefetch never faults).
      const size_t ahead = b * kBytes + distance < row_bytes
                               ? distance
                               : distance + 3 * row_bytes;
      PrefetchAt(w0, ahead);
      PrefetchAt(w1, ahead);
      PrefetchAt(w2, ahead);
      PrefetchAt(w3, ahead);
      V s0 = hn::Zero(df), s1 = hn::Zero(df), s2 = hn::Zero(df),
        s3 = hn::Zero(df);
      BlockDots4(tag, df, w0, w1, w2, w3, x + b * kQuantBlockSize, s0, s1, s2,
                 s3);
      a0 = hn::MulAdd(s0, hn::Set(df, BlockScale(w0)), a0);
      a1 = hn::MulAdd(s1, hn::Set(df, BlockScale(w1)), a1);
      a2 = hn::MulAdd(s2, hn::Set(df, BlockScale(w2)), a2);
      a3 = hn::MulAdd(s3, hn::Set(df, BlockScale(w3)), a3);
      w0 += kBytes;
      w1 += kBytes;
      w2 += kBytes;
      w3 += kBytes;
    }
    y[r] = ReduceSum(df, a0);
    y[r + 1] = ReduceSum(df, a1);
    y[r + 2] = ReduceSum(df, a2);
    y[r + 3] = ReduceSum(df, a3);
  }
  for (; r < row_end; ++r) {
    const uint8_t* w0 = base + r * row_bytes;
    V a0 = hn::Zero(df);
    for (size_t b = 0; b < num_blocks; ++b, w0 += kBytes) {
      V s0 = hn::Zero(df);
      BlockDot1(tag, df, w0, x + b * kQuantBlockSize, s0);
      a0 = hn::MulAdd(s0, hn::Set(df, BlockScale(w0)), a0);
    }
    y[r] = ReduceSum(df, a0);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_QUANT_INL_H_
