// Per-target kernels of Q8_0x16 weights (ops/quantize_q8_0x16.h): the format
// tag and block decode used by the generic matrix-matrix product and row
// gather (ops/matmul-inl.h, ops/gather-inl.h), and the f32 matrix-vector
// product LinearQ8_0x16Rows (CPUs without AVX-512 VNNI; with it,
// ops/linear_vnni.h). Translation unit: ops/kernels_q8_0x16.cc; public API:
// ops/linear.h, ops/matmul.h, ops/gather.h, ops/linear_rows.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_LINEAR_Q8_0X16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_LINEAR_Q8_0X16_INL_H_
#undef CORTIQ_OPS_LINEAR_Q8_0X16_INL_H_
#else
#define CORTIQ_OPS_LINEAR_Q8_0X16_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/aligned_allocator.h"
#include "hwy/base.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"  // PrefetchAt
#include "ops/quant_block-inl.h"
#include "ops/quantize_q8_0x16.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Format tag of Q8_0x16 (ops/quantize_q8_0x16.h): 512-weight blocks of 544
// bytes, no offset.
struct Q8_0x16Format {
  static constexpr size_t kBlockWeights = kQ8_0x16BlockWeights;
  static constexpr size_t kBlockBytes = kQ8_0x16BlockBytes;
  static constexpr bool kHasMin = false;
};

// out[0, 512) = the block's f32 weights in row order, exactly
// DequantizeRowQ8_0x16's values: each of its 16 Q8_0 blocks is reassembled
// and decoded as Q8_0. For the matrix-matrix product and the row gather.
HWY_INLINE void DecodeBlock(Q8_0x16Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  for (size_t j = 0; j < kQ8_0x16Blocks; ++j) {
    uint8_t q8_0[kQ8_0BlockBytes];
    memcpy(q8_0, block + 2 * j, 2);
    for (size_t v = 0; v < 8; ++v) memcpy(q8_0 + 2 + 4 * v, block + 32 + 64 * v + 4 * j, 4);
    DecodeBlock(Q8_0Format(), q8_0, out + j * kQuantBlockSize);
  }
}

// The activations in the order the kernel multiplies them: for each 512-weight
// block s, vector u = 4 v + b (v < 8 the 64-byte part, b < 4 the byte of the
// 32-bit lane) holds in lane j (< 16, the Q8_0 block) the activation of that
// quant: xp[512 s + 16 u + j] = x[512 s + 32 j + u]. cols a multiple of 512;
// xp must not overlap x.
HWY_INLINE void PermuteQ8_0x16Activations(const float* HWY_RESTRICT x,
                                          size_t cols, float* HWY_RESTRICT xp) {
  for (size_t s = 0; s < cols; s += kQ8_0x16BlockWeights) {
    for (size_t u = 0; u < 32; ++u) {
      for (size_t j = 0; j < kQ8_0x16Blocks; ++j) xp[s + 16 * u + j] = x[s + 32 * j + u];
    }
  }
}

// a (+)= quant bytes kB..3 of each 32-bit lane of q (exact f32 values) times
// the activation vectors xv + 16 kB, ... (a = the first product when kB == 0).
template <int kB, class DF, class VI, class V = hn::VFromD<DF>>
HWY_INLINE void Q8_0x16Bytes(DF df, VI q, const float* HWY_RESTRICT xv, V& a) {
  if constexpr (kB < 4) {
    const V w = hn::ConvertTo(df, hn::ShiftRight<24>(hn::ShiftLeft<24 - 8 * kB>(q)));
    const V x = hn::Load(df, xv + 16 * kB);
    a = kB == 0 ? hn::Mul(w, x) : hn::MulAdd(w, x, a);
    Q8_0x16Bytes<kB + 1>(df, q, xv, a);
  }
}

// Bytes ahead of the kernel's reads that it prefetches (a thread's rows are
// one sequential stream; as kQ4_0x16PrefetchBytes).
constexpr size_t kQ8_0x16PrefetchBytes = 3072;

