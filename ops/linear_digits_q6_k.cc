// LinearQ6_KVnni, LinearQ6_KAvx2 and their scalar twin LinearQ6_KDigitsScalar
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
// j = 8 h + 2 t + s: no shuffle across 128-bit halves. The AVX2 kernel takes
// a half per 256-bit vector; the VNNI kernel both halves per 512-bit vector
// (half h in 256-bit half h, lane 8 h + L), which the same unpacks give.
//
// Products. Per lane and digit k, S_k = sum_c q_c a_kc - 32 sum_c a_kc over
// the lane's 16 columns (q_c in [0, 63]; the second term, precomputed per
// token, is the quants' bias), exact in 32 bits (|S_k| < 2^18): with VNNI,
// vpdpbusd of the unsigned quants by the signed digits, four per digit; with
// AVX2, vpmaddubsw pairs are at most 2 * 63 * 128 = 16128, so two of them
// share a 16-bit word before vpmaddwd widens it. Then in f32, per lane,
// t = CombineDigits(S)
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

// Per-token arrays, per super-block b, with the halves h side by side so
// that one 512-bit load takes both: the digits [quad][k][h][32] (lane
// 8 h + L: 4 bytes = columns 4 quad .. 4 quad + 3 of its sub-block), the
// start values -32 * (sum of the lane's 16 digits a_k) [k][h][8], the lane's
// activation block scale 2^(e - 29) [h][8].
constexpr size_t kDigitBytes = 4 * kDigits * 64;                              // 1024
constexpr size_t kStartBytes = kDigits * 16 * 4;                              // 256
constexpr size_t kScaleBytes = 16 * sizeof(float);                            // 64
constexpr size_t kSuperBlockLaneBytes = kDigitBytes + kStartBytes + kScaleBytes;  // 1344

// Byte offsets in a super-block's arrays: digit k of quad `quad` of half h
// (32 bytes), start values of digit k of half h (8 int32), scales of half h
// (8 f32).
constexpr size_t DigitOffset(size_t quad, size_t k, size_t h) {
  return 64 * (kDigits * quad + k) + 32 * h;
}
constexpr size_t StartOffset(size_t k, size_t h) { return kDigitBytes + 64 * k + 32 * h; }
constexpr size_t ScaleOffset(size_t h) { return kDigitBytes + kStartBytes + 32 * h; }

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
// multiple of 512) into this file's per-super-block arrays for `superblocks`
// super-blocks; 4-byte copies and integer sums, the same bytes on every path.
void Q6_KLanes(const ActivationDigitsView& a, size_t superblocks, uint8_t* out) {
  for (size_t b = 0; b < superblocks; ++b) {
    uint8_t* lanes = out + b * kSuperBlockLaneBytes;
    for (size_t h = 0; h < 2; ++h) {
      int32_t* start[kDigits];
      for (int k = 0; k < kDigits; ++k) {
        start[k] = reinterpret_cast<int32_t*>(lanes + StartOffset(k, h));
      }
      float* scale = reinterpret_cast<float*>(lanes + ScaleOffset(h));
      for (size_t L = 0; L < 8; ++L) {
        const size_t first = kSuperBlockSize * b + 16 * LaneSubBlock(h, L);
        const size_t s = first / kGroup, block = (first % kGroup) / 32;
        int32_t sums[kDigits] = {};
        for (size_t quad = 0; quad < 4; ++quad) {
          const size_t v = (first % 32) / 4 + quad;
          for (int k = 0; k < kDigits; ++k) {
            const int8_t* src = a.digits + s * kGroupDigitBytes + 64 * (4 * v + k) + 4 * block;
            memcpy(lanes + DigitOffset(quad, k, h) + 4 * L, src, 4);
            sums[k] += src[0] + src[1] + src[2] + src[3];
          }
        }
        for (int k = 0; k < kDigits; ++k) start[k][L] = -kBias * sums[k];
        scale[L] = a.scale[s * kGroupBlocks + block];
      }
    }
  }
}

