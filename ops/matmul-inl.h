// Per-target matrix-matrix product over a row range (MatMulRows<Weights>),
// shared by the translation units matmul_f32.cc, matmul_bf16.cc,
// matmul_q8_0.cc and matmul_q4_0.cc, which each instantiate one weight format.
// Weight row blocks are decoded to f32 once, then a register-blocked f32
// micro-kernel runs over all tokens. Public API and tile sizes: ops/matmul.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_MATMUL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_MATMUL_INL_H_
#undef CORTIQ_OPS_MATMUL_INL_H_
#else
#define CORTIQ_OPS_MATMUL_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/base.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/quant_block-inl.h"
#include "ops/quantize.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Tile sizes (derivation in ops/matmul.h).
// Weight rows per micro-tile: the 4 sums of one token reduce to one 128-bit
// vector of 4 adjacent outputs.
constexpr size_t kMatMulTileRows = 4;
// Tokens per micro-tile: 4 x 6 accumulators + 4 weight vectors + 1 activation
// vector fit AVX-512's 32 registers; the other targets have 16 (4 x 3 + 4).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr size_t kMatMulTileTokens = 6;
#else
constexpr size_t kMatMulTileTokens = 3;
#endif
// Columns per chunk: a multiple of 32 (whole quant blocks) and of every lane
// count.
constexpr size_t kMatMulColChunk = 512;
// Weight rows decoded at a time (a multiple of kMatMulTileRows): 32 x 512 f32
// = 64 KiB of stack.
constexpr size_t kMatMulRowBlock = 32;
// Tokens whose activations (x kMatMulColChunk) are kept in L2 while the row
// blocks run: 256 x 512 x 4 B = 512 KiB.
constexpr size_t kMatMulTokenBlock = 256;

// ---------------------------------------------------------------------------
// Weight formats: a view of the matrix, and the decoding of n (<=
// kMatMulColChunk) columns of one row from column k0 into f32 dst, zero-padded
// up to a multiple of Lanes(df).

struct F32Weights {
  const float* w;
  size_t cols;
};
struct BF16Weights {
  const hwy::bfloat16_t* w;
  size_t cols;
};
struct F16Weights {
  const hwy::float16_t* w;
  size_t cols;
};
template <class Format>
struct QuantWeights {
  const uint8_t* w;
  size_t row_bytes;
};

// f32 / bf16 / f16: a copy (exact widening for bf16 and f16), the last partial vector
// zero-padded (reads only the n columns).
template <class DF, typename WT>
HWY_INLINE void DecodeRowChunkDense(DF df, const WT* HWY_RESTRICT src, size_t n,
                                    float* HWY_RESTRICT dst) {
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::Store(LoadAsF32(df, src + i), df, dst + i);
  }
  if (i != n) {
    hn::Store(LoadAsF32Padded(df, src + i, n - i), df, dst + i);
  }
}
template <class DF>
HWY_INLINE void DecodeRowChunk(DF df, const F32Weights& m, size_t r, size_t k0,
                               size_t n, float* HWY_RESTRICT dst) {
  DecodeRowChunkDense(df, m.w + r * m.cols + k0, n, dst);
}
template <class DF>
HWY_INLINE void DecodeRowChunk(DF df, const BF16Weights& m, size_t r, size_t k0,
                               size_t n, float* HWY_RESTRICT dst) {
  DecodeRowChunkDense(df, m.w + r * m.cols + k0, n, dst);
}

template <class DF>
HWY_INLINE void DecodeRowChunk(DF df, const F16Weights& m, size_t r, size_t k0,
                               size_t n, float* HWY_RESTRICT dst) {
  DecodeRowChunkDense(df, m.w + r * m.cols + k0, n, dst);
}

// Block formats: k0 and n are multiples of the block size (whole blocks),
// which every lane count divides, so no padding is needed; DecodeBlock
// (ops/quant_block-inl.h, ops/kquant_block-inl.h) gives the exact f32
// weights.
template <class DF, class Format>
HWY_INLINE void DecodeRowChunk(DF /*df*/, const QuantWeights<Format>& m,
                               size_t r, size_t k0, size_t n,
                               float* HWY_RESTRICT dst) {
  const uint8_t* block =
      m.w + r * m.row_bytes + k0 / Format::kBlockWeights * Format::kBlockBytes;
  for (size_t i = 0; i < n; i += Format::kBlockWeights) {
    DecodeBlock(Format(), block, dst + i);
    block += Format::kBlockBytes;
  }
}

