// LinearQ6_KAvx2 and its scalar twin LinearQ6_KDigitsScalar
// (ops/linear_vnni.h): Q6_K decode products in exact integer digits, on the
// GGUF's own bytes.
//
// Lanes. A lane is one 16-weight sub-block, so that its digit sums can be
// scaled by the sub-block's d * sc and the activation block's 2^(e - 29) at
// once. Per super-block and half h (128 weights), the four 32-byte runs of
// quants t = 0..3 (weights 128 h + 32 t + l, l < 32; ggml's
// dequantize_row_q6_K) are rebuilt from ql / qh, then interleaved by
// vpunpck{l,h}dq / vpunpck{l,h}qdq into four vectors `quad`, lane
// L = 4 s + t holding quants [4 quad, 4 quad + 4) of sub-block
// j = 8 h + 2 t + s: no shuffle across 128-bit halves.
//
// Products. Per lane and digit k, S_k = sum_c q_c a_kc - 32 sum_c a_kc over
// the lane's 16 columns (q_c in [0, 63]; the second term, precomputed per
// token, is the quants' bias), exact in 32 bits (|S_k| < 2^18): vpmaddubsw
// pairs are at most 2 * 63 * 128 = 16128, so two of them share a 16-bit word
// before vpmaddwd widens it. Then in f32, per lane, t = CombineDigits(S)
// (one rounding of each conversion and of the FMA, as the Q4_K kernels) and
// acc_{8 h + L} = fma(t, (d * sc_j) * 2^(e - 29), acc_{8 h + L}), super-blocks
// in column order; the 16 lanes are summed in the fixed tree of
// ops/linear_vnni.h. Error: that of Q4_0x16's digits with sum_c |w_c|
// replaced by sum_c |d sc_c| (q_c + 32), the two terms the bias splits each
// weight into.
#include <math.h>
#include <string.h>

#include <algorithm>
#include <cstdint>

#include "hwy/base.h"
#include "ops/linear_vnni.h"
#include "ops/linear_vnni_internal.h"
#include "ops/quantize.h"  // F16BitsToF32
#include "ops/quantize_k.h"