// One row, scalar, from the per-super-block arrays.
float RowQ6_KDigitsScalar(const uint8_t* row, size_t superblocks, const uint8_t* lanes) {
  float acc[16] = {};
  for (size_t b = 0; b < superblocks; ++b) {
    const uint8_t* sb = row + b * kQ6_KBlockBytes;
    const uint8_t* sb_lanes = lanes + b * kSuperBlockLaneBytes;
    uint16_t d_bits;
    memcpy(&d_bits, sb + kDOffset, 2);
    const float d = F16BitsToF32(d_bits);
    for (size_t h = 0; h < 2; ++h) {
      const float* scale = reinterpret_cast<const float*>(sb_lanes + ScaleOffset(h));
      for (size_t L = 0; L < 8; ++L) {
        const size_t j = LaneSubBlock(h, L);
        int32_t sum[kDigits];
        for (int k = 0; k < kDigits; ++k) {
          memcpy(&sum[k], sb_lanes + StartOffset(k, h) + 4 * L, 4);
          for (size_t quad = 0; quad < 4; ++quad) {
            const int8_t* digits =
                reinterpret_cast<const int8_t*>(sb_lanes + DigitOffset(quad, k, h) + 4 * L);
            for (size_t c = 0; c < 4; ++c) {
              sum[k] += Quant6(sb, 16 * j + 4 * quad + c) * digits[c];
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
// digits, then the per-super-block arrays (returned; *x16 the former).
uint8_t* Q6_KScratch(size_t cols, uint8_t** x16, size_t* padded_cols) {
  *padded_cols = (cols + kGroup - 1) / kGroup * kGroup;
  const size_t x16_bytes =
      *padded_cols * sizeof(float) + vnni_internal::DigitsBytes(*padded_cols, 1);
  const size_t x16_aligned = (x16_bytes + 63) / 64 * 64;
  uint8_t* scratch =
      vnni_internal::ThreadScratch(x16_aligned + cols / kSuperBlockSize * kSuperBlockLaneBytes);
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

// Prefetches the super-block's bytes kPrefetchBytes ahead.
inline void PrefetchSuperBlock(const uint8_t* sb) {
  vnni_internal::PrefetchLines</*kToL2=*/false>(
      vnni_internal::PrefetchAddress(sb, vnni_internal::kPrefetchBytes), kQ6_KBlockBytes + 64);
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
    const uint8_t* sb_lanes = lanes + b * kSuperBlockLaneBytes;
    PrefetchSuperBlock(sb);
    uint16_t d_bits;
    memcpy(&d_bits, sb + kDOffset, 2);
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(d_bits));
    for (int h = 0; h < 2; ++h) {
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
      __m256i sum[kDigits];
      for (int k = 0; k < kDigits; ++k) {
        __m256i digit[4];
        for (size_t quad = 0; quad < 4; ++quad) {
          digit[quad] = _mm256_load_si256(
              reinterpret_cast<const __m256i*>(sb_lanes + DigitOffset(quad, k, h)));
        }
        const __m256i w01 = _mm256_add_epi16(_mm256_maddubs_epi16(quads[0], digit[0]),
                                             _mm256_maddubs_epi16(quads[1], digit[1]));
        const __m256i w23 = _mm256_add_epi16(_mm256_maddubs_epi16(quads[2], digit[2]),
                                             _mm256_maddubs_epi16(quads[3], digit[3]));
        sum[k] = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(w01, ones), _mm256_madd_epi16(w23, ones)),
            _mm256_load_si256(reinterpret_cast<const __m256i*>(sb_lanes + StartOffset(k, h))));
      }
      const __m128i sc8 =
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sb + kScalesOffset + 8 * h));
      const __m256 sc = _mm256_cvtepi32_ps(
          _mm256_permutevar8x32_epi32(_mm256_cvtepi8_epi32(sc8), scale_order));
      const __m256 scale = _mm256_load_ps(reinterpret_cast<const float*>(sb_lanes + ScaleOffset(h)));
      acc[h] = _mm256_fmadd_ps(CombineDigitsAvx2(sum),
                               _mm256_mul_ps(_mm256_mul_ps(d, sc), scale), acc[h]);
    }
  }
  return vnni_internal::ReduceTree16Avx2(acc[0], acc[1]);
}

// CombineDigits lane-wise, 16 lanes.
CORTIQ_VNNI_TARGET inline __m512 CombineDigitsVnni(const __m512i (&s)[kDigits]) {
  const __m512i u = _mm512_add_epi32(s[0], _mm512_slli_epi32(s[1], 8));
  const __m512i v = _mm512_add_epi32(s[2], _mm512_slli_epi32(s[3], 8));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(65536.0f), _mm512_cvtepi32_ps(u));
}

// The 32 bytes at p and the 32 at p + 64, as 256-bit halves 0 and 1.
CORTIQ_VNNI_TARGET inline __m512i LoadHalves(const uint8_t* p) {
  return _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))),
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64)), 1);
}

