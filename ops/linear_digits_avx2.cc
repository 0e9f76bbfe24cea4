// The Q4_0x16, Q4_Kx16 and Q5_Kx16 decode products in exact integer digits
// with AVX2 (LinearQ4_0x16Avx2, LinearQ4_Kx16Avx2, LinearQ5_Kx16Avx2;
// ops/linear_vnni.h): the arithmetic of the VNNI kernels and of their scalar
// twins, for CPUs without AVX-512 VNNI. The layouts have the same quant bytes
// (nibbles, one block per 32-bit lane); they differ in the group size, Q4_0's
// offset term, the K formats' f32 steps and Q5_Kx16's fifth bits (quants in
// [0, 31]: a pair of products is at most 7936, so its 16-bit words are widened
// every 2 parts, 4 pairs, instead of every 4).
//
// Why: on AVX2 the f32 kernel (ops/linear_q4_0x16-inl.h) spends a mask, an
// or, a subtraction and an FMA on every 8 weights and stays compute-bound
// well below the read bandwidth (Zen 2: ~7.5 GB/s per thread from L3 against
// ~14 from DRAM). vpmaddubsw multiplies 32 unsigned nibbles by 32 signed
// digits and adds pairs into 16-bit words: per digit one instruction covers
// 32 weights, so 32 weights cost four of them (on Zen 2's one multiply pipe)
// against the f32 kernel's ~17 instructions (mask, or, subtract, FMA per 8).
//
// Exactness of the 16-bit words: a pair of products is at most
// 2 * 15 * 128 = 3840 in magnitude (nibbles in [0, 15], digits in
// [-128, 127]), so vpmaddubsw never saturates, and the 8 pairs a word
// accumulates over a group (4 parts, low and high nibbles) stay below
// 8 * 3840 = 30720 < 2^15. vpmaddwd by ones then adds a 32-bit lane's two
// words: the lane's block digit sum, exactly the VNNI kernel's S_k. The f32
// steps (ops/linear_vnni.h) are the same operations in the same order, so
// every implementation gives the same bits.
//
// Dispatch by hand (CORTIQ_AVX2_TARGET), as ops/linear_vnni.cc: called only
// where Highway reports its AVX2 target (AVX2, FMA, F16C, BMI2).
#include <string.h>

#include <algorithm>

#include <cstdint>

#include "hwy/base.h"
#include "hwy/targets.h"
#include "ops/linear_vnni.h"
#include "ops/linear_vnni_internal.h"
#include "ops/quantize.h"  // F16BitsToF32
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"

namespace cortiq {
namespace ops {
namespace vnni_internal {

bool Avx2Available() {
#if defined(__x86_64__)
  static const bool available = (hwy::SupportedTargets() & HWY_AVX2) != 0;
  return available;
#else
  return false;
#endif
}

#if defined(__x86_64__)

namespace {

// 2^p as an f32 for -126 <= p <= 127.
inline float PowerOfTwo(int p) {
  const uint32_t bits = static_cast<uint32_t>(127 + p) << 23;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

CORTIQ_AVX2_TARGET inline int32_t SumLanes(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}

// The f32 combine of 8 lanes' digit sums (AddGroup of ops/linear_vnni.cc on
// half the lanes): Horner in 256, times the blocks' scales d * 2^(e - 29),
// added to acc.
CORTIQ_AVX2_TARGET inline __m256 AddGroupHalf(const __m256i (&sum)[kDigits], const uint8_t* d,
                                              const float* scale, __m256 acc) {
  __m256 t = _mm256_cvtepi32_ps(sum[3]);
  for (int k = 2; k >= 0; --k) {
    t = _mm256_fmadd_ps(t, _mm256_set1_ps(256.0f), _mm256_cvtepi32_ps(sum[k]));
  }
  const __m256 df = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
  return _mm256_fmadd_ps(t, _mm256_mul_ps(df, _mm256_loadu_ps(scale)), acc);
}

// AddGroupHalf for Q4_Kx16 (ops/linear_vnni.cc AddGroupMins on half h of the
// lanes: sub-blocks 8 h .. 8 h + 7, all of super-block h): t = CombineDigits
// of the sums, acc + t * ((d sc_j) * 2^(e - 29)), then minus (dmin m_j) * T_j
// in one rounding. sc_j and m_j are read as 6-bit values, as every path does.
template <size_t kSuperScales>
CORTIQ_AVX2_TARGET inline __m256 AddGroupMinsHalf(const __m256i (&s)[kDigits], const uint8_t* g,
                                                  int h, const float* scale, const float* totals,
                                                  __m256 acc) {
  const __m256i u = _mm256_add_epi32(s[0], _mm256_slli_epi32(s[1], 8));
  const __m256i v = _mm256_add_epi32(s[2], _mm256_slli_epi32(s[3], 8));
  const __m256 t =
      _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(65536.0f), _mm256_cvtepi32_ps(u));
  uint16_t d_bits, dmin_bits;
  memcpy(&d_bits, g + kSuperScales + 4 * h, 2);
  memcpy(&dmin_bits, g + kSuperScales + 4 * h + 2, 2);
  const __m256 d = _mm256_set1_ps(F16BitsToF32(d_bits));
  const __m256 dmin = _mm256_set1_ps(F16BitsToF32(dmin_bits));
  const __m256i six_bits = _mm256_set1_epi32(63);
  const __m256 sc = _mm256_cvtepi32_ps(_mm256_and_si256(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 8 * h))),
      six_bits));
  const __m256 m = _mm256_cvtepi32_ps(_mm256_and_si256(
      _mm256_cvtepu8_epi32(
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + kQ4_Kx16Mins + 8 * h))),
      six_bits));
  acc = _mm256_fmadd_ps(t, _mm256_mul_ps(_mm256_mul_ps(d, sc), _mm256_loadu_ps(scale)), acc);
  return _mm256_fnmadd_ps(_mm256_mul_ps(dmin, m), _mm256_loadu_ps(totals), acc);
}