// Returns sum_c w_c x_c for the Q8_0x16 row at `row` (num_blocks blocks), xp
// the permuted activations (PermuteQ8_0x16Activations). Per 512-weight block
// and group of N = Lanes(df) Q8_0 blocks (one per lane): the products of the
// 64-byte parts v summed in four chains (parts v and v + 4 share one), the
// chains added as (0 + 1) + (2 + 3), then multiplied by the blocks' scales
// and added to the row's accumulator; the result is ReduceSum(acc).
template <class DF>
HWY_INLINE float LinearQ8_0x16Row(DF df, const uint8_t* HWY_RESTRICT row,
                                  size_t num_blocks, const float* HWY_RESTRICT xp) {
  using V = hn::VFromD<DF>;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<hwy::float16_t, DF> dh;
  constexpr size_t N = hn::MaxLanes(DF());
  static_assert(kQ8_0x16Blocks % N == 0, "lanes must divide the 16 blocks");
  V acc = hn::Zero(df);
  for (size_t b = 0, off = 0; b < num_blocks; ++b, off += kQ8_0x16BlockBytes) {
    for (size_t line = 0; line < kQ8_0x16BlockBytes + 64; line += 64) {
      PrefetchAt(row, off + line + kQ8_0x16PrefetchBytes);
    }
    const float* xb = xp + b * kQ8_0x16BlockWeights;
    for (size_t g = 0; g < kQ8_0x16Blocks; g += N) {
      V a[4];
      for (size_t v = 0; v < 8; ++v) {
        const auto q = hn::LoadU(
            di, reinterpret_cast<const int32_t*>(row + off + 32 + 64 * v + 4 * g));
        if (v < 4) {
          Q8_0x16Bytes<0>(df, q, xb + 64 * v + g, a[v]);
        } else {
          V t;
          Q8_0x16Bytes<0>(df, q, xb + 64 * v + g, t);
          a[v - 4] = hn::Add(a[v - 4], t);
        }
      }
      const V sum = hn::Add(hn::Add(a[0], a[1]), hn::Add(a[2], a[3]));
      const V d = hn::PromoteTo(
          df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(row + off) + g));
      acc = hn::MulAdd(sum, d, acc);
    }
  }
  return ReduceSum(df, acc);
}

// y[r] = sum_c w_rc * x[c] for r in [row_begin, row_end) from the permuted
// activations xp, each row by LinearQ8_0x16Row (so y[r] does not depend on
// row_begin / row_end).
HWY_INLINE void LinearQ8_0x16Permuted(const void* HWY_RESTRICT w,
                                      const float* HWY_RESTRICT xp,
                                      float* HWY_RESTRICT y, size_t cols,
                                      size_t row_begin, size_t row_end) {
  const hn::CappedTag<float, kQ8_0x16Blocks> df;
  const size_t num_blocks = cols / kQ8_0x16BlockWeights;
  const size_t row_bytes = num_blocks * kQ8_0x16BlockBytes;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  for (size_t r = row_begin; r < row_end; ++r) {
    y[r] = LinearQ8_0x16Row(df, base + r * row_bytes, num_blocks, xp);
  }
}

// ops/linear.h LinearQ8_0x16 (the f32 path): the activations permuted once per
// call, then LinearQ8_0x16Permuted.
HWY_INLINE void LinearQ8_0x16Rows(const void* HWY_RESTRICT w,
                                  const float* HWY_RESTRICT x,
                                  float* HWY_RESTRICT y, size_t rows,
                                  size_t cols, size_t row_begin,
                                  size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kQ8_0x16BlockWeights == 0);
  (void)rows;
  if (row_begin == row_end) return;
  auto xp = hwy::AllocateAligned<float>(cols);
  HWY_ASSERT(xp);
  PermuteQ8_0x16Activations(x, cols, xp.get());
  LinearQ8_0x16Permuted(w, xp.get(), y, cols, row_begin, row_end);
}

// ops/linear_rows.h LinearRowsQ8_0x16 (the f32 path): every token's
// activations permuted once, then blocks of 16 rows, each for every token;
// each row's result has LinearQ8_0x16Rows' bits.
HWY_INLINE void LinearRowsQ8_0x16Rows(const void* HWY_RESTRICT w,
                                      const float* HWY_RESTRICT x,
                                      size_t x_stride, float* HWY_RESTRICT y,
                                      size_t y_stride, size_t batch,
                                      size_t rows, size_t cols,
                                      size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kQ8_0x16BlockWeights == 0);
  (void)rows;
  if (row_begin == row_end || batch == 0) return;
  auto xp = hwy::AllocateAligned<float>(batch * cols);
  HWY_ASSERT(xp);
  for (size_t t = 0; t < batch; ++t) {
    PermuteQ8_0x16Activations(x + t * x_stride, cols, xp.get() + t * cols);
  }
  constexpr size_t kRowsPerBlock = 16;
  for (size_t r = row_begin; r < row_end; r += kRowsPerBlock) {
    const size_t end = HWY_MIN(row_end, r + kRowsPerBlock);
    for (size_t t = 0; t < batch; ++t) {
      LinearQ8_0x16Permuted(w, xp.get() + t * cols, y + t * y_stride, cols, r, end);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_Q8_0X16_INL_H_