// The four quad vectors of a super-block: lane 8 h + L of quads[quad] holds
// quants [4 quad, 4 quad + 4) of sub-block 8 h + 2 (L % 4) + L / 4.
CORTIQ_VNNI_TARGET inline void QuadsQ6_KVnni(const uint8_t* sb, __m512i (&quads)[4]) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i bits45 = _mm512_set1_epi8(0x30);
  const __m512i qa = LoadHalves(sb);
  const __m512i qb = LoadHalves(sb + 32);
  const __m512i qh = _mm512_loadu_si512(sb + kQhOffset);
  const __m512i r0 = _mm512_or_si512(_mm512_and_si512(qa, low4),
                                     _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45));
  const __m512i r1 = _mm512_or_si512(_mm512_and_si512(qb, low4),
                                     _mm512_and_si512(_mm512_slli_epi16(qh, 2), bits45));
  const __m512i r2 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qa, 4), low4),
                                     _mm512_and_si512(qh, bits45));
  const __m512i r3 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qb, 4), low4),
                                     _mm512_and_si512(_mm512_srli_epi16(qh, 2), bits45));
  const __m512i lo01 = _mm512_unpacklo_epi32(r0, r1), hi01 = _mm512_unpackhi_epi32(r0, r1);
  const __m512i lo23 = _mm512_unpacklo_epi32(r2, r3), hi23 = _mm512_unpackhi_epi32(r2, r3);
  quads[0] = _mm512_unpacklo_epi64(lo01, lo23);
  quads[1] = _mm512_unpackhi_epi64(lo01, lo23);
  quads[2] = _mm512_unpacklo_epi64(hi01, hi23);
  quads[3] = _mm512_unpackhi_epi64(hi01, hi23);
}

// Super-blocks [b0, b1) of kRows rows (row_bytes apart) added to acc[0..kRows)
// (16 lanes each) by the digit arithmetic: RowQ6_KAvx2's integer sums
// (vpdpbusd, exact) and f32 operations with both halves of a super-block in
// one 512-bit vector, lane 8 h + L being RowQ6_KAvx2's lane L of acc[h]; the
// same bits. The rows share each digit load. While super-block b0 + i is
// read, the 256 bytes at prefetch + r * row_bytes + i * 210 are prefetched
// for each row r (a hint: any address), into L1, or into L2 with kToL2.
template <int kRows, bool kToL2 = false>
CORTIQ_VNNI_TARGET inline void SpanQ6_KVnni(const uint8_t* row, size_t row_bytes, size_t b0,
                                            size_t b1, const uint8_t* lanes,
                                            const uint8_t* prefetch, __m512 (&acc)[kRows]) {
  // Lane 8 h + 4 s + t takes the scale of sub-block 8 h + 2 t + s.
  const __m512i scale_order =
      _mm512_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  for (size_t b = b0; b < b1; ++b) {
    const uint8_t* sb_lanes = lanes + b * kSuperBlockLaneBytes;
    __m512i quads[kRows][4];
    __m512i sum[kRows][kDigits];
    for (int r = 0; r < kRows; ++r) {
      vnni_internal::PrefetchLines<kToL2>(
          vnni_internal::PrefetchAddress(prefetch, r * row_bytes + (b - b0) * kQ6_KBlockBytes),
          256);
      QuadsQ6_KVnni(row + r * row_bytes + b * kQ6_KBlockBytes, quads[r]);
    }
    for (int k = 0; k < kDigits; ++k) {
      const __m512i start = _mm512_load_si512(sb_lanes + StartOffset(k, 0));
      for (int r = 0; r < kRows; ++r) sum[r][k] = start;
      for (size_t quad = 0; quad < 4; ++quad) {
        const __m512i digit = _mm512_load_si512(sb_lanes + DigitOffset(quad, k, 0));
        for (int r = 0; r < kRows; ++r) {
          sum[r][k] = _mm512_dpbusd_epi32(sum[r][k], quads[r][quad], digit);
        }
      }
    }
    const __m512 scale = _mm512_load_ps(sb_lanes + ScaleOffset(0));
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* sb = row + r * row_bytes + b * kQ6_KBlockBytes;
      uint16_t d_bits;
      memcpy(&d_bits, sb + kDOffset, 2);
      const __m512 d = _mm512_set1_ps(_cvtsh_ss(d_bits));
      const __m512 sc = _mm512_cvtepi32_ps(_mm512_permutexvar_epi32(
          scale_order, _mm512_cvtepi8_epi32(
                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + kScalesOffset)))));
      acc[r] = _mm512_fmadd_ps(CombineDigitsVnni(sum[r]),
                               _mm512_mul_ps(_mm512_mul_ps(d, sc), scale), acc[r]);
    }
  }
}