// Bytes per group and offset of d / dmin of the layouts (kMins: Q4_Kx16, with
// kHighBits Q5_Kx16).
template <bool kMins, bool kHighBits>
constexpr size_t GroupBytes() {
  return kHighBits ? kQ5_Kx16BlockBytes : kMins ? kQ4_Kx16BlockBytes : kQ4_0x16BlockBytes;
}
template <bool kHighBits>
constexpr size_t SuperScales() {
  return kHighBits ? kQ5_Kx16SuperScales : kQ4_Kx16SuperScales;
}

// 16 in each of the 32 bytes whose bit is set in `bits` (byte i: bit i), else 0.
CORTIQ_AVX2_TARGET inline __m256i SixteensOfBits(uint32_t bits) {
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3,
                       3, 3, 3, 3, 3, 3, 3));
  const __m256i select = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select);
  return _mm256_and_si256(set, _mm256_set1_epi8(16));
}

// Groups [s_begin, s_end) of kRows Q4_0x16 rows (row_bytes apart) by the
// digit arithmetic, added to acc[r][0..1] (each row's 16 lanes as two halves
// of 8: blocks 0..7 and 8..15 of each group). Per group and half, one 16-bit
// accumulator per digit over the 4 parts' low and high nibbles (Q5_Kx16: over
// 2 parts at a time), widened to the 32-bit digit sums and started from the
// offset term (Q4_0x16); each row adds
// its groups in column order, so its sums are the same whatever the grouping
// of rows and columns. The rows share each load of the digits.
//
// Prefetch as SpanVnni (ops/linear_vnni.cc): with `next` null, each row
// kPrefetchBytes ahead of its reads; otherwise group i of the span prefetches
// lines [i * next_lines, (i + 1) * next_lines) of each of the kRows rows at
// `next`. kMins: Q4_Kx16 rows instead (no offset term; AddGroupMinsHalf, with
// `offsets` holding each block's f32 total T, bit-cast); kHighBits (with
// kMins): Q5_Kx16 rows.
template <int kRows, bool kMins = false, bool kHighBits = false>
CORTIQ_AVX2_TARGET void SpanQ4_0x16Avx2(const uint8_t* row, size_t row_bytes, size_t s_begin,
                                        size_t s_end, const ActivationDigitsView& a,
                                        const int32_t* offsets, __m256 (&acc)[kRows][2],
                                        const uint8_t* next, size_t next_lines) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t s = s_begin; s < s_end; ++s) {
    const uint8_t* g[kRows];
    for (int r = 0; r < kRows; ++r) g[r] = row + r * row_bytes + s * GroupBytes<kMins, kHighBits>();
    if (next == nullptr) {
      for (int r = 0; r < kRows; ++r) {
        PrefetchLines</*kToL2=*/false>(PrefetchAddress(g[r], kPrefetchBytes),
                                       GroupBytes<kMins, kHighBits>() + 64);
      }
    } else {
      const size_t first = (s - s_begin) * next_lines;
      for (int r = 0; r < kRows; ++r) {
        for (size_t line = first; line < first + next_lines; ++line) {
          _mm_prefetch(reinterpret_cast<const char*>(next) + r * row_bytes + 64 * line,
                       _MM_HINT_T0);
        }
      }
    }
    const int8_t* digits = a.digits + s * kGroupDigitBytes;
    // Parts whose 16-bit words are summed before widening (no overflow, above).
    constexpr int kWordParts = kHighBits ? 2 : 4;
    for (int h = 0; h < 2; ++h) {
      __m256i words[kRows][kDigits], wide[kRows][kDigits];
      for (int z = 0; z < 4; ++z) {
        __m256i low[kRows], high[kRows];
        for (int r = 0; r < kRows; ++r) {
          const __m256i q =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g[r] + 32 + 64 * z + 32 * h));
          low[r] = _mm256_and_si256(q, nibble);
          high[r] = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
          if constexpr (kHighBits) {
            // Bits 32 h .. 32 h + 31 of the part's masks: this half's 32 bytes.
            uint32_t first, second;
            memcpy(&first, g[r] + kQ5_Kx16HighBits + 16 * z + 4 * h, 4);
            memcpy(&second, g[r] + kQ5_Kx16HighBits + 16 * z + 8 + 4 * h, 4);
            low[r] = _mm256_add_epi8(low[r], SixteensOfBits(first));
            high[r] = _mm256_add_epi8(high[r], SixteensOfBits(second));
          }
        }
        for (int k = 0; k < kDigits; ++k) {
          const __m256i d_low = _mm256_load_si256(
              reinterpret_cast<const __m256i*>(digits + 64 * (4 * z + k) + 32 * h));
          const __m256i d_high = _mm256_load_si256(
              reinterpret_cast<const __m256i*>(digits + 64 * (4 * (4 + z) + k) + 32 * h));
          for (int r = 0; r < kRows; ++r) {
            const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(low[r], d_low),
                                                   _mm256_maddubs_epi16(high[r], d_high));
            words[r][k] = z % kWordParts == 0 ? pairs : _mm256_add_epi16(words[r][k], pairs);
            if (z % kWordParts == kWordParts - 1) {
              const __m256i widened = _mm256_madd_epi16(words[r][k], ones);
              wide[r][k] = z < kWordParts ? widened : _mm256_add_epi32(wide[r][k], widened);
            }
          }
        }
      }
      for (int r = 0; r < kRows; ++r) {
        __m256i sum[kDigits];
        for (int k = 0; k < kDigits; ++k) {
          sum[k] = wide[r][k];
          if constexpr (!kMins) {
            sum[k] = _mm256_add_epi32(sum[k], _mm256_load_si256(reinterpret_cast<const __m256i*>(
                                                  offsets + s * 64 + 16 * k + 8 * h)));
          }
        }
        if constexpr (kMins) {
          acc[r][h] = AddGroupMinsHalf<SuperScales<kHighBits>()>(
              sum, g[r], h, a.scale + s * kGroupBlocks + 8 * h,
              reinterpret_cast<const float*>(offsets) + s * kGroupBlocks + 8 * h, acc[r][h]);
        } else {
          acc[r][h] =
              AddGroupHalf(sum, g[r] + 16 * h, a.scale + s * kGroupBlocks + 8 * h, acc[r][h]);
        }
      }
    }
  }
}