// Prefetches the bytes that DecodeRowChunk(m, r, k0, n) reads, one hint per
// 64-byte line.
template <typename T>
HWY_INLINE void PrefetchBytes(const T* p, size_t bytes) {
  const uint8_t* begin = reinterpret_cast<const uint8_t*>(p);
  for (size_t i = 0; i < bytes; i += 64) hwy::Prefetch(begin + i);
  hwy::Prefetch(begin + bytes - 1);  // the last line if p is not line-aligned
}
HWY_INLINE void PrefetchRowChunk(const F32Weights& m, size_t r, size_t k0,
                                 size_t n) {
  PrefetchBytes(m.w + r * m.cols + k0, n * sizeof(float));
}
HWY_INLINE void PrefetchRowChunk(const BF16Weights& m, size_t r, size_t k0,
                                 size_t n) {
  PrefetchBytes(m.w + r * m.cols + k0, n * sizeof(hwy::bfloat16_t));
}
HWY_INLINE void PrefetchRowChunk(const F16Weights& m, size_t r, size_t k0,
                                 size_t n) {
  PrefetchBytes(m.w + r * m.cols + k0, n * sizeof(hwy::float16_t));
}
template <class Format>
HWY_INLINE void PrefetchRowChunk(const QuantWeights<Format>& m, size_t r,
                                 size_t k0, size_t n) {
  PrefetchBytes(
      m.w + r * m.row_bytes + k0 / Format::kBlockWeights * Format::kBlockBytes,
      n / Format::kBlockWeights * Format::kBlockBytes);
}

// ---------------------------------------------------------------------------
// Micro-kernel.