// Rows from kColumnBlockedMinSuperBlocks super-blocks on (4096 columns: 21
// KiB of per-super-block arrays, which with the weight stream do not stay in
// L1) are taken kRowBlock rows at a time, those rows one column block of at
// most kColumnBlockMaxSuperBlocks super-blocks (10.5 KiB of arrays) at a
// time; each row keeps its 16-lane accumulator across the column blocks and
// adds its super-blocks in column order, so the bits are the same.
constexpr size_t kColumnBlockedMinSuperBlocks = 16;
constexpr size_t kColumnBlockMaxSuperBlocks = 8;

// y[r] for r in [row_begin, row_end) (rows row_bytes apart at base): in
// passes of four rows where DecodePrefetchIntoL2(); otherwise short rows one
// at a time, long rows in column blocks two at a time (sharing each digit
// load; measured faster there and slower on short rows, Zen 5).
CORTIQ_VNNI_TARGET void RowsQ6_KVnni(const uint8_t* base, size_t row_bytes, size_t superblocks,
                                     const uint8_t* lanes, size_t row_begin, size_t row_end,
                                     float* y) {
  // Where DecodePrefetchIntoL2() (Zen 4): four rows per pass, a super-block of
  // each in turn, prefetched into L2 whole passes ahead (four streams, as the
  // Q4_0x16 kernel's, ops/linear_vnni.cc RowRangeVnni); SpanQ6_KVnni
  // per row and super-block, as kRows = 4 would not fit the registers; the < 4
  // rows left one at a time. Session 37, Zen 4 VM, 2 threads, from DRAM,
  // interleaved: 2048 x 2560 22.3-24.9 -> 28.5-31.9 GB/s, 10240 x 2560
  // 21.2-26.1 -> 29.1-33.0, 262144 x 2560 (an LM head) 25.2-26.6 -> 29.8-30.8;
  // 19.0-19.8 -> 20.9-21.2 from cache, one thread.
  const bool into_l2 = DecodePrefetchIntoL2();
  if (into_l2) {
    const size_t ahead = WholePassesAhead(4 * row_bytes, kIntoL2PrefetchMinBytes);
    for (; row_begin + 4 <= row_end; row_begin += 4) {
      const size_t r = row_begin;
      __m512 acc[4][1] = {{_mm512_setzero_ps()}, {_mm512_setzero_ps()}, {_mm512_setzero_ps()},
                          {_mm512_setzero_ps()}};
      for (size_t b = 0; b < superblocks; ++b) {
        for (size_t i = 0; i < 4; ++i) {
          const uint8_t* row = base + (r + i) * row_bytes;
          SpanQ6_KVnni<1, /*kToL2=*/true>(
              row, row_bytes, b, b + 1, lanes,
              vnni_internal::PrefetchAddress(row, b * kQ6_KBlockBytes + ahead), acc[i]);
        }
      }
      for (size_t i = 0; i < 4; ++i) y[r + i] = vnni_internal::ReduceTree16Vnni(acc[i][0]);
    }
  }
  // One row at a time (with into_l2, the 0-3 rows left).
  if (superblocks < kColumnBlockedMinSuperBlocks || into_l2) {
    for (size_t r = row_begin; r < row_end; ++r) {
      const uint8_t* row = base + r * row_bytes;
      __m512 acc[1] = {_mm512_setzero_ps()};
      SpanQ6_KVnni<1>(row, row_bytes, 0, superblocks, lanes,
                      vnni_internal::PrefetchAddress(row, vnni_internal::kPrefetchBytes), acc);
      y[r] = vnni_internal::ReduceTree16Vnni(acc[0]);
    }
    return;
  }
  using vnni_internal::kRowBlock;
  // Equal column blocks of at most kColumnBlockMaxSuperBlocks.
  const size_t blocks =
      (superblocks + kColumnBlockMaxSuperBlocks - 1) / kColumnBlockMaxSuperBlocks;
  const size_t block_size = (superblocks + blocks - 1) / blocks;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowBlock) {
    const size_t r1 = std::min(row_end, r0 + kRowBlock);
    __m512 acc[kRowBlock];
    for (size_t r = r0; r < r1; ++r) acc[r - r0] = _mm512_setzero_ps();
    for (size_t c0 = 0; c0 < superblocks; c0 += block_size) {
      const size_t c1 = std::min(superblocks, c0 + block_size);
      for (size_t r = r0; r < r1; r += 2) {
        const size_t n = std::min<size_t>(2, r1 - r);
        // What this pass reads next: the next pair's span, else the block's
        // first pair in the next column block, else the next row block.
        const uint8_t* next =
            r + n < r1        ? base + (r + n) * row_bytes + c0 * kQ6_KBlockBytes
            : c1 < superblocks ? base + r0 * row_bytes + c1 * kQ6_KBlockBytes
                               : vnni_internal::PrefetchAddress(base, r1 * row_bytes);
        const uint8_t* row = base + r * row_bytes;
        if (n == 2) {
          __m512 pair[2] = {acc[r - r0], acc[r - r0 + 1]};
          SpanQ6_KVnni<2>(row, row_bytes, c0, c1, lanes, next, pair);
          acc[r - r0] = pair[0];
          acc[r - r0 + 1] = pair[1];
        } else {
          __m512 one[1] = {acc[r - r0]};
          SpanQ6_KVnni<1>(row, row_bytes, c0, c1, lanes, next, one);
          acc[r - r0] = one[0];
        }
      }
    }
    for (size_t r = r0; r < r1; ++r) y[r] = vnni_internal::ReduceTree16Vnni(acc[r - r0]);
  }
}

