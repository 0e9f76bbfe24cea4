// Per-target matrix-vector product over rows of 32-weight blocks
// (LinearQuantRows<Format>: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL), shared by
// the translation units linear_q8_0.cc, linear_q4_0.cc and kernels_<format>.cc,
// which each instantiate one format. Blocks are decoded in registers
// (ops/quant_block-inl.h); no f32 copy of a row is made. Public API:
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

#include <type_traits>

#include "hwy/base.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"
#include "ops/block_sums-inl.h"
#include "ops/quant_block-inl.h"
#include "ops/quantize.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Returns s = sum_{j < 32} q_j * x_j as lane-wise partial sums (quants as f32,
// the block scale not applied) for the block at `block`; xb points at the
// block's 32 activations. 32 / N multiplies or FMAs (N = Lanes(df)); the first
// product is a multiply, not an FMA onto a zero register (same value, one
// dependency less). Q8_0: s = q[0,N) x[0,N), then += q[kN,(k+1)N) x[..] for
// k = 1, 2, ... Q4_0: s = lo_0 x_0, += hi_0 x_16, then lo_k, hi_k for k = N,
// 2N, ... (lo_k: the low nibbles of bytes [k, k + N), weights k..; hi_k: their
// high nibbles, weights 16 + k..).
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE V BlockDot(Q8_0Format /*tag*/, DF df, const uint8_t* block,
                      const float* xb) {
  const size_t N = hn::Lanes(df);
  V s = hn::Mul(Q8_0Quants(df, block, 0), hn::LoadU(df, xb));
  for (size_t k = N; k < kQuantBlockSize; k += N) {
    s = hn::MulAdd(Q8_0Quants(df, block, k), hn::LoadU(df, xb + k), s);
  }
  return s;
}
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE V BlockDot(Q4_0Format /*tag*/, DF df, const uint8_t* block,
                      const float* xb) {
  const size_t N = hn::Lanes(df);
  constexpr size_t kHalf = kQuantBlockSize / 2;
  V lo, hi;
  Q4_0QuantsLut(df, block, 0, lo, hi);
  V s = hn::MulAdd(hi, hn::LoadU(df, xb + kHalf),
                   hn::Mul(lo, hn::LoadU(df, xb)));
  for (size_t k = N; k < kHalf; k += N) {
    Q4_0QuantsLut(df, block, k, lo, hi);
    s = hn::MulAdd(lo, hn::LoadU(df, xb + k), s);
    s = hn::MulAdd(hi, hn::LoadU(df, xb + kHalf + k), s);
  }
  return s;
}

// The same for Q5_0, Q4_1, Q5_1 and IQ4_NL (BlockQuants: the values the
// block's scale multiplies; Q4_1 / Q5_1's offset m is added by the caller as
// m * sum(x over the block)), in Q4_0's order.
template <class Format, class DF, class V = hn::VFromD<DF>>
HWY_INLINE V BlockDot(Format tag, DF df, const uint8_t* block,
                      const float* xb) {
  const size_t N = hn::Lanes(df);
  constexpr size_t kHalf = kQuantBlockSize / 2;
  V lo, hi;
  BlockQuants(tag, df, block, 0, lo, hi);
  V s = hn::MulAdd(hi, hn::LoadU(df, xb + kHalf),
                   hn::Mul(lo, hn::LoadU(df, xb)));
  for (size_t k = N; k < kHalf; k += N) {
    BlockQuants(tag, df, block, k, lo, hi);
    s = hn::MulAdd(lo, hn::LoadU(df, xb + k), s);
    s = hn::MulAdd(hi, hn::LoadU(df, xb + kHalf + k), s);
  }
  return s;
}