#if HWY_TARGET != HWY_SCALAR
// Sum of the 128-bit blocks of v, as one 128-bit vector.
template <class D>
HWY_INLINE auto FoldBlocks(D d, hn::VFromD<D> v) {
  if constexpr (hn::MaxLanes(D()) * sizeof(float) > 16) {
    const hn::Half<D> dh;
    return FoldBlocks(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    (void)d;
    return v;
  }
}
#endif

// y[0, num_rows) (+)= the horizontal sums of a, b, c, d (one output row each);
// adds to y if `accumulate`, else overwrites. num_rows in [1, 4]; writes only
// y[0, num_rows). The lanes are summed pairwise: lanes i and i + 2 of each
// 128-bit block by interleaving, then i and i + 1 by 64-bit interleaving
// (giving [sum a, sum b, sum c, sum d] per block), then the blocks by halves.
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void ReduceStore4(DF df, V a, V b, V c, V d, float* HWY_RESTRICT y,
                             size_t num_rows, bool accumulate) {
#if HWY_TARGET == HWY_SCALAR
  const float sums[4] = {hn::GetLane(a), hn::GetLane(b), hn::GetLane(c),
                         hn::GetLane(d)};
  (void)df;
  for (size_t i = 0; i < num_rows; ++i) {
    y[i] = accumulate ? y[i] + sums[i] : sums[i];
  }
#else
  const hn::Repartition<uint64_t, DF> du;
  const V ab =
      hn::Add(hn::InterleaveLower(df, a, b), hn::InterleaveUpper(df, a, b));
  const V cd =
      hn::Add(hn::InterleaveLower(df, c, d), hn::InterleaveUpper(df, c, d));
  const auto ab64 = hn::BitCast(du, ab);
  const auto cd64 = hn::BitCast(du, cd);
  const V s = hn::Add(hn::BitCast(df, hn::InterleaveLower(du, ab64, cd64)),
                      hn::BitCast(df, hn::InterleaveUpper(du, ab64, cd64)));
  const hn::CappedTag<float, 4> d4;
  auto sum4 = FoldBlocks(df, s);
  if (HWY_LIKELY(num_rows == 4)) {
    if (accumulate) sum4 = hn::Add(hn::LoadU(d4, y), sum4);
    hn::StoreU(sum4, d4, y);
  } else {
    if (accumulate) sum4 = hn::Add(LoadPadded(d4, y, num_rows), sum4);
    StorePartial(d4, sum4, y, num_rows);
  }
#endif
}

// For the kTokens tokens x + j * x_stride (j < kTokens, each from the chunk's
// first column) and the 4 decoded weight rows wd + i * kMatMulColChunk:
// y[j * y_stride + i] (+)= sum_{c < n} wd[i][c] * x_j[c] for i < num_rows.
// wd is aligned and zero-padded to a multiple of Lanes(df); x is read only
// at [0, n) (the last partial vector through a padded copy).
template <size_t kTokens, class DF>
HWY_INLINE void MatMulTile(DF df, const float* HWY_RESTRICT wd,
                           const float* HWY_RESTRICT x, size_t x_stride,
                           size_t n, float* HWY_RESTRICT y, size_t y_stride,
                           size_t num_rows, bool accumulate) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  constexpr size_t kC = kMatMulColChunk;
  V acc0[kTokens], acc1[kTokens], acc2[kTokens], acc3[kTokens];
  for (size_t j = 0; j < kTokens; ++j) {
    acc0[j] = hn::Zero(df);
    acc1[j] = hn::Zero(df);
    acc2[j] = hn::Zero(df);
    acc3[j] = hn::Zero(df);
  }
  size_t k = 0;
  for (; k + N <= n; k += N) {
    const V w0 = hn::Load(df, wd + k);
    const V w1 = hn::Load(df, wd + kC + k);
    const V w2 = hn::Load(df, wd + 2 * kC + k);
    const V w3 = hn::Load(df, wd + 3 * kC + k);
    for (size_t j = 0; j < kTokens; ++j) {
      const V xv = hn::LoadU(df, x + j * x_stride + k);
      acc0[j] = hn::MulAdd(w0, xv, acc0[j]);
      acc1[j] = hn::MulAdd(w1, xv, acc1[j]);
      acc2[j] = hn::MulAdd(w2, xv, acc2[j]);
      acc3[j] = hn::MulAdd(w3, xv, acc3[j]);
    }
  }
  if (k != n) {
    const V w0 = hn::Load(df, wd + k);
    const V w1 = hn::Load(df, wd + kC + k);
    const V w2 = hn::Load(df, wd + 2 * kC + k);
    const V w3 = hn::Load(df, wd + 3 * kC + k);
    for (size_t j = 0; j < kTokens; ++j) {
      const V xv = LoadPadded(df, x + j * x_stride + k, n - k);
      acc0[j] = hn::MulAdd(w0, xv, acc0[j]);
      acc1[j] = hn::MulAdd(w1, xv, acc1[j]);
      acc2[j] = hn::MulAdd(w2, xv, acc2[j]);
      acc3[j] = hn::MulAdd(w3, xv, acc3[j]);
    }
  }
  for (size_t j = 0; j < kTokens; ++j) {
    ReduceStore4(df, acc0[j], acc1[j], acc2[j], acc3[j], y + j * y_stride,
                 num_rows, accumulate);
  }
}

// MatMulTile for the `tokens` (< kMatMulTileTokens) leftover tokens of a
// batch.
template <class DF>
HWY_INLINE void MatMulTileTail(DF df, size_t tokens, const float* wd,
                               const float* x, size_t x_stride, size_t n,
                               float* y, size_t y_stride, size_t num_rows,
                               bool accumulate) {
  switch (tokens) {
    case 1:
      return MatMulTile<1>(df, wd, x, x_stride, n, y, y_stride, num_rows,
                           accumulate);
    case 2:
      return MatMulTile<2>(df, wd, x, x_stride, n, y, y_stride, num_rows,
                           accumulate);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    case 3:
      return MatMulTile<3>(df, wd, x, x_stride, n, y, y_stride, num_rows,
                           accumulate);
    case 4:
      return MatMulTile<4>(df, wd, x, x_stride, n, y, y_stride, num_rows,
                           accumulate);
    case 5:
      return MatMulTile<5>(df, wd, x, x_stride, n, y, y_stride, num_rows,
                           accumulate);
#endif
    default:
      HWY_DASSERT(false);
  }
}

// ---------------------------------------------------------------------------
// Driver.

