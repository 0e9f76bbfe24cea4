// Per-target Y = X W^T over a few activation rows (FloatRowsKernel for f32 /
// bf16 weights, QuantRowsKernel for Q8_0 / Q4_0), each output computed by the
// operations the matrix-vector kernels (ops/linear-inl.h, ops/dot-inl.h,
// ops/linear_quant-inl.h) use for it, so its bits are theirs. Instantiated by
// linear_rows_{f32,bf16,q8_0,q4_0}.cc. Public API: ops/linear_rows.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_LINEAR_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_LINEAR_ROWS_INL_H_
#undef CORTIQ_OPS_LINEAR_ROWS_INL_H_
#else
#define CORTIQ_OPS_LINEAR_ROWS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/base.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"
#include "ops/linear_quant-inl.h"
#include "ops/quant_block-inl.h"
#include "ops/quantize.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Loop nest (both kernels): output-row block of kRowsBlock weight rows >
// group of up to k*Group activation rows > column chunk > weight row >
// columns > activation rows of the group. Within a chunk each weight vector
// (or block) is loaded and decoded once and applied to every row of the
// group; the group's accumulators live in registers during a chunk and in a
// stack buffer between chunks (a store and reload of a vector is exact, so the
// chunking does not change any output's chain of operations). The chunk keeps
// the group's activations (8 rows x 512 columns = 16 KiB) in L1 however wide
// the matrix is: without it, 8 rows of a 6144-column input (192 KiB) would be
// re-read from L2 by every weight row.
constexpr size_t kRowsBlock = 8;
constexpr size_t kRowsChunkCols = 512;
// Activation rows per group: accumulators in registers. Q8_0 / Q4_0: 8
// (8 accumulators + the block's 2-8 quant vectors fit 16 registers on AVX2);
// f32 / bf16: 4 (two chains per output, as DotRows1, so 8 accumulators).
constexpr size_t kQuantRowsGroup = 8;
constexpr size_t kFloatRowsGroup = 4;
// Floats of one accumulator vector in the stack buffer (the widest target's).
constexpr size_t kRowsAccLanes = HWY_MAX_BYTES / sizeof(float);

// ---------------------------------------------------------------------------
// f32 / bf16 weights: per output, DotRows1's chains (ops/dot-inl.h): a over
// the even vectors [i, i + N) of each 2N step, b over the odd ones, then the
// lone last whole vector into a, the tail (masked or padded) into b, and
// ReduceSum(a + b).

// Columns [i_begin, i_end) (multiples of 2N, i_end <= the last 2N step's end)
// of weight row `w` against kR activation rows, continuing the chains in
// a_mem / b_mem (kR vectors each, kRowsAccLanes floats apart).
template <size_t kR, class DF, typename WT>
HWY_INLINE void FloatRowsChunk(DF df, const WT* HWY_RESTRICT w, size_t i_begin,
                               size_t i_end, size_t row_bytes, size_t wrap,
                               const float* HWY_RESTRICT x, size_t x_stride,
                               float* HWY_RESTRICT a_mem,
                               float* HWY_RESTRICT b_mem) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  V a[kR], b[kR];
  for (size_t r = 0; r < kR; ++r) {
    a[r] = hn::Load(df, a_mem + r * kRowsAccLanes);
    b[r] = hn::Load(df, b_mem + r * kRowsAccLanes);
  }
  for (size_t i = i_begin; i < i_end; i += 2 * N) {
    // As DotRows4: every line kPrefetchBytes ahead, past the row's end the
    // same row of the next row block.
    for (size_t line = 0; line < 2 * N * sizeof(WT); line += 64) {
      const size_t pos = i * sizeof(WT) + line + kPrefetchBytes;
      PrefetchAt(w, pos >= row_bytes ? pos + wrap : pos);
    }
    const V w0 = LoadAsF32(df, w + i);
    const V w1 = LoadAsF32(df, w + i + N);
    for (size_t r = 0; r < kR; ++r) {
      const float* xr = x + r * x_stride;
      a[r] = hn::MulAdd(w0, hn::LoadU(df, xr + i), a[r]);
      b[r] = hn::MulAdd(w1, hn::LoadU(df, xr + i + N), b[r]);
    }
  }
  for (size_t r = 0; r < kR; ++r) {
    hn::Store(a[r], df, a_mem + r * kRowsAccLanes);
    hn::Store(b[r], df, b_mem + r * kRowsAccLanes);
  }
}

