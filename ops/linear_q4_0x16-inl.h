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
// kM of each lane, exact; q[b] = q >> 8 b (ByteShifts). AVX-512: one vpermps
// over the 16 values (it reads only the low 4 bits of each index, so no mask)
// after the shift. Elsewhere no int-to-float conversion and one shift per two
// nibbles: the nibble at bit p = 4 (kM % 2) of q[kM / 2] is masked in place
// and given the exponent of 2^(23 - p), so that its bits weigh 1, 2, 4, 8:
// the float is 2^(23 - p) + nibble exactly, and one subtraction of
// 2^(23 - p) + 8 leaves nibble - 8 exactly (Zen 2, AVX2, with the paired
// groups below: +5% from cache, +3..13% in an E2B Q4_0 token, against a shift,
// a mask, an integer subtraction and a conversion per nibble).
template <int kM, class DF, class VI>
HWY_INLINE hn::VFromD<DF> Q4_0x16Nibble(DF df, const VI (&q)[4]) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {
    const __m512 table =
        _mm512_setr_ps(-8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f,
                       0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
    if constexpr (kM == 0) {
      return hn::VFromD<DF>{_mm512_permutexvar_ps(q[0].raw, table)};
    } else {
      return hn::VFromD<DF>{
          _mm512_permutexvar_ps(_mm512_srli_epi32(q[0].raw, 4 * kM), table)};
    }
  }
#endif
  constexpr int kPos = 4 * (kM % 2);
  const hn::RebindToUnsigned<DF> du;
  const auto src = hn::BitCast(du, q[kM / 2]);
  const auto bits = hn::Or(hn::And(src, hn::Set(du, 15u << kPos)),
                           hn::Set(du, static_cast<uint32_t>(127 + 23 - kPos) << 23));
  return hn::Sub(hn::BitCast(df, bits), hn::Set(df, static_cast<float>((1u << (23 - kPos)) + 8)));
}

// For each group t < kGroups of lanes: a[t] (+)= nibbles kM..7 of q[t] times
// the activation vectors xv + t N + 16 kM, ... (a[t] = the first product when
// kM == 0); q[t] as Q4_0x16Nibble's. The groups' steps are interleaved; each
// a[t] gets the same operations in the same order whatever kGroups is.
template <int kM, size_t kGroups, class DF, class VI, class V = hn::VFromD<DF>>
HWY_INLINE void Q4_0x16Nibbles(DF df, const VI (&q)[kGroups][4], const float* HWY_RESTRICT xv,
                               V (&a)[kGroups]) {
  if constexpr (kM < 8) {
    constexpr size_t N = hn::MaxLanes(DF());
    for (size_t t = 0; t < kGroups; ++t) {
      const V w = Q4_0x16Nibble<kM>(df, q[t]);
      const V x = hn::Load(df, xv + t * N + 16 * kM);
      a[t] = kM == 0 ? hn::Mul(w, x) : hn::MulAdd(w, x, a[t]);
    }
    Q4_0x16Nibbles<kM + 1>(df, q, xv, a);
  }
}

// out[b] = q >> 8 b (logical), b < 4: byte b of each lane at bits 0..7.
template <class VU>
HWY_INLINE void ByteShifts(VU q, VU (&out)[4]) {
  out[0] = q;
  out[1] = hn::ShiftRight<8>(q);
  out[2] = hn::ShiftRight<16>(q);
  out[3] = hn::ShiftRight<24>(q);
}

// Bytes ahead of the kernel's reads that it prefetches. A thread's rows are
// consecutive and read one at a time, so its weights are one sequential
// stream and the prefetch simply runs this far ahead in memory (into the
// next row at a row's end). Measured on the Emerald Rapids VM of session 26,
// 2 threads, 2048 x 3072 matrices streamed from DRAM: 3 KiB 13.6-17.1 GB/s,
// 1152 bytes 13.6-14.6.
constexpr size_t kQ4_0x16PrefetchBytes = 3072;