// y[t * y_stride + r] = sum_c W[r, c] * x[t * x_stride + c] for t < batch and
// r in [row_begin, row_end); Weights is F32Weights, BF16Weights, F16Weights or
// QuantWeights<Format> (cols a multiple of 32). Contract, precision and tiling:
// ops/matmul.h.
template <class Weights>
HWY_INLINE void MatMulRows(const Weights& m, const float* HWY_RESTRICT x,
                           size_t x_stride, float* HWY_RESTRICT y,
                           size_t y_stride, size_t batch, size_t rows,
                           size_t cols, size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(x_stride >= cols && y_stride >= rows);
  (void)rows;
  if (row_begin == row_end || batch == 0 || cols == 0) return;
  const hn::ScalableTag<float> df;
  constexpr size_t kC = kMatMulColChunk;
  constexpr size_t kR = kMatMulTileRows;
  constexpr size_t kT = kMatMulTileTokens;
  // Decoded weights: kMatMulRowBlock rows of kC floats (zero-padded columns).
  HWY_ALIGN float wd[kMatMulRowBlock * kC];

  for (size_t t0 = 0; t0 < batch; t0 += kMatMulTokenBlock) {
    const size_t t1 = HWY_MIN(batch, t0 + kMatMulTokenBlock);
    for (size_t k0 = 0; k0 < cols; k0 += kC) {
      const size_t n = HWY_MIN(kC, cols - k0);
      const bool accumulate = k0 != 0;
      for (size_t r0 = row_begin; r0 < row_end; r0 += kMatMulRowBlock) {
        const size_t block_rows = HWY_MIN(kMatMulRowBlock, row_end - r0);
        for (size_t i = 0; i < block_rows; ++i) {
          DecodeRowChunk(df, m, r0 + i, k0, n, wd + i * kC);
        }
        // Rows past the range in the last 4-row tile: zero (computed, never
        // stored).
        const size_t padded_rows = (block_rows + kR - 1) / kR * kR;
        for (size_t i = block_rows; i < padded_rows; ++i) {
          memset(wd + i * kC, 0, kC * sizeof(float));
        }
        // The weights of the next row block (or of the first one of the next
        // chunk) are prefetched while this one runs, a few rows per token
        // group: decoding reads short runs of 32 rows (544 bytes per row in
        // Q8_0), which the hardware prefetchers do not cover, so without this
        // each decode waits for DRAM (-20% at batch 64 when W is not in L3).
        size_t next_r0 = r0 + kMatMulRowBlock, next_k0 = k0, next_n = n;
        if (next_r0 >= row_end) {
          next_r0 = row_begin;
          next_k0 = k0 + kC;
          next_n = next_k0 < cols ? HWY_MIN(kC, cols - next_k0) : 0;
          if (next_n == 0 && t1 < batch) {  // next token block: chunk 0
            next_k0 = 0;
            next_n = HWY_MIN(kC, cols);
          }
        }
        const size_t next_rows =
            next_n == 0 ? 0 : HWY_MIN(kMatMulRowBlock, row_end - next_r0);
        const size_t groups = (t1 - t0 + kT - 1) / kT;
        const size_t rows_per_group = (next_rows + groups - 1) / groups;
        size_t next_row = 0;
        size_t t = t0;
        for (; t + kT <= t1; t += kT) {
          for (size_t e = HWY_MIN(next_rows, next_row + rows_per_group);
               next_row < e; ++next_row) {
            PrefetchRowChunk(m, next_r0 + next_row, next_k0, next_n);
          }
          const float* xt = x + t * x_stride + k0;
          float* yt = y + t * y_stride + r0;
          for (size_t i = 0; i < block_rows; i += kR) {
            MatMulTile<kT>(df, wd + i * kC, xt, x_stride, n, yt + i, y_stride,
                           HWY_MIN(kR, block_rows - i), accumulate);
          }
        }
        if (t < t1) {
          const float* xt = x + t * x_stride + k0;
          float* yt = y + t * y_stride + r0;
          for (size_t i = 0; i < block_rows; i += kR) {
            MatMulTileTail(df, t1 - t, wd + i * kC, xt, x_stride, n, yt + i,
                           y_stride, HWY_MIN(kR, block_rows - i), accumulate);
          }
        }
      }
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_MATMUL_INL_H_