// The columns after the 2N steps (from i_main = n rounded down to 2N) of
// weight row `w`, then y[r * y_stride] = ReduceSum(a + b) for r < kR.
template <size_t kR, class DF, typename WT>
HWY_INLINE void FloatRowsFinish(DF df, const WT* HWY_RESTRICT w, size_t i_main,
                                size_t n, const float* HWY_RESTRICT x,
                                size_t x_stride, const float* a_mem,
                                const float* b_mem, float* HWY_RESTRICT y,
                                size_t y_stride) {
  using V = hn::VFromD<DF>;
  const size_t N = hn::Lanes(df);
  V a[kR], b[kR];
  for (size_t r = 0; r < kR; ++r) {
    a[r] = hn::Load(df, a_mem + r * kRowsAccLanes);
    b[r] = hn::Load(df, b_mem + r * kRowsAccLanes);
  }
  size_t i = i_main;
  if (i + N <= n) {
    const V w0 = LoadAsF32(df, w + i);
    for (size_t r = 0; r < kR; ++r) {
      a[r] = hn::MulAdd(w0, hn::LoadU(df, x + r * x_stride + i), a[r]);
    }
    i += N;
  }
  if (i != n) {
    if (n >= N) {
      const auto counted = hn::FirstN(df, N - (n - i));
      const size_t s = n - N;
      const V wt = hn::IfThenZeroElse(counted, LoadAsF32(df, w + s));
      for (size_t r = 0; r < kR; ++r) {
        b[r] = hn::MulAdd(
            wt, hn::IfThenZeroElse(counted, hn::LoadU(df, x + r * x_stride + s)),
            b[r]);
      }
    } else {
      const V wt = LoadAsF32Padded(df, w, n);
      for (size_t r = 0; r < kR; ++r) {
        b[r] = hn::MulAdd(wt, LoadPadded(df, x + r * x_stride, n), b[r]);
      }
    }
  }
  for (size_t r = 0; r < kR; ++r) {
    y[r * y_stride] = ReduceSum(df, hn::Add(a[r], b[r]));
  }
}

// FloatRowsChunk / FloatRowsFinish for a run-time group size g in [1,
// kFloatRowsGroup].
template <class DF, typename WT>
HWY_INLINE void FloatRowsChunkAny(size_t g, DF df, const WT* w, size_t i_begin,
                                  size_t i_end, size_t row_bytes, size_t wrap,
                                  const float* x, size_t x_stride, float* a_mem,
                                  float* b_mem) {
  static_assert(kFloatRowsGroup == 4, "cases below");
  switch (g) {
    case 1:
      return FloatRowsChunk<1>(df, w, i_begin, i_end, row_bytes, wrap, x,
                               x_stride, a_mem, b_mem);
    case 2:
      return FloatRowsChunk<2>(df, w, i_begin, i_end, row_bytes, wrap, x,
                               x_stride, a_mem, b_mem);
    case 3:
      return FloatRowsChunk<3>(df, w, i_begin, i_end, row_bytes, wrap, x,
                               x_stride, a_mem, b_mem);
    default:
      return FloatRowsChunk<4>(df, w, i_begin, i_end, row_bytes, wrap, x,
                               x_stride, a_mem, b_mem);
  }
}
template <class DF, typename WT>
HWY_INLINE void FloatRowsFinishAny(size_t g, DF df, const WT* w, size_t i_main,
                                   size_t n, const float* x, size_t x_stride,
                                   const float* a_mem, const float* b_mem,
                                   float* y, size_t y_stride) {
  switch (g) {
    case 1:
      return FloatRowsFinish<1>(df, w, i_main, n, x, x_stride, a_mem, b_mem, y,
                                y_stride);
    case 2:
      return FloatRowsFinish<2>(df, w, i_main, n, x, x_stride, a_mem, b_mem, y,
                                y_stride);
    case 3:
      return FloatRowsFinish<3>(df, w, i_main, n, x, x_stride, a_mem, b_mem, y,
                                y_stride);
    default:
      return FloatRowsFinish<4>(df, w, i_main, n, x, x_stride, a_mem, b_mem, y,
                                y_stride);
  }
}

