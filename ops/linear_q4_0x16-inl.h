// Per-target kernels of Q4_0x16 weights (ops/quantize_q4_0x16.h): the format
// tag and block decode used by the generic matrix-matrix product and row
// gather (ops/matmul-inl.h, ops/gather-inl.h), and the matrix-vector product
// LinearQ4_0x16Rows, which is why the format exists. Translation unit:
// ops/kernels_q4_0x16.cc; public API: ops/linear.h, ops/matmul.h,
// ops/gather.h, ops/linear_rows.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_LINEAR_Q4_0X16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_LINEAR_Q4_0X16_INL_H_
#undef CORTIQ_OPS_LINEAR_Q4_0X16_INL_H_
#else
#define CORTIQ_OPS_LINEAR_Q4_0X16_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/aligned_allocator.h"
#include "hwy/base.h"
#include "hwy/highway.h"
#include "ops/dot-inl.h"           // PrefetchAt
#include "ops/linear_quant-inl.h"  // QuantPrefetchDistance
#include "ops/quant_block-inl.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Format tag of Q4_0x16 (ops/quantize_q4_0x16.h): 512-weight blocks of 288
// bytes, no offset.
struct Q4_0x16Format {
  static constexpr size_t kBlockWeights = kQ4_0x16BlockWeights;
  static constexpr size_t kBlockBytes = kQ4_0x16BlockBytes;
  static constexpr bool kHasMin = false;
};

// out[0, 512) = the block's f32 weights in row order, exactly
// DequantizeRowQ4_0x16's values: each of its 16 Q4_0 blocks is reassembled
// and decoded as Q4_0 (DecodeBlock(Q4_0Format)). For the matrix-matrix product
// (once per weight row and 256-token panel) and the row gather, where the
// decode is not the bottleneck. out needs no alignment.
HWY_INLINE void DecodeBlock(Q4_0x16Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  for (size_t j = 0; j < kQ4_0x16Blocks; ++j) {
    uint8_t q4_0[kQ4_0BlockBytes];
    memcpy(q4_0, block + 2 * j, 2);
    for (size_t z = 0; z < 4; ++z) {
      memcpy(q4_0 + 2 + 4 * z, block + 32 + 64 * z + 4 * j, 4);
    }
    DecodeBlock(Q4_0Format(), q4_0, out + j * kQuantBlockSize);
  }
}

// The activations in the order the kernel multiplies them: for each 512-weight
// block s, vector v = 8 z + m (z < 4 the 64-byte part, m < 8 the nibble of the
// 32-bit lane) holds in lane j (< 16, the Q4_0 block) the activation of the
// weight that nibble encodes: xp[512 s + 16 v + j] = x[512 s + 32 j + 4 z +
// m / 2 + 16 (m % 2)] (nibble m of lane j is byte 4 z + m / 2 of block j's
// quants, low nibble for even m). cols a multiple of 512; xp must not overlap
// x.
HWY_INLINE void PermuteQ4_0x16Activations(const float* HWY_RESTRICT x,
                                          size_t cols, float* HWY_RESTRICT xp) {
  for (size_t s = 0; s < cols; s += kQ4_0x16BlockWeights) {
    for (size_t z = 0; z < 4; ++z) {
      for (size_t m = 0; m < 8; ++m) {
        const float* src = x + s + 4 * z + m / 2 + 16 * (m % 2);
        float* dst = xp + s + 16 * (8 * z + m);
        for (size_t j = 0; j < kQ4_0x16Blocks; ++j) dst[j] = src[32 * j];
      }
    }
  }
}

// f32(((q >> 4 kM) & 15) - 8) per 32-bit lane of q: the Q4_0 quant of nibble
// kM of each lane, exact. AVX-512: one vpermps over the 16 values (it reads
// only the low 4 bits of each index, so no mask) after the shift.
template <int kM, class DF, class VI>
HWY_INLINE hn::VFromD<DF> Q4_0x16Nibble(DF df, VI q) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {
    const __m512 table =
        _mm512_setr_ps(-8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f,
                       0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
    if constexpr (kM == 0) {
      return hn::VFromD<DF>{_mm512_permutexvar_ps(q.raw, table)};
    } else {
      return hn::VFromD<DF>{
          _mm512_permutexvar_ps(_mm512_srli_epi32(q.raw, 4 * kM), table)};
    }
  }
#endif
  const hn::RebindToSigned<DF> di;
  const auto nibble = hn::And(hn::ShiftRight<4 * kM>(hn::BitCast(di, q)), hn::Set(di, 15));
  return hn::ConvertTo(df, hn::Sub(nibble, hn::Set(di, 8)));
}