// kRows whole rows (SpanQ4_0x16Avx2 over every group), reduced to y[0..kRows).
template <int kRows, bool kMins, bool kHighBits>
CORTIQ_AVX2_TARGET void RowsQ4_0x16Avx2(const uint8_t* row, size_t row_bytes, size_t groups,
                                        const ActivationDigitsView& a, const int32_t* offsets,
                                        float* y) {
  __m256 acc[kRows][2];
  for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  SpanQ4_0x16Avx2<kRows, kMins, kHighBits>(row, row_bytes, 0, groups, a, offsets, acc, nullptr,
                                           0);
  for (int r = 0; r < kRows; ++r) y[r] = ReduceTree16Avx2(acc[r][0], acc[r][1]);
}

// ColumnBlockedRowsVnni's order and prefetch with SpanQ4_0x16Avx2<2>: an even
// number of rows [row_begin, row_end), each row's accumulators kept across the
// column blocks (the same bits as RowsQ4_0x16Avx2).
template <bool kMins, bool kHighBits>
CORTIQ_AVX2_TARGET void ColumnBlockedRowsQ4_0x16Avx2(const uint8_t* base, size_t row_bytes,
                                                     size_t groups, const ActivationDigitsView& a,
                                                     const int32_t* offsets, size_t row_begin,
                                                     size_t row_end, float* y) {
  const size_t blocks = (groups + kColumnBlockMaxGroups - 1) / kColumnBlockMaxGroups;
  const size_t block_groups = (groups + blocks - 1) / blocks;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowBlock) {
    const size_t r1 = std::min(row_end, r0 + kRowBlock);
    __m256 acc[kRowBlock / 2][2][2];
    for (size_t p = 0; p < (r1 - r0) / 2; ++p) {
      for (auto& row_acc : acc[p]) row_acc[0] = row_acc[1] = _mm256_setzero_ps();
    }
    for (size_t c0 = 0; c0 < groups; c0 += block_groups) {
      const size_t c1 = std::min(groups, c0 + block_groups);
      for (size_t r = r0; r < r1; r += 2) {
        const NextPairReads after = NextPair(base, row_bytes, GroupBytes<kMins, kHighBits>(), groups,
                                             block_groups, r, r0, r1, c0, c1);
        SpanQ4_0x16Avx2<2, kMins, kHighBits>(base + r * row_bytes, row_bytes, c0, c1, a, offsets,
                           acc[(r - r0) / 2], after.next, after.lines);
      }
    }
    for (size_t r = r0; r < r1; r += 2) {
      y[r] = ReduceTree16Avx2(acc[(r - r0) / 2][0][0], acc[(r - r0) / 2][0][1]);
      y[r + 1] = ReduceTree16Avx2(acc[(r - r0) / 2][1][0], acc[(r - r0) / 2][1][1]);
    }
  }
}

}  // namespace