// Rows [row_begin, row_end) of Y = X W^T, w row-major [rows, cols] of WT
// (float or hwy::bfloat16_t). Contract: LinearRowsF32 / LinearRowsBF16 in
// ops/linear_rows.h.
template <typename WT>
HWY_INLINE void FloatRowsKernel(const WT* HWY_RESTRICT w,
                                const float* HWY_RESTRICT x, size_t x_stride,
                                float* HWY_RESTRICT y, size_t y_stride,
                                size_t batch, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows && cols >= 1);
  (void)rows;
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  const size_t step = 2 * N;
  const size_t i_main = cols / step * step;  // end of DotRows1's 2N loop
  const size_t chunk = HWY_MAX(kRowsChunkCols / step, size_t{1}) * step;
  const size_t row_bytes = cols * sizeof(WT);
  const size_t wrap = (kRowsBlock - 1) * row_bytes;
  HWY_ALIGN float a_mem[kRowsBlock * kFloatRowsGroup * kRowsAccLanes];
  HWY_ALIGN float b_mem[kRowsBlock * kFloatRowsGroup * kRowsAccLanes];
  constexpr size_t kPerRow = kFloatRowsGroup * kRowsAccLanes;
  for (size_t o0 = row_begin; o0 < row_end; o0 += kRowsBlock) {
    const size_t o1 = HWY_MIN(o0 + kRowsBlock, row_end);
    for (size_t t0 = 0; t0 < batch; t0 += kFloatRowsGroup) {
      const size_t g = HWY_MIN(kFloatRowsGroup, batch - t0);
      const float* xg = x + t0 * x_stride;
      for (size_t k = 0; k < (o1 - o0) * kPerRow; k += N) {
        hn::Store(hn::Zero(df), df, a_mem + k);
        hn::Store(hn::Zero(df), df, b_mem + k);
      }
      for (size_t i0 = 0; i0 < i_main; i0 += chunk) {
        const size_t i1 = HWY_MIN(i0 + chunk, i_main);
        for (size_t o = o0; o < o1; ++o) {
          const size_t k = (o - o0) * kPerRow;
          FloatRowsChunkAny(g, df, w + o * cols, i0, i1, row_bytes, wrap, xg,
                            x_stride, a_mem + k, b_mem + k);
        }
      }
      for (size_t o = o0; o < o1; ++o) {
        const size_t k = (o - o0) * kPerRow;
        FloatRowsFinishAny(g, df, w + o * cols, i_main, cols, xg, x_stride,
                           a_mem + k, b_mem + k, y + t0 * y_stride + o,
                           y_stride);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Q8_0 / Q4_0 weights: per output, LinearQuantPass's operations
// (ops/linear_quant-inl.h): per block s = BlockDot (first product a multiply,
// then FMAs in BlockDot's order), acc = MulAdd(s, d, acc), and ReduceSum(acc)
// at the end. The block's quants are decoded once into q[0, 32 / N) in the
// order BlockDot consumes them; BlockQuantOffset(i) is the offset in the
// block's activations that q[i] multiplies.

template <class DF, class V>
HWY_INLINE void DecodeBlockQuants(Q8_0Format /*tag*/, DF df,
                                  const uint8_t* block, V* q) {
  const size_t N = hn::Lanes(df);
  for (size_t i = 0; i * N < kQuantBlockSize; ++i) {
    q[i] = Q8_0Quants(df, block, i * N);
  }
}
HWY_INLINE size_t BlockQuantOffset(Q8_0Format /*tag*/, size_t i, size_t N) {
  return i * N;
}
// Q4_0: lo_0, hi_0, lo_N, hi_N, ... (BlockDot's order).
template <class DF, class V>
HWY_INLINE void DecodeBlockQuants(Q4_0Format /*tag*/, DF df,
                                  const uint8_t* block, V* q) {
  const size_t N = hn::Lanes(df);
  for (size_t k = 0; k < kQuantBlockSize / 2; k += N) {
    Q4_0QuantsLut(df, block, k, q[2 * (k / N)], q[2 * (k / N) + 1]);
  }
}
HWY_INLINE size_t BlockQuantOffset(Q4_0Format /*tag*/, size_t i, size_t N) {
  return (i % 2) * (kQuantBlockSize / 2) + (i / 2) * N;
}

// Blocks [b_begin, b_end) of weight row `row` against kR activation rows,
// continuing the accumulators in acc_mem (kR vectors, kRowsAccLanes floats
// apart). Every block's line is prefetched `distance` bytes ahead, past the
// row's end in the same row of the next row block (`wrap` further), as
// LinearQuantPass does.
template <size_t kR, class Format, class DF>
HWY_INLINE void QuantRowsChunk(Format tag, DF df, const uint8_t* HWY_RESTRICT row,
                               size_t b_begin, size_t b_end, size_t row_bytes,
                               size_t distance, size_t wrap,
                               const float* HWY_RESTRICT x, size_t x_stride,
                               float* HWY_RESTRICT acc_mem) {
  using V = hn::VFromD<DF>;
  constexpr size_t kQ = kQuantBlockSize / hn::MaxLanes(DF());
  constexpr size_t kBytes = Format::kBlockBytes;
  const size_t N = hn::Lanes(df);
  V acc[kR];
  for (size_t r = 0; r < kR; ++r) {
    acc[r] = hn::Load(df, acc_mem + r * kRowsAccLanes);
  }
  for (size_t b = b_begin; b < b_end; ++b) {
    const size_t off = b * kBytes;
    PrefetchAt(row, off + distance < row_bytes ? off + distance
                                               : off + distance + wrap);
    const uint8_t* block = row + off;
    V q[kQ];
    DecodeBlockQuants(tag, df, block, q);
    const V d = BroadcastBlockScale(df, block);
    for (size_t r = 0; r < kR; ++r) {
      const float* xb = x + r * x_stride + b * kQuantBlockSize;
      V s = hn::Mul(q[0], hn::LoadU(df, xb + BlockQuantOffset(tag, 0, N)));
      for (size_t i = 1; i < kQ; ++i) {
        s = hn::MulAdd(q[i], hn::LoadU(df, xb + BlockQuantOffset(tag, i, N)),
                       s);
      }
      acc[r] = hn::MulAdd(s, d, acc[r]);
    }
  }
  for (size_t r = 0; r < kR; ++r) {
    hn::Store(acc[r], df, acc_mem + r * kRowsAccLanes);
  }
}

// QuantRowsChunk for a run-time group size g in [1, kQuantRowsGroup].
template <class Format, class DF>
HWY_INLINE void QuantRowsChunkAny(size_t g, Format tag, DF df,
                                  const uint8_t* row, size_t b_begin,
                                  size_t b_end, size_t row_bytes,
                                  size_t distance, size_t wrap, const float* x,
                                  size_t x_stride, float* acc_mem) {
  static_assert(kQuantRowsGroup == 8, "cases below");
#define CORTIQ_QUANT_ROWS_CASE(R)                                            \
  case R:                                                                    \
    return QuantRowsChunk<R>(tag, df, row, b_begin, b_end, row_bytes,        \
                             distance, wrap, x, x_stride, acc_mem)
  switch (g) {
    CORTIQ_QUANT_ROWS_CASE(1);
    CORTIQ_QUANT_ROWS_CASE(2);
    CORTIQ_QUANT_ROWS_CASE(3);
    CORTIQ_QUANT_ROWS_CASE(4);
    CORTIQ_QUANT_ROWS_CASE(5);
    CORTIQ_QUANT_ROWS_CASE(6);
    CORTIQ_QUANT_ROWS_CASE(7);
    default:
      return QuantRowsChunk<8>(tag, df, row, b_begin, b_end, row_bytes,
                               distance, wrap, x, x_stride, acc_mem);
  }
#undef CORTIQ_QUANT_ROWS_CASE
}

// Rows [row_begin, row_end) of Y = X W^T, w in Format's blocks (row r at byte
// r * cols / 32 * Format::kBlockBytes). Contract: LinearRowsQ8_0 /
// LinearRowsQ4_0 in ops/linear_rows.h.
template <class Format>
HWY_INLINE void QuantRowsKernel(Format tag, const void* HWY_RESTRICT w,
                                const float* HWY_RESTRICT x, size_t x_stride,
                                float* HWY_RESTRICT y, size_t y_stride,
                                size_t batch, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kQuantBlockSize == 0);
  (void)rows;
  const QuantDF df;
  const size_t N = hn::Lanes(df);
  constexpr size_t kBytes = Format::kBlockBytes;
  constexpr size_t kChunkBlocks = kRowsChunkCols / kQuantBlockSize;
  const size_t num_blocks = cols / kQuantBlockSize;
  const size_t row_bytes = num_blocks * kBytes;
  const size_t distance = QuantPrefetchDistance(row_bytes);
  const size_t wrap = (kRowsBlock - 1) * row_bytes;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  HWY_ALIGN float acc_mem[kRowsBlock * kQuantRowsGroup * kRowsAccLanes];
  constexpr size_t kPerRow = kQuantRowsGroup * kRowsAccLanes;
  for (size_t o0 = row_begin; o0 < row_end; o0 += kRowsBlock) {
    const size_t o1 = HWY_MIN(o0 + kRowsBlock, row_end);
    for (size_t t0 = 0; t0 < batch; t0 += kQuantRowsGroup) {
      const size_t g = HWY_MIN(kQuantRowsGroup, batch - t0);
      const float* xg = x + t0 * x_stride;
      for (size_t k = 0; k < (o1 - o0) * kPerRow; k += N) {
        hn::Store(hn::Zero(df), df, acc_mem + k);
      }
      for (size_t b0 = 0; b0 < num_blocks; b0 += kChunkBlocks) {
        const size_t b1 = HWY_MIN(b0 + kChunkBlocks, num_blocks);
        for (size_t o = o0; o < o1; ++o) {
          QuantRowsChunkAny(g, tag, df, base + o * row_bytes, b0, b1, row_bytes,
                            distance, wrap, xg, x_stride,
                            acc_mem + (o - o0) * kPerRow);
        }
      }
      for (size_t o = o0; o < o1; ++o) {
        for (size_t r = 0; r < g; ++r) {
          y[(t0 + r) * y_stride + o] = ReduceSum(
              df, hn::Load(df, acc_mem + (o - o0) * kPerRow + r * kRowsAccLanes));
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

#endif  // CORTIQ_OPS_LINEAR_ROWS_INL_H_