namespace cortiq {
namespace ops {
namespace {

using vnni_internal::kDigits;
using vnni_internal::kGroup;
using vnni_internal::kGroupBlocks;
using vnni_internal::kGroupDigitBytes;

// Byte offsets in block_q6_K.
constexpr size_t kQhOffset = 128;
constexpr size_t kScalesOffset = 192;
constexpr size_t kDOffset = 208;
constexpr int32_t kBias = 32;

// Per-token arrays, per super-block b and half h: the digits [quad][k][32]
// (lane L: 4 bytes = columns 4 quad .. 4 quad + 3 of its sub-block), the
// start values -32 * (sum of the lane's 16 digits a_k) [k][8], the lane's
// activation block scale 2^(e - 29) [8].
constexpr size_t kHalfDigitBytes = 4 * kDigits * 32;      // 512
constexpr size_t kHalfStartBytes = kDigits * 8 * 4;       // 128
constexpr size_t kHalfScaleBytes = 8 * sizeof(float);     // 32
constexpr size_t kHalfBytes = kHalfDigitBytes + kHalfStartBytes + kHalfScaleBytes;  // 672

// The sub-block of lane L in half h.
constexpr size_t LaneSubBlock(size_t h, size_t L) { return 8 * h + 2 * (L % 4) + L / 4; }

// t = V * 65536 + U, U = S_0 + 256 S_1 and V = S_2 + 256 S_3 (exact int32;
// each converted with round to nearest even, as vcvtdq2ps).
float CombineDigits(const int32_t (&s)[kDigits]) {
  const int32_t u = s[0] + s[1] * 256, v = s[2] + s[3] * 256;
  return fmaf(static_cast<float>(v), 65536.0f, static_cast<float>(u));
}

// The 6-bit quant (0..63) of weight i of a super-block (ggml).
int Quant6(const uint8_t* sb, size_t i) {
  const size_t h = i / 128, t = (i % 128) / 32, l = i % 32;
  const uint8_t low = sb[64 * h + 32 * (t % 2) + l];
  const int nibble = t < 2 ? (low & 0x0F) : (low >> 4);
  return nibble | (((sb[kQhOffset + 32 * h + l] >> (2 * t)) & 3) << 4);
}

// Rearranges the x16 digits `a` (of the activations zero-padded to a
// multiple of 512) into this file's per-half arrays for `superblocks`
// super-blocks; 4-byte copies and integer sums, the same bytes on every path.
void Q6_KLanes(const ActivationDigitsView& a, size_t superblocks, uint8_t* out) {
  for (size_t b = 0; b < superblocks; ++b) {
    for (size_t h = 0; h < 2; ++h) {
      uint8_t* half = out + (2 * b + h) * kHalfBytes;
      int8_t* digits = reinterpret_cast<int8_t*>(half);
      int32_t* start = reinterpret_cast<int32_t*>(half + kHalfDigitBytes);
      float* scale = reinterpret_cast<float*>(half + kHalfDigitBytes + kHalfStartBytes);
      for (size_t L = 0; L < 8; ++L) {
        const size_t first = kSuperBlockSize * b + 16 * LaneSubBlock(h, L);
        const size_t s = first / kGroup, block = (first % kGroup) / 32;
        int32_t sums[kDigits] = {};
        for (size_t quad = 0; quad < 4; ++quad) {
          const size_t v = (first % 32) / 4 + quad;
          for (int k = 0; k < kDigits; ++k) {
            const int8_t* src = a.digits + s * kGroupDigitBytes + 64 * (4 * v + k) + 4 * block;
            memcpy(digits + 32 * (4 * quad + k) + 4 * L, src, 4);
            sums[k] += src[0] + src[1] + src[2] + src[3];
          }
        }
        for (int k = 0; k < kDigits; ++k) start[8 * k + L] = -kBias * sums[k];
        scale[L] = a.scale[s * kGroupBlocks + block];
      }
    }
  }
}

// One row, scalar, from the per-half arrays.
float RowQ6_KDigitsScalar(const uint8_t* row, size_t superblocks, const uint8_t* lanes) {
  float acc[16] = {};
  for (size_t b = 0; b < superblocks; ++b) {
    const uint8_t* sb = row + b * kQ6_KBlockBytes;
    uint16_t d_bits;
    memcpy(&d_bits, sb + kDOffset, 2);
    const float d = F16BitsToF32(d_bits);
    for (size_t h = 0; h < 2; ++h) {
      const uint8_t* half = lanes + (2 * b + h) * kHalfBytes;
      const int8_t* digits = reinterpret_cast<const int8_t*>(half);
      const int32_t* start = reinterpret_cast<const int32_t*>(half + kHalfDigitBytes);
      const float* scale = reinterpret_cast<const float*>(half + kHalfDigitBytes + kHalfStartBytes);
      for (size_t L = 0; L < 8; ++L) {
        const size_t j = LaneSubBlock(h, L);
        int32_t sum[kDigits];
        for (int k = 0; k < kDigits; ++k) {
          sum[k] = start[8 * k + L];
          for (size_t quad = 0; quad < 4; ++quad) {
            for (size_t c = 0; c < 4; ++c) {
              sum[k] += Quant6(sb, 16 * j + 4 * quad + c) * digits[32 * (4 * quad + k) + 4 * L + c];
            }
          }
        }
        const float dsc = d * static_cast<float>(static_cast<int8_t>(sb[kScalesOffset + j]));
        acc[8 * h + L] = fmaf(CombineDigits(sum), dsc * scale[L], acc[8 * h + L]);
      }
    }
  }
  return vnni_internal::ReduceTree16(acc);
}

// Scratch for `cols` columns: the zero-padded activations and their x16
// digits, then the per-half arrays (returned; *x16 the former).
uint8_t* Q6_KScratch(size_t cols, uint8_t** x16, size_t* padded_cols) {
  *padded_cols = (cols + kGroup - 1) / kGroup * kGroup;
  const size_t x16_bytes =
      *padded_cols * sizeof(float) + vnni_internal::DigitsBytes(*padded_cols, 1);
  const size_t x16_aligned = (x16_bytes + 63) / 64 * 64;
  uint8_t* scratch =
      vnni_internal::ThreadScratch(x16_aligned + cols / kSuperBlockSize * 2 * kHalfBytes);
  *x16 = scratch;
  return scratch + x16_aligned;
}


#if defined(__x86_64__)

// CombineDigits lane-wise.
CORTIQ_AVX2_TARGET inline __m256 CombineDigitsAvx2(const __m256i (&s)[kDigits]) {
  const __m256i u = _mm256_add_epi32(s[0], _mm256_slli_epi32(s[1], 8));
  const __m256i v = _mm256_add_epi32(s[2], _mm256_slli_epi32(s[3], 8));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(65536.0f), _mm256_cvtepi32_ps(u));
}

// One row by the digit arithmetic (see the file comment).
CORTIQ_AVX2_TARGET float RowQ6_KAvx2(const uint8_t* row, size_t superblocks,
                                     const uint8_t* lanes) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i bits45 = _mm256_set1_epi8(0x30);
  const __m256i ones = _mm256_set1_epi16(1);
  // Lane L = 4 s + t takes the scale of sub-block 2 t + s of the half.
  const __m256i scale_order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (size_t b = 0; b < superblocks; ++b) {
    const uint8_t* sb = row + b * kQ6_KBlockBytes;
    for (size_t line = 0; line < kQ6_KBlockBytes + 64; line += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(sb) + line + vnni_internal::kPrefetchBytes,
                   _MM_HINT_T0);
    }
    uint16_t d_bits;
    memcpy(&d_bits, sb + kDOffset, 2);
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(d_bits));
    for (int h = 0; h < 2; ++h) {
      const uint8_t* half = lanes + (2 * b + h) * kHalfBytes;
      const int8_t* digits = reinterpret_cast<const int8_t*>(half);
      const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + 64 * h));
      const __m256i qb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + 64 * h + 32));
      const __m256i qh =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kQhOffset + 32 * h));
      // Runs t = 0..3 (the 16-bit shifts move no bit into a kept position).
      const __m256i r0 = _mm256_or_si256(_mm256_and_si256(qa, low4),
                                         _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45));
      const __m256i r1 = _mm256_or_si256(_mm256_and_si256(qb, low4),
                                         _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45));
      const __m256i r2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qa, 4), low4),
                                         _mm256_and_si256(qh, bits45));
      const __m256i r3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qb, 4), low4),
                                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45));
      const __m256i lo01 = _mm256_unpacklo_epi32(r0, r1), hi01 = _mm256_unpackhi_epi32(r0, r1);
      const __m256i lo23 = _mm256_unpacklo_epi32(r2, r3), hi23 = _mm256_unpackhi_epi32(r2, r3);
      const __m256i quads[4] = {
          _mm256_unpacklo_epi64(lo01, lo23), _mm256_unpackhi_epi64(lo01, lo23),
          _mm256_unpacklo_epi64(hi01, hi23), _mm256_unpackhi_epi64(hi01, hi23)};
      const __m256i* start = reinterpret_cast<const __m256i*>(half + kHalfDigitBytes);
      __m256i sum[kDigits];
      for (int k = 0; k < kDigits; ++k) {
        const __m256i* digit = reinterpret_cast<const __m256i*>(digits + 32 * k);  // quad 0
        // Quad q's vector is digit[4 q] (32 * 4 bytes apart).
        const __m256i w01 =
            _mm256_add_epi16(_mm256_maddubs_epi16(quads[0], _mm256_load_si256(digit)),
                             _mm256_maddubs_epi16(quads[1], _mm256_load_si256(digit + 4)));
        const __m256i w23 =
            _mm256_add_epi16(_mm256_maddubs_epi16(quads[2], _mm256_load_si256(digit + 8)),
                             _mm256_maddubs_epi16(quads[3], _mm256_load_si256(digit + 12)));
        sum[k] = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(w01, ones), _mm256_madd_epi16(w23, ones)),
            _mm256_load_si256(start + k));
      }
      const __m128i sc8 =
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sb + kScalesOffset + 8 * h));
      const __m256 sc = _mm256_cvtepi32_ps(
          _mm256_permutevar8x32_epi32(_mm256_cvtepi8_epi32(sc8), scale_order));
      const __m256 scale =
          _mm256_load_ps(reinterpret_cast<const float*>(half + kHalfDigitBytes + kHalfStartBytes));
      acc[h] = _mm256_fmadd_ps(CombineDigitsAvx2(sum),
                               _mm256_mul_ps(_mm256_mul_ps(d, sc), scale), acc[h]);
    }
  }
  return vnni_internal::ReduceTree16Avx2(acc[0], acc[1]);
}