// ActivationDigitsScalar with AVX2, one 32-column block at a time: its
// maximum and exponent in scalar, then 8 columns per vector, the four digits
// of each column split as the VNNI version does and packed to bytes by
// vpackssdw / vpacksswb (no saturation: every digit fits an int8), which
// leaves in each 128-bit half the 4 columns of one digit vector v per digit.
CORTIQ_AVX2_TARGET void ActivationDigitsAvx2(const float* x, size_t cols,
                                             const ActivationDigitsView& out) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256i exponent_field = _mm256_set1_epi32(0x7F800000);
  for (size_t s = 0; s < cols / kGroup; ++s) {
    int8_t* digits = out.digits + s * kGroupDigitBytes;
    for (size_t j = 0; j < kGroupBlocks; ++j) {
      const float* xb = x + s * kGroup + 32 * j;
      __m256 v[4];
      __m256i max_bits = _mm256_setzero_si256();
      __m256i non_finite = _mm256_setzero_si256();
      for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(xb + 8 * i);
        const __m256i bits = _mm256_castps_si256(_mm256_and_ps(v[i], magnitude));
        // |x| as integers orders as the floats (NaN aside, which non_finite catches).
        max_bits = _mm256_max_epi32(max_bits, bits);
        non_finite = _mm256_or_si256(
            non_finite,
            _mm256_cmpeq_epi32(_mm256_and_si256(bits, exponent_field), exponent_field));
      }
      const bool finite = _mm256_testz_si256(non_finite, non_finite);
      __m128i m = _mm_max_epi32(_mm256_castsi256_si128(max_bits),
                                _mm256_extracti128_si256(max_bits, 1));
      m = _mm_max_epi32(m, _mm_unpackhi_epi64(m, m));
      m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 1));
      // floor(log2 max) from the biased exponent; zero and subnormal maxima
      // (biased 0) fall below kMinExponent and are clamped as in the scalar.
      const int biased = _mm_cvtsi128_si32(m) >> 23;
      const int e = biased - 127 > kMinExponent ? biased - 127 : kMinExponent;
      out.scale[s * kGroupBlocks + j] =
          finite ? PowerOfTwo(e - kMantissaExponent) : __builtin_nanf("");
      const __m256 shift = _mm256_set1_ps(finite ? PowerOfTwo(kMantissaExponent - e) : 0.0f);
      __m256i sums[kDigits];
      for (int k = 0; k < kDigits; ++k) sums[k] = _mm256_setzero_si256();
      for (int i = 0; i < 4; ++i) {
        // Exact scaling (a power of two), round to nearest even; 0 for a
        // non-finite block, as the scalar.
        __m256i X = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], shift));
        if (!finite) X = _mm256_setzero_si256();
        __m256i d[kDigits];
        for (int k = 0; k < kDigits - 1; ++k) {
          d[k] = _mm256_srai_epi32(_mm256_slli_epi32(X, 24), 24);
          X = _mm256_srai_epi32(_mm256_sub_epi32(X, d[k]), 8);
        }
        d[kDigits - 1] = X;
        for (int k = 0; k < kDigits; ++k) sums[k] = _mm256_add_epi32(sums[k], d[k]);
        const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(d[0], d[1]),
                                                  _mm256_packs_epi32(d[2], d[3]));
        alignas(32) int32_t words[8];  // [half][k]: 4 columns of digit k
        _mm256_store_si256(reinterpret_cast<__m256i*>(words), packed);
        for (int half = 0; half < 2; ++half) {
          const size_t vec = 2 * i + half;  // columns 4 vec .. 4 vec + 3
          for (int k = 0; k < kDigits; ++k) {
            memcpy(digits + 64 * (4 * vec + k) + 4 * j, &words[4 * half + k], 4);
          }
        }
      }
      for (int k = 0; k < kDigits; ++k) {
        out.sums[s * 64 + 16 * k + j] = SumLanes(sums[k]);
      }
    }
  }
}