#endif  // __x86_64__

// The digits of x for `cols` columns with the digit kernel of `path` (the
// same bytes on each), rearranged; returns the per-super-block arrays.
const uint8_t* Q6_KDigits(const float* x, size_t cols, DecodeLinearPath path) {
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
  switch (path) {
    case DecodeLinearPath::kVnni:
      vnni_internal::ActivationDigitsVnni(xs, padded_cols, a);
      break;
    case DecodeLinearPath::kAvx2:
      vnni_internal::ActivationDigitsAvx2(xs, padded_cols, a);
      break;
    case DecodeLinearPath::kFloat:
      ActivationDigitsScalar(xs, padded_cols, a);
      break;
  }
#else
  (void)path;
  ActivationDigitsScalar(xs, padded_cols, a);
#endif
  Q6_KLanes(a, cols / kSuperBlockSize, lanes);
  return lanes;
}

}  // namespace

void LinearQ6_KVnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
#if defined(__x86_64__)
  HWY_ASSERT(vnni_internal::VnniAvailable());
  if (row_begin == row_end) return;
  const uint8_t* lanes = Q6_KDigits(x, cols, DecodeLinearPath::kVnni);
  const size_t superblocks = cols / kSuperBlockSize;
  RowsQ6_KVnni(static_cast<const uint8_t*>(w), superblocks * kQ6_KBlockBytes, superblocks, lanes,
               row_begin, row_end, y);
#else
  (void)w, (void)x, (void)y, (void)cols, (void)row_begin, (void)row_end;
  HWY_ABORT("LinearQ6_KVnni: no AVX-512 VNNI on this build");
#endif
}

void LinearQ6_KAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
#if defined(__x86_64__)
  HWY_ASSERT(vnni_internal::Avx2Available());
  if (row_begin == row_end) return;
  const uint8_t* lanes = Q6_KDigits(x, cols, DecodeLinearPath::kAvx2);
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
  const uint8_t* lanes = Q6_KDigits(x, cols, DecodeLinearPath::kFloat);
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t superblocks = cols / kSuperBlockSize;
  const size_t row_bytes = superblocks * kQ6_KBlockBytes;
  for (size_t r = row_begin; r < row_end; ++r) {
    y[r] = RowQ6_KDigitsScalar(base + r * row_bytes, superblocks, lanes);
  }
}

}  // namespace ops
}  // namespace cortiq