#endif  // __x86_64__

// The digits of x for `cols` columns with the scalar or the AVX2 digit
// kernel, rearranged; returns the per-half arrays.
const uint8_t* Q6_KDigits(const float* x, size_t cols, bool avx2) {
  uint8_t* x16;
  size_t padded_cols;
  uint8_t* lanes = Q6_KScratch(cols, &x16, &padded_cols);
  const float* xs = x;
  if (padded_cols != cols) {
    vnni_internal::PadActivations(x, cols, padded_cols, reinterpret_cast<float*>(x16));
    xs = reinterpret_cast<const float*>(x16);
  }
  const ActivationDigitsView a =
      vnni_internal::DigitsAt(x16 + padded_cols * sizeof(float), padded_cols, 1, 0);
#if defined(__x86_64__)
  if (avx2) {
    vnni_internal::ActivationDigitsAvx2(xs, padded_cols, a);
  } else {
    ActivationDigitsScalar(xs, padded_cols, a);
  }
#else
  (void)avx2;
  ActivationDigitsScalar(xs, padded_cols, a);
#endif
  Q6_KLanes(a, cols / kSuperBlockSize, lanes);
  return lanes;
}

}  // namespace

void LinearQ6_KAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
#if defined(__x86_64__)
  HWY_ASSERT(vnni_internal::Avx2Available());
  if (row_begin == row_end) return;
  const uint8_t* lanes = Q6_KDigits(x, cols, /*avx2=*/true);
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t superblocks = cols / kSuperBlockSize;
  const size_t row_bytes = superblocks * kQ6_KBlockBytes;
  for (size_t r = row_begin; r < row_end; ++r) {
    y[r] = RowQ6_KAvx2(base + r * row_bytes, superblocks, lanes);
  }
#else
  (void)w, (void)x, (void)y, (void)cols, (void)row_begin, (void)row_end;
  HWY_ABORT("LinearQ6_KAvx2: no AVX2 on this build");
#endif
}

void LinearQ6_KDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                            size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
  if (row_begin == row_end) return;
  const uint8_t* lanes = Q6_KDigits(x, cols, /*avx2=*/false);
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t superblocks = cols / kSuperBlockSize;
  const size_t row_bytes = superblocks * kQ6_KBlockBytes;
  for (size_t r = row_begin; r < row_end; ++r) {
    y[r] = RowQ6_KDigitsScalar(base + r * row_bytes, superblocks, lanes);
  }
}

}  // namespace ops
}  // namespace cortiq