namespace {

template <bool kMins, bool kHighBits = false>
CORTIQ_AVX2_TARGET void RowRangeAvx2(const uint8_t* base, size_t row_bytes, size_t groups,
                                     const ActivationDigitsView& a, const int32_t* offsets,
                                     size_t row_begin, size_t row_end, float* y) {
  size_t r = row_begin;
  if (groups >= kColumnBlockedMinGroups) {
    r = row_begin + (row_end - row_begin) / 2 * 2;
    ColumnBlockedRowsQ4_0x16Avx2<kMins, kHighBits>(base, row_bytes, groups, a, offsets, row_begin, r, y);
  }
  for (; r + 2 <= row_end; r += 2) {
    RowsQ4_0x16Avx2<2, kMins, kHighBits>(base + r * row_bytes, row_bytes, groups, a, offsets, y + r);
  }
  for (; r < row_end; ++r) {
    RowsQ4_0x16Avx2<1, kMins, kHighBits>(base + r * row_bytes, row_bytes, groups, a, offsets, y + r);
  }
}

}  // namespace

CORTIQ_AVX2_TARGET void RowRangeQ4_0x16Avx2(const uint8_t* base, size_t row_bytes, size_t groups,
                                            const ActivationDigitsView& a, const int32_t* offsets,
                                            size_t row_begin, size_t row_end, float* y) {
  RowRangeAvx2<false>(base, row_bytes, groups, a, offsets, row_begin, row_end, y);
}
CORTIQ_AVX2_TARGET void RowRangeQ4_Kx16Avx2(const uint8_t* base, size_t row_bytes, size_t groups,
                                            const ActivationDigitsView& a, const int32_t* totals,
                                            size_t row_begin, size_t row_end, float* y) {
  RowRangeAvx2<true>(base, row_bytes, groups, a, totals, row_begin, row_end, y);
}
CORTIQ_AVX2_TARGET void RowRangeQ5_Kx16Avx2(const uint8_t* base, size_t row_bytes, size_t groups,
                                            const ActivationDigitsView& a, const int32_t* totals,
                                            size_t row_begin, size_t row_end, float* y) {
  RowRangeAvx2<true, true>(base, row_bytes, groups, a, totals, row_begin, row_end, y);
}
#endif  // __x86_64__

}  // namespace vnni_internal
}  // namespace ops
}  // namespace cortiq