// a[i] (+)= nibble kM.. 7 of q[i] times the activation vectors xv + 16 kM.. ,
// for each of the kRows rows (a[i] = the first product when kFirst).
template <int kM, bool kFirst, size_t kRows, class DF, class VI,
          class V = hn::VFromD<DF>>
HWY_INLINE void Q4_0x16Nibbles(DF df, const VI (&q)[kRows],
                               const float* HWY_RESTRICT xv, V (&a)[kRows]) {
  if constexpr (kM < 8) {
    const V x = hn::Load(df, xv + 16 * kM);
    for (size_t i = 0; i < kRows; ++i) {
      const V w = Q4_0x16Nibble<kM>(df, q[i]);
      a[i] = (kFirst && kM == 0) ? hn::Mul(w, x) : hn::MulAdd(w, x, a[i]);
    }
    Q4_0x16Nibbles<kM + 1, kFirst>(df, q, xv, a);
  }
}

// y[i] = sum_c w_rc x_c for the kRows rows starting at w0 (row_bytes apart),
// xp the permuted activations (PermuteQ4_0x16Activations). Per row and
// 512-weight block, for each group of N = Lanes(df) Q4_0 blocks (one per
// lane): the 32 products of each lane's block summed in one chain, in the
// order (z, m) of xp, then multiplied by the blocks' scales and added to the
// row's accumulator (one FMA per N blocks); y = ReduceSum(acc). The same
// operations in the same order for a row whatever kRows is. `distance` and
// `next`: as LinearQuantPass (ops/linear_quant-inl.h).
template <size_t kRows, class DF>
HWY_INLINE void LinearQ4_0x16Pass(DF df, const uint8_t* w0, size_t row_bytes,
                                  size_t num_blocks, const float* HWY_RESTRICT xp,
                                  size_t distance, size_t next,
                                  float* HWY_RESTRICT y) {
  using V = hn::VFromD<DF>;
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<hwy::float16_t, DF> dh;
  using VI = hn::VFromD<decltype(du)>;
  constexpr size_t N = hn::MaxLanes(DF());
  static_assert(kQ4_0x16Blocks % N == 0, "lanes must divide the 16 blocks");
  const uint8_t* rows[kRows];
  V acc[kRows];
  for (size_t i = 0; i < kRows; ++i) {
    rows[i] = w0 + i * row_bytes;
    acc[i] = hn::Zero(df);
  }
  const size_t wrap = next - row_bytes;
  for (size_t b = 0, off = 0; b < num_blocks; ++b, off += kQ4_0x16BlockBytes) {
    // The 288 bytes `distance` ahead (the same row, or the same row of the
    // next pass once that passes the row's end): one hint per 64 bytes.
    for (size_t line = 0; line < kQ4_0x16BlockBytes + 64; line += 64) {
      const size_t at = off + line;
      const size_t ahead = at + distance < row_bytes ? at + distance : at + distance + wrap;
      for (size_t i = 0; i < kRows; ++i) PrefetchAt(rows[i], ahead);
    }
    const float* xb = xp + b * kQ4_0x16BlockWeights;
    for (size_t g = 0; g < kQ4_0x16Blocks; g += N) {
      V a[kRows];
      for (size_t z = 0; z < 4; ++z) {
        VI q[kRows];
        for (size_t i = 0; i < kRows; ++i) {
          q[i] = hn::LoadU(du, reinterpret_cast<const uint32_t*>(rows[i] + off + 32 +
                                                                  64 * z + 4 * g));
        }
        if (z == 0) {
          Q4_0x16Nibbles<0, true>(df, q, xb + g, a);
        } else {
          Q4_0x16Nibbles<0, false>(df, q, xb + 128 * z + g, a);
        }
      }
      for (size_t i = 0; i < kRows; ++i) {
        const V d = hn::PromoteTo(
            df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(rows[i] + off) + g));
        acc[i] = hn::MulAdd(a[i], d, acc[i]);
      }
    }
  }
  for (size_t i = 0; i < kRows; ++i) y[i] = ReduceSum(df, acc[i]);
}