// Prefetch distance within a row, in bytes: 3 KiB or the row length if
// shorter (then the prefetch is one pass ahead: the same offset in the same
// row of the next pass). Measured with the current kernels, one thread, from
// DRAM: 3 KiB vs 2 KiB (kPrefetchBytes, ops/dot-inl.h) raised Q8_0 from ~27 to
// ~30 GB/s on the 2560-column shapes (rows of 2720 bytes: a whole row ahead
// instead of 2 KiB) and left Q4_0 unchanged within the noise (rows of 1440 or
// 5760 bytes); 4 KiB was no better and noisier, 1 KiB ~20% slower. (With the
// earlier, slower decode, 1 KiB measured ~25% slower for Q8_0 and 4 KiB no
// better.)
constexpr size_t kQuantPrefetchBytes = 3072;
HWY_INLINE size_t QuantPrefetchDistance(size_t row_bytes) {
  return HWY_MIN(row_bytes, kQuantPrefetchBytes);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// out[k] = BlockScale(blocks + k * kBytes) for the 16 blocks of Format at
// `blocks` (reads only those 16 * kBytes bytes; out 64-byte aligned).
//
// Block k's scale is 16-bit word k * kBytes / 2 of the blocks (kBytes is even).
// A two-register word permute (vpermt2w) over 128 bytes collects the scales of
// kPerGroup consecutive blocks (Q4_0: 8, word stride 9; Q8_0: 4, stride 17);
// kGroups such permutes, merged by blends, give all 16, and one vcvtph2ps
// converts them (exact). ~1 instruction per block (Q4_0 ~0.6) in place of the
// 16-bit broadcast and conversion per block of BroadcastBlockScale. Used for
// Q4_0 only (see LinearQuantPass).
template <class Format>
HWY_INLINE void DecodeScales16(const uint8_t* blocks, float* out) {
  constexpr size_t kBytes = Format::kBlockBytes;
  constexpr size_t kWords = kBytes / 2;  // word stride between scales
  static_assert(kBytes % 2 == 0, "scales must be 16-bit aligned in the row");
  constexpr size_t kPerGroup = 63 / kWords + 1;  // largest with word < 64
  static_assert(16 % kPerGroup == 0, "groups must tile 16 blocks");
  constexpr size_t kGroups = 16 / kPerGroup;
  // Lane L (< 16) takes word (L % kPerGroup) * kWords of its group's 128 bytes.
  alignas(64) static constexpr uint16_t kIdx[32] = {
      (0 % kPerGroup) * kWords,  (1 % kPerGroup) * kWords,
      (2 % kPerGroup) * kWords,  (3 % kPerGroup) * kWords,
      (4 % kPerGroup) * kWords,  (5 % kPerGroup) * kWords,
      (6 % kPerGroup) * kWords,  (7 % kPerGroup) * kWords,
      (8 % kPerGroup) * kWords,  (9 % kPerGroup) * kWords,
      (10 % kPerGroup) * kWords, (11 % kPerGroup) * kWords,
      (12 % kPerGroup) * kWords, (13 % kPerGroup) * kWords,
      (14 % kPerGroup) * kWords, (15 % kPerGroup) * kWords};
  const __m512i idx = _mm512_load_si512(kIdx);
  __m512i scales = _mm512_permutex2var_epi16(
      _mm512_loadu_si512(blocks), idx, _mm512_loadu_si512(blocks + 64));
  for (size_t g = 1; g < kGroups; ++g) {
    const uint8_t* p = blocks + g * kPerGroup * kBytes;
    const __m512i v = _mm512_permutex2var_epi16(
        _mm512_loadu_si512(p), idx, _mm512_loadu_si512(p + 64));
    const __mmask32 lanes = ((1u << kPerGroup) - 1) << (g * kPerGroup);
    scales = _mm512_mask_blend_epi16(lanes, scales, v);
  }
  _mm512_store_ps(out, _mm512_cvtph_ps(_mm512_castsi512_si256(scales)));
}
#endif

// Rows [0, kRows) of y = W x for the kRows consecutive weight rows starting at
// w0 (row_bytes apart): y[i] for i < kRows. Per row, the same operations in the
// same order whatever kRows is, so a row's result does not depend on the pass
// (or the thread's row range) that computes it. `next` is the byte distance to
// the same row of the next pass (prefetch target once `distance` runs past the
// row's end).
//
// Formats with an offset (Format::kHasMin) add m * xsum[b] per block b, xsum
// holding the sums of x over each block (unused otherwise), in a second
// accumulator whose lanes all hold the same sum: y = ReduceSum(acc) + that.
template <size_t kRows, class Format, class DF>
HWY_INLINE void LinearQuantPass(Format tag, DF df, const uint8_t* w0,
                                size_t row_bytes, size_t num_blocks,
                                const float* HWY_RESTRICT x,
                                const float* HWY_RESTRICT xsum, size_t distance,
                                size_t next, float* HWY_RESTRICT y) {
  using V = hn::VFromD<DF>;
  constexpr size_t kBytes = Format::kBlockBytes;
  const uint8_t* rows[kRows];
  V acc[kRows];
  V accm[kRows];  // Format::kHasMin: sum_b m_b X_b (every lane the same)
  for (size_t i = 0; i < kRows; ++i) {
    rows[i] = w0 + i * row_bytes;
    acc[i] = hn::Zero(df);
    accm[i] = hn::Zero(df);
  }
  const size_t wrap = next - row_bytes;
  size_t off = 0;
  size_t b = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (kBytes == kQ4_0BlockBytes && !Format::kHasMin &&
                hn::MaxLanes(DF()) == 16) {
    // Scales of 16 blocks at a time, decoded per row into a stack buffer by
    // DecodeScales16; the block loop then multiplies by a broadcast memory
    // operand (vfmadd231ps m32{1to16}). Measured, one thread, from cache:
    // Q4_0 ~25 -> ~30 GB/s; Q8_0 ~50 -> ~47 GB/s, so Q8_0 keeps the
    // per-block BroadcastBlockScale.
    for (; b + 16 <= num_blocks; b += 16) {
      alignas(64) float scales[kRows][16];  // for _mm512_store_ps
      for (size_t i = 0; i < kRows; ++i) {
        DecodeScales16<Format>(rows[i] + off, scales[i]);
      }
      for (size_t k = 0; k < 16; ++k, off += kBytes) {
        const size_t ahead =
            off + distance < row_bytes ? off + distance : off + distance + wrap;
        for (size_t i = 0; i < kRows; ++i) PrefetchAt(rows[i], ahead);
        const float* xb = x + (b + k) * kQuantBlockSize;
        for (size_t i = 0; i < kRows; ++i) {
          const V s = BlockDot(tag, df, rows[i] + off, xb);
          acc[i] = hn::MulAdd(s, hn::Set(df, scales[i][k]), acc[i]);
        }
      }
    }
  }
#endif
  for (; b < num_blocks; ++b, off += kBytes) {
    // Same row `distance` ahead, or the same row of the next pass once that
    // passes the row's end (addresses past the matrix are harmless: a prefetch
    // never faults).
    const size_t ahead =
        off + distance < row_bytes ? off + distance : off + distance + wrap;
    for (size_t i = 0; i < kRows; ++i) PrefetchAt(rows[i], ahead);
    const float* xb = x + b * kQuantBlockSize;
    for (size_t i = 0; i < kRows; ++i) {
      const V s = BlockDot(tag, df, rows[i] + off, xb);
      acc[i] = hn::MulAdd(s, BroadcastBlockScale(df, rows[i] + off), acc[i]);
      if constexpr (Format::kHasMin) {
        // m * X_b, identical in every lane of accm (read from lane 0).
        accm[i] = hn::MulAdd(BroadcastBlockScale(df, rows[i] + off + 2),
                             hn::Set(df, xsum[b]), accm[i]);
      }
    }
  }
  for (size_t i = 0; i < kRows; ++i) {
    y[i] = ReduceSum(df, acc[i]);
    if constexpr (Format::kHasMin) y[i] += hn::GetLane(accm[i]);
  }
}

// Rows per pass of LinearQuantRows: the activations of a block are loaded once
// for kQuantRowsPerPass rows. 8 measured the same as 4 (cache-resident, one
// thread: Q4_0 ~25 GB/s, Q8_0 ~49 GB/s either way), so 4 keeps the prefetch
// streams and the registers (8 accumulators + 8 partial sums) fewer.
constexpr size_t kQuantRowsPerPass = 4;

// y[r] = sum_c w_rc * x[c] for r in [row_begin, row_end), w in Format's blocks
// (row r starts at byte r * cols / 32 * Format::kBlockBytes of w). Contract
// and precision: LinearQ8_0 / LinearQ4_0 / LinearQ4_1 ... in ops/linear.h.
//
// Rows go kQuantRowsPerPass at a time (the activations of a block are loaded
// once for the pass), the < kQuantRowsPerPass leftover rows one at a time,
// every row through the same per-row code (LinearQuantPass), so y[r] does not
// depend on row_begin / row_end. Per row and block, the quants are dotted with
// x in f32 (BlockDot: lane-wise partial sums s), then one FMA adds d * s to the
// row's accumulator, so the scale costs one multiply per block instead of one
// per weight.
//
// Where the time goes (one thread, AVX-512 on the Zen 4 dev machine, weights
// in cache, so the decode is the limit): the kernels issue ~9 vector
// instructions per row and block and speed tracks that count. Converting the
// f16 scale with scalar code (~12 instructions, a branch and a move to the
// vector unit per row and block) held Q8_0 at ~30 GB/s and Q4_0 at ~17 GB/s;
// BroadcastBlockScale (vpbroadcastw + vcvtph2ps) raised them to ~50 and ~19
// GB/s, and the Q4_0 nibble table (Q4_0QuantsLut: vpermps in place of and /
// sub / cvtdq2ps) to ~25 GB/s (44 G weights/s). Dropping the scale FMA and its
// broadcast entirely (wrong results) would give ~32 GB/s Q4_0 / ~64 GB/s Q8_0:
// the ceiling of this structure. Decoding Q4_0 scales 16 blocks at a time
// (DecodeScales16, vpermt2w) into a stack buffer read as broadcast memory
// operands gave ~30 GB/s (52 G weights/s). Measured and not kept: the same
// with the scales gathered by scalar 16-bit loads, 64 blocks at a time (no
// faster for Q4_0, ~10% slower for Q8_0); DecodeScales16 for Q8_0 (~7%
// slower); summing four rows' partial sums into one
// vector by shuffles before a single scale FMA (~6% slower); 8 rows per pass
// (no change); 8-lane vectors for Q4_0 with a two-register table (vpermt2ps;
// ~40% slower); no software prefetch (no faster from cache).
//
// Prefetch: every weight line is software-prefetched, QuantPrefetchDistance
// bytes ahead of its use. Rows are short (cols = 2560: 2720 bytes in Q8_0,
// 1440 in Q4_0), so a fixed "2 KiB further along the same row" would mostly
// land in the next row, which another of the streams is already reading, and
// the start of the next pass's rows would never be prefetched. Instead, once
// the distance runs past the end of row k, the prefetch goes to row k +
// kQuantRowsPerPass (the same row of the next pass) at the corresponding
// position. Measured on the Zen 4 dev machine, one thread, 10240 x 2560
// streamed from DRAM: Q8_0 went from ~10 GB/s (same-row prefetch, or none) to
// ~27 GB/s; skipping even one line in 17 (a prefetch every other 34-byte
// block) fell back to ~13 GB/s.
template <class Format>
HWY_INLINE void LinearQuantRows(Format tag, const void* HWY_RESTRICT w,
                                const float* HWY_RESTRICT x,
                                float* HWY_RESTRICT y, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kQuantBlockSize == 0);
  (void)rows;
  const QuantDF df;
  constexpr size_t kBytes = Format::kBlockBytes;
  constexpr size_t kPass = kQuantRowsPerPass;
  const size_t num_blocks = cols / kQuantBlockSize;
  const size_t row_bytes = num_blocks * kBytes;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t distance = QuantPrefetchDistance(row_bytes);
  // Formats with an offset: the sum of x over each block, once per call.
  std::conditional_t<Format::kHasMin, BlockSums, NoBlockSums> xsum;
  if (Format::kHasMin && row_begin != row_end) {
    xsum.Compute(x, num_blocks, kQuantBlockSize, 1.0f);
  }
  size_t r = row_begin;
  for (; r + kPass <= row_end; r += kPass) {
    LinearQuantPass<kPass>(tag, df, base + r * row_bytes, row_bytes,
                           num_blocks, x, xsum.data(), distance,
                           kPass * row_bytes, y + r);
  }
  if (kPass > 4 && r + 4 <= row_end) {
    LinearQuantPass<4>(tag, df, base + r * row_bytes, row_bytes, num_blocks, x,
                       xsum.data(), distance, 4 * row_bytes, y + r);
    r += 4;
  }
  for (; r < row_end; ++r) {
    LinearQuantPass<1>(tag, df, base + r * row_bytes, row_bytes, num_blocks, x,
                       xsum.data(), distance, row_bytes, y + r);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_QUANT_INL_H_