// Returns sum_c w_c x_c for the Q4_0x16 row at `row` (num_blocks blocks), xp
// the permuted activations (PermuteQ4_0x16Activations). Per 512-weight block
// and group of N = Lanes(df) Q4_0 blocks (one per lane): the products of each
// 64-byte part z summed in their own chain (4 chains of 8, so the FMA
// latency is hidden within one row), the chains added as (0 + 1) + (2 + 3),
// then multiplied by the blocks' scales and added to the row's accumulator
// (one FMA per N blocks); the result is ReduceSum(acc).
//
// One row at a time, not several sharing each activation load as
// LinearQuantPass does: interleaving 4 rows made 4 streams 1440 bytes apart,
// which the Emerald Rapids VM streamed from DRAM at 9-11 GB/s (2 threads)
// against 14-17 GB/s for the one stream of row-at-a-time (and the same ~24
// GB/s from cache); the activations come from L1 either way.
template <class DF>
HWY_INLINE float LinearQ4_0x16Row(DF df, const uint8_t* HWY_RESTRICT row,
                                  size_t num_blocks, const float* HWY_RESTRICT xp) {
  using V = hn::VFromD<DF>;
  const hn::RebindToUnsigned<DF> du;
  using VU = hn::VFromD<decltype(du)>;
  const hn::Rebind<hwy::float16_t, DF> dh;
  constexpr size_t N = hn::MaxLanes(DF());
  static_assert(kQ4_0x16Blocks % N == 0, "lanes must divide the 16 blocks");
  V acc = hn::Zero(df);
  for (size_t b = 0, off = 0; b < num_blocks; ++b, off += kQ4_0x16BlockBytes) {
    // One hint per 64 bytes of the block's 288, kQ4_0x16PrefetchBytes ahead (a
    // prefetch past the matrix is harmless: it never faults).
    for (size_t line = 0; line < kQ4_0x16BlockBytes + 64; line += 64) {
      PrefetchAt(row, off + line + kQ4_0x16PrefetchBytes);
    }
    const float* xb = xp + b * kQ4_0x16BlockWeights;
    // Two groups of lanes at a time where there are two or more (N <= 8): 8
    // independent FMA chains instead of 4, for cores with two FMA pipes. Same
    // bits: each group's chains and the order of the adds into acc are
    // unchanged.
    constexpr size_t kPair = N < kQ4_0x16Blocks ? 2 : 1;
    for (size_t g = 0; g < kQ4_0x16Blocks; g += kPair * N) {
      V a[4][kPair];  // [z][t]
      for (size_t z = 0; z < 4; ++z) {
        const uint8_t* qz = row + off + 32 + 64 * z + 4 * g;
        VU q[kPair][4];
        for (size_t t = 0; t < kPair; ++t) {
          ByteShifts(hn::LoadU(du, reinterpret_cast<const uint32_t*>(qz + 4 * t * N)), q[t]);
        }
        Q4_0x16Nibbles<0>(df, q, xb + 128 * z + g, a[z]);
      }
      for (size_t t = 0; t < kPair; ++t) {
        const V sum = hn::Add(hn::Add(a[0][t], a[1][t]), hn::Add(a[2][t], a[3][t]));
        const V d = hn::PromoteTo(
            df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(row + off) + g + t * N));
        acc = hn::MulAdd(sum, d, acc);
      }
    }
  }
  return ReduceSum(df, acc);
}

// y[r] = sum_c w_rc * x[c] for r in [row_begin, row_end) from the permuted
// activations xp (PermuteQ4_0x16Activations of x; 64-byte aligned), w Q4_0x16
// rows of cols / 512 blocks, each row by LinearQ4_0x16Row (so y[r] does not
// depend on row_begin / row_end).
HWY_INLINE void LinearQ4_0x16Permuted(const void* HWY_RESTRICT w,
                                      const float* HWY_RESTRICT xp,
                                      float* HWY_RESTRICT y, size_t cols,
                                      size_t row_begin, size_t row_end) {
  const hn::CappedTag<float, kQ4_0x16Blocks> df;
  const size_t num_blocks = cols / kQ4_0x16BlockWeights;
  const size_t row_bytes = num_blocks * kQ4_0x16BlockBytes;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  for (size_t r = row_begin; r < row_end; ++r) {
    y[r] = LinearQ4_0x16Row(df, base + r * row_bytes, num_blocks, xp);
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