// Rows per pass of LinearQ4_0x16Rows (each pass loads an activation vector
// once for its rows).
constexpr size_t kQ4_0x16RowsPerPass = 4;

// y[r] = sum_c w_rc * x[c] for r in [row_begin, row_end) from the permuted
// activations xp (PermuteQ4_0x16Activations of x; 64-byte aligned), w Q4_0x16
// rows of cols / 512 blocks. Rows kQ4_0x16RowsPerPass at a time, the rest one
// at a time, every row through the same per-row operations
// (LinearQ4_0x16Pass), so y[r] does not depend on row_begin / row_end.
HWY_INLINE void LinearQ4_0x16Permuted(const void* HWY_RESTRICT w,
                                      const float* HWY_RESTRICT xp,
                                      float* HWY_RESTRICT y, size_t cols,
                                      size_t row_begin, size_t row_end) {
  const hn::CappedTag<float, kQ4_0x16Blocks> df;
  constexpr size_t kPass = kQ4_0x16RowsPerPass;
  const size_t num_blocks = cols / kQ4_0x16BlockWeights;
  const size_t row_bytes = num_blocks * kQ4_0x16BlockBytes;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t distance = QuantPrefetchDistance(row_bytes);
  size_t r = row_begin;
  for (; r + kPass <= row_end; r += kPass) {
    LinearQ4_0x16Pass<kPass>(df, base + r * row_bytes, row_bytes, num_blocks, xp,
                             distance, kPass * row_bytes, y + r);
  }
  for (; r < row_end; ++r) {
    LinearQ4_0x16Pass<1>(df, base + r * row_bytes, row_bytes, num_blocks, xp,
                         distance, row_bytes, y + r);
  }
}

// ops/linear.h LinearQ4_0x16: the activations permuted once per call, then
// LinearQ4_0x16Permuted.
HWY_INLINE void LinearQ4_0x16Rows(const void* HWY_RESTRICT w,
                                  const float* HWY_RESTRICT x,
                                  float* HWY_RESTRICT y, size_t rows,
                                  size_t cols, size_t row_begin,
                                  size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kQ4_0x16BlockWeights == 0);
  (void)rows;
  if (row_begin == row_end) return;
  auto xp = hwy::AllocateAligned<float>(cols);
  HWY_ASSERT(xp);
  PermuteQ4_0x16Activations(x, cols, xp.get());
  LinearQ4_0x16Permuted(w, xp.get(), y, cols, row_begin, row_end);
}

// ops/linear_rows.h LinearRowsQ4_0x16: every token's activations permuted
// once, then blocks of 16 rows, each for every token (the block's weights stay
// in cache across the tokens); each row's result has LinearQ4_0x16Rows' bits.
HWY_INLINE void LinearRowsQ4_0x16Rows(const void* HWY_RESTRICT w,
                                      const float* HWY_RESTRICT x,
                                      size_t x_stride, float* HWY_RESTRICT y,
                                      size_t y_stride, size_t batch,
                                      size_t rows, size_t cols,
                                      size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kQ4_0x16BlockWeights == 0);
  (void)rows;
  if (row_begin == row_end || batch == 0) return;
  auto xp = hwy::AllocateAligned<float>(batch * cols);
  HWY_ASSERT(xp);
  for (size_t t = 0; t < batch; ++t) {
    PermuteQ4_0x16Activations(x + t * x_stride, cols, xp.get() + t * cols);
  }
  constexpr size_t kRowsPerBlock = 16;
  for (size_t r = row_begin; r < row_end; r += kRowsPerBlock) {
    const size_t end = HWY_MIN(row_end, r + kRowsPerBlock);
    for (size_t t = 0; t < batch; ++t) {
      LinearQ4_0x16Permuted(w, xp.get() + t * cols, y + t * y_stride, cols, r, end);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_Q4_0X16_INL_H_
