// LinearQ4_0x16Vnni, LinearQ8_0x16Vnni, LinearQ4_Kx16Vnni, LinearQ5_Kx16Vnni, their LinearRows
// and their scalar twins (ops/linear_vnni.h); the dispatch of the regrouped formats to the
// integer kernels (DispatchedDecodeLinearPath, LinearQ4_0x16Digits, ...) and
// the per-token orchestration that LinearQ4_0x16Avx2 shares
// (ops/linear_digits_avx2.cc holds its kernels).
//
// Dispatch by hand, not Highway, as ops/matmul_q8_activations.cc: Highway
// 1.0.3 (Debian 12) has no VNNI target that is on by default. The VNNI
// functions carry their own target attribute and are only called when the
// CPU reports AVX-512 F/BW/VL/DQ/VNNI; the AVX2 ones when Highway reports its
// AVX2 target.
#include "ops/linear_vnni.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "hwy/base.h"
#include "ops/cpu_features.h"
#include "ops/quantize.h"  // F16BitsToF32
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"
#include "ops/quantize_q8_0x16.h"
#include "ops/linear_vnni_internal.h"


namespace cortiq {
namespace ops {
namespace vnni_internal {

// The layouts: bytes per 512-weight group, where its quants start, the
// offset the unsigned quants carry (Q4_0: the nibble = q + 8; Q8_0: the int8
// xor 0x80 = q + 128; Q4_K: none, its min term is separate), and whether a
// 64-byte part holds two digit vectors' quants in its nibbles.
struct Q4_0x16Layout {
  static constexpr size_t kGroupBytes = kQ4_0x16BlockBytes;  // 288
  static constexpr size_t kQuants = 32;
  static constexpr int32_t kOffset = 8;
  static constexpr bool kNibbles = true;
  static constexpr bool kMins = false;
  static constexpr bool kHighBits = false;
  // The unsigned quant of column c (< 32) of block j in group g.
  static int32_t Quant(const uint8_t* g, size_t j, size_t c) {
    const uint8_t byte = g[32 + 64 * ((c % 16) / 4) + 4 * j + c % 4];
    return c < 16 ? (byte & 15) : (byte >> 4);
  }
};
struct Q8_0x16Layout {
  static constexpr size_t kGroupBytes = kQ8_0x16BlockBytes;  // 544
  static constexpr size_t kQuants = 32;
  static constexpr int32_t kOffset = 128;
  static constexpr bool kNibbles = false;
  static constexpr bool kMins = false;
  static constexpr bool kHighBits = false;
  static int32_t Quant(const uint8_t* g, size_t j, size_t c) {
    return g[32 + 64 * (c / 4) + 4 * j + c % 4] ^ 0x80;
  }
};
// Q4_Kx16 and Q5_Kx16 (ops/quantize_q4_kx16.h, ops/quantize_q5_kx16.h):
// Q4_0x16's quant bytes, sub-block j's scale sc_j and min m_j at bytes j and
// 16 + j, d and dmin of super-block j / 8 at kSuperScales + 4 (j / 8) and + 2;
// Q5_Kx16 (kHighBits) adds 16 to each quant whose bit is set in the 64-bit
// mask of its 64-byte part and nibble half.
template <bool kFifthBit>
struct KX16Layout {
  static constexpr size_t kGroupBytes = kFifthBit ? kQ5_Kx16BlockBytes : kQ4_Kx16BlockBytes;
  static constexpr size_t kQuants = 32;
  static constexpr int32_t kOffset = 0;
  static constexpr bool kNibbles = true;
  static constexpr bool kMins = true;
  static constexpr bool kHighBits = kFifthBit;
  static constexpr size_t kSuperScales = kFifthBit ? kQ5_Kx16SuperScales : kQ4_Kx16SuperScales;
  static_assert(kQ4_Kx16Quants == kQuants && kQ5_Kx16Quants == kQuants &&
                    kQ4_Kx16Mins == 16 && kQ5_Kx16Mins == 16,
                "Q4_Kx16 and Q5_Kx16 share their first 288 bytes' layout");
  static int32_t Quant(const uint8_t* g, size_t j, size_t c) {
    const uint8_t byte = g[kQuants + 64 * ((c % 16) / 4) + 4 * j + c % 4];
    int32_t q = c < 16 ? (byte & 15) : (byte >> 4);
    if constexpr (kFifthBit) {
      const uint8_t* mask = g + kQ5_Kx16HighBits + 16 * ((c % 16) / 4) + 8 * (c / 16);
      const size_t bit = 4 * j + c % 4;
      q += ((mask[bit / 8] >> (bit % 8)) & 1) * 16;
    }
    return q;
  }
  // d * sc_j and dmin * m_j in f32 (exact: an f16 times a 6-bit integer). The bytes are read
  // as 6-bit values by every path (the AVX2 kernels and the prompt's decode mask them too).
  static float DScale(const uint8_t* g, size_t j) {
    uint16_t d;
    memcpy(&d, g + kSuperScales + 4 * (j / 8), 2);
    return F16BitsToF32(d) * static_cast<float>(g[j] & 63);
  }
  static float DMin(const uint8_t* g, size_t j) {
    uint16_t dmin;
    memcpy(&dmin, g + kSuperScales + 4 * (j / 8) + 2, 2);
    return F16BitsToF32(dmin) * static_cast<float>(g[16 + j] & 63);
  }
};
using Q4_Kx16Layout = KX16Layout<false>;
using Q5_Kx16Layout = KX16Layout<true>;

// The f32 sum of block j of group s's activations, T = CombineDigits of its
// digit sums times its scale 2^(e - 29): what a Q4_Kx16 row's min term
// multiplies (computed once per token, and so the same for every kernel).
float BlockTotal(const ActivationDigitsView& a, size_t s, size_t j) {
  int32_t sums[kDigits];
  for (int k = 0; k < kDigits; ++k) sums[k] = a.sums[s * 64 + 16 * k + j];
  return CombineDigits(sums) * a.scale[s * kGroupBlocks + j];
}

// Sum of the 16 lanes in the fixed tree of the header (lane i + 8, + 4, + 2,
// + 1).
float ReduceTree16(const float* a) {
  float s8[8], s4[4], s2[2];
  for (int i = 0; i < 8; ++i) s8[i] = a[i] + a[i + 8];
  for (int i = 0; i < 4; ++i) s4[i] = s8[i] + s8[i + 4];
  for (int i = 0; i < 2; ++i) s2[i] = s4[i] + s4[i + 2];
  return s2[0] + s2[1];
}

// One row by the digit arithmetic, scalar.
template <class Layout>
float RowDigitsScalar(const uint8_t* row, size_t groups, const ActivationDigitsView& a) {
  float acc[kGroupBlocks] = {};
  for (size_t s = 0; s < groups; ++s) {
    const uint8_t* g = row + s * Layout::kGroupBytes;
    const int8_t* digits = a.digits + s * kGroupDigitBytes;
    for (size_t j = 0; j < kGroupBlocks; ++j) {
      int32_t sum[kDigits];
      for (int k = 0; k < kDigits; ++k) sum[k] = -Layout::kOffset * a.sums[s * 64 + 16 * k + j];
      for (size_t c = 0; c < 32; ++c) {
        const int32_t q = Layout::Quant(g, j, c);
        for (int k = 0; k < kDigits; ++k) {
          sum[k] += q * digits[64 * (4 * (c / 4) + k) + 4 * j + c % 4];
        }
      }
      if constexpr (Layout::kMins) {
        // Q4_K's steps (ops/linear_vnni.h LinearQ4_KVnni): the scale term, then the min term.
        const float scale = a.scale[s * kGroupBlocks + j];
        acc[j] = fmaf(CombineDigits(sum), Layout::DScale(g, j) * scale, acc[j]);
        acc[j] = fmaf(-Layout::DMin(g, j), BlockTotal(a, s, j), acc[j]);
        continue;
      }
      float t = static_cast<float>(sum[3]);
      for (int k = 2; k >= 0; --k) t = fmaf(t, 256.0f, static_cast<float>(sum[k]));
      uint16_t d;
      memcpy(&d, g + 2 * j, sizeof(d));
      const float scale = F16BitsToF32(d) * a.scale[s * kGroupBlocks + j];
      acc[j] = fmaf(t, scale, acc[j]);
    }
  }
  return ReduceTree16(acc);
}

// A per-thread, 64-byte aligned scratch buffer of at least `bytes`.
uint8_t* ThreadScratch(size_t bytes) {
  struct Buffer {
    uint8_t* data = nullptr;
    size_t size = 0;
    ~Buffer() { free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    free(buffer.data);
    const size_t size = (bytes + 63) / 64 * 64;
    buffer.data = static_cast<uint8_t*>(aligned_alloc(64, size));
    HWY_ASSERT(buffer.data != nullptr);
    buffer.size = size;
  }
  return buffer.data;
}

// The three arrays for `tokens` rows of `cols` activations, carved from `base`.
ActivationDigitsView DigitsAt(uint8_t* base, size_t cols, size_t tokens, size_t t) {
  uint8_t* digits = base;
  uint8_t* sums = digits + tokens * ActivationDigitBytes(cols);
  uint8_t* scale = sums + tokens * ActivationDigitSumBytes(cols);
  return {reinterpret_cast<int8_t*>(digits + t * ActivationDigitBytes(cols)),
          reinterpret_cast<int32_t*>(sums + t * ActivationDigitSumBytes(cols)),
          reinterpret_cast<float*>(scale + t * ActivationDigitScaleBytes(cols))};
}
size_t DigitsBytes(size_t cols, size_t tokens) {
  return tokens * (ActivationDigitBytes(cols) + ActivationDigitSumBytes(cols) +
                   ActivationDigitScaleBytes(cols));
}

#if defined(__x86_64__)

// ActivationDigitsScalar with AVX-512: lane j = block j of the group
// throughout (the columns gathered 16 at a time), so the block maximum, the
// exponent, the digits and their sums are lane-wise.
CORTIQ_VNNI_TARGET void ActivationDigitsVnni(const float* x, size_t cols,
                                             const ActivationDigitsView& out) {
  const __m512i lane_columns = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32(32));
  const __m512i low_byte = _mm512_set1_epi32(0xFF);
  alignas(64) float columns[32][16];  // [4 v + b][j]
  for (size_t s = 0; s < cols / kGroup; ++s) {
    const float* xs = x + s * kGroup;
    __m512 max = _mm512_setzero_ps();
    __m512 non_finite = _mm512_setzero_ps();  // NaN in lanes with inf or NaN
    for (int i = 0; i < 32; ++i) {
      const __m512 v = _mm512_i32gather_ps(lane_columns, xs + i, 4);
      _mm512_store_ps(columns[i], v);
      max = _mm512_max_ps(_mm512_abs_ps(v), max);
      non_finite = _mm512_fmadd_ps(v, _mm512_setzero_ps(), non_finite);
    }
    // vgetexpps: floor(log2 |m|), exact for subnormals too; -inf for 0.
    const __m512 e = _mm512_max_ps(_mm512_getexp_ps(max),
                                   _mm512_set1_ps(static_cast<float>(kMinExponent)));
    const __m512 shift = _mm512_sub_ps(_mm512_set1_ps(kMantissaExponent), e);
    const __m512 scale = _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_sub_ps(e, _mm512_set1_ps(kMantissaExponent)));
    _mm512_store_ps(out.scale + s * kGroupBlocks, _mm512_add_ps(scale, non_finite));
    __m512i sums[kDigits];
    for (int k = 0; k < kDigits; ++k) sums[k] = _mm512_setzero_si512();
    int8_t* digits = out.digits + s * kGroupDigitBytes;
    for (int v = 0; v < 8; ++v) {
      __m512i packed[kDigits];
      for (int b = 0; b < 4; ++b) {
        // Exact scaling (a power of two), then round to nearest even.
        __m512i X = _mm512_cvtps_epi32(_mm512_scalef_ps(_mm512_load_ps(columns[4 * v + b]), shift));
        __m512i a[kDigits];
        for (int k = 0; k < kDigits - 1; ++k) {
          a[k] = _mm512_srai_epi32(_mm512_slli_epi32(X, 24), 24);
          X = _mm512_srai_epi32(_mm512_sub_epi32(X, a[k]), 8);
        }
        a[kDigits - 1] = X;
        for (int k = 0; k < kDigits; ++k) {
          sums[k] = _mm512_add_epi32(sums[k], a[k]);
          const __m512i byte = _mm512_slli_epi32(_mm512_and_si512(a[k], low_byte), 8 * b);
          packed[k] = b == 0 ? byte : _mm512_or_si512(packed[k], byte);
        }
      }
      for (int k = 0; k < kDigits; ++k) {
        _mm512_store_si512(digits + 64 * (4 * v + k), packed[k]);
      }
    }
    for (int k = 0; k < kDigits; ++k) {
      _mm512_store_si512(out.sums + s * 64 + 16 * k, sums[k]);
    }
  }
}


// The f32 combine of a group's digit sums (Horner in 256), times the blocks'
// scales, added to acc.
CORTIQ_VNNI_TARGET inline __m512 AddGroup(const __m512i (&sum)[kDigits], const uint8_t* g,
                                          const float* scale, __m512 acc) {
  __m512 t = _mm512_cvtepi32_ps(sum[3]);
  for (int k = 2; k >= 0; --k) {
    t = _mm512_fmadd_ps(t, _mm512_set1_ps(256.0f), _mm512_cvtepi32_ps(sum[k]));
  }
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
  return _mm512_fmadd_ps(t, _mm512_mul_ps(d, _mm512_load_ps(scale)), acc);
}

// AddGroup for Q4_Kx16 (the scalar twin's steps lane-wise): t = CombineDigits
// of the sums, acc + t * ((d sc_j) * 2^(e - 29)), then minus (dmin m_j) * T_j
// in one rounding (`totals`: the group's 16 BlockTotal values).
template <size_t kSuperScales>
CORTIQ_VNNI_TARGET inline __m512 AddGroupMins(const __m512i (&sum)[kDigits], const uint8_t* g,
                                              const float* scale, const float* totals,
                                              __m512 acc) {
  const __m512 t = CombineDigitsVnni(sum);
  // d0, dmin0, d1, dmin1 in lanes 0..3, spread over the two super-blocks' 8 lanes each.
  const __m512 dm = _mm512_cvtph_ps(_mm256_zextsi128_si256(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + kSuperScales))));
  const __m512 d = _mm512_permutexvar_ps(
      _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2), dm);
  const __m512 dmin = _mm512_permutexvar_ps(
      _mm512_setr_epi32(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3), dm);
  const __m512i six_bits = _mm512_set1_epi32(63);
  const __m512 sc = _mm512_cvtepi32_ps(_mm512_and_si512(
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g))), six_bits));
  const __m512 m = _mm512_cvtepi32_ps(_mm512_and_si512(
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16))),
      six_bits));
  acc = _mm512_fmadd_ps(t, _mm512_mul_ps(_mm512_mul_ps(d, sc), _mm512_load_ps(scale)), acc);
  return _mm512_fnmadd_ps(_mm512_mul_ps(dmin, m), _mm512_loadu_ps(totals), acc);
}

// Groups [s_begin, s_end) of kRows rows by the digit arithmetic, added to
// acc[0..kRows) (each row's accumulator of AddGroup): a row's sums are
// exactly as alone, whatever the grouping of rows and columns, because each
// row adds its groups to its own accumulator in column order. Per group and
// row, one accumulator per digit, started from the offset term
// -kOffset * sum a_k (`offsets`, precomputed per token; Q4_Kx16, whose min
// term is separate: from zero, and `offsets` holds the f32 bits of each
// block's BlockTotal, which AddGroupMins reads). Q4_0x16: each
// 64-byte part's low and high nibbles go to the same accumulators (digit
// vectors z and 4 + z); Q8_0x16: parts z and 4 + z. With two rows, 8 chains
// of 8 vpdpbusd (latency 5) per group: shorter than the group's 64 issue
// cycles; the rows share each load of the digit vectors.
//
// Prefetch: with `next` null, each row `ahead` bytes ahead of its reads, into
// L1 (kToL2 false) or L2 (true); otherwise the reads that follow this call are
// elsewhere (ColumnBlockedRowsVnni), and group i of the span prefetches lines
// [i * next_lines, (i + 1) * next_lines) of each of the kRows rows at `next`
// (row stride row_bytes).
template <class Layout, int kRows, bool kToL2 = false>
CORTIQ_VNNI_TARGET inline void SpanVnni(const uint8_t* row, size_t row_bytes, size_t s_begin,
                                        size_t s_end, const ActivationDigitsView& a,
                                        const int32_t* offsets, __m512 (&acc)[kRows],
                                        const uint8_t* next, size_t next_lines,
                                        size_t ahead = kPrefetchBytes) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i sign = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i sixteen = _mm512_set1_epi8(16);
  for (size_t s = s_begin; s < s_end; ++s) {
    const uint8_t* g[kRows];
    for (int r = 0; r < kRows; ++r) g[r] = row + r * row_bytes + s * Layout::kGroupBytes;
    if (next == nullptr) {
      for (int r = 0; r < kRows; ++r) {
        PrefetchLines<kToL2>(PrefetchAddress(g[r], ahead), Layout::kGroupBytes + 64);
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
    __m512i sum[kRows][kDigits];
    for (int k = 0; k < kDigits; ++k) {
      const __m512i offset = Layout::kOffset == 0 ? _mm512_setzero_si512()
                                                  : _mm512_load_si512(offsets + s * 64 + 16 * k);
      for (int r = 0; r < kRows; ++r) sum[r][k] = offset;
    }
    for (int z = 0; z < 4; ++z) {
      __m512i q_first[kRows], q_second[kRows];  // unsigned quants of digit vectors z, 4 + z
      for (int r = 0; r < kRows; ++r) {
        if constexpr (Layout::kNibbles) {
          const __m512i q = _mm512_loadu_si512(g[r] + Layout::kQuants + 64 * z);
          q_first[r] = _mm512_and_si512(q, nibble);
          q_second[r] = _mm512_and_si512(_mm512_srli_epi16(q, 4), nibble);
          if constexpr (Layout::kHighBits) {
            // The fifth bits: +16 where the part's mask for its nibble half has the byte's bit.
            uint64_t first, second;
            memcpy(&first, g[r] + kQ5_Kx16HighBits + 16 * z, 8);
            memcpy(&second, g[r] + kQ5_Kx16HighBits + 16 * z + 8, 8);
            q_first[r] = _mm512_mask_add_epi8(q_first[r], _cvtu64_mask64(first), q_first[r],
                                              sixteen);
            q_second[r] = _mm512_mask_add_epi8(q_second[r], _cvtu64_mask64(second), q_second[r],
                                               sixteen);
          }
        } else {
          q_first[r] = _mm512_xor_si512(_mm512_loadu_si512(g[r] + 32 + 64 * z), sign);
          q_second[r] = _mm512_xor_si512(_mm512_loadu_si512(g[r] + 32 + 64 * (4 + z)), sign);
        }
      }
      for (int k = 0; k < kDigits; ++k) {
        const __m512i d_first = _mm512_load_si512(digits + 64 * (4 * z + k));
        const __m512i d_second = _mm512_load_si512(digits + 64 * (4 * (4 + z) + k));
        for (int r = 0; r < kRows; ++r) {
          sum[r][k] = _mm512_dpbusd_epi32(sum[r][k], q_first[r], d_first);
          sum[r][k] = _mm512_dpbusd_epi32(sum[r][k], q_second[r], d_second);
        }
      }
    }
    for (int r = 0; r < kRows; ++r) {
      if constexpr (Layout::kMins) {
        acc[r] = AddGroupMins<Layout::kSuperScales>(sum[r], g[r], a.scale + s * kGroupBlocks,
                              reinterpret_cast<const float*>(offsets) + s * kGroupBlocks, acc[r]);
      } else {
        acc[r] = AddGroup(sum[r], g[r], a.scale + s * kGroupBlocks, acc[r]);
      }
    }
  }
}

// kRows whole rows (SpanVnni over every group, prefetching `ahead` bytes
// ahead into L1 or, kToL2, L2), reduced to y[0..kRows).
template <class Layout, int kRows, bool kToL2 = false>
CORTIQ_VNNI_TARGET void RowsVnni(const uint8_t* row, size_t row_bytes, size_t groups,
                                 const ActivationDigitsView& a, const int32_t* offsets,
                                 float* y, size_t ahead = kPrefetchBytes) {
  __m512 acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  SpanVnni<Layout, kRows, kToL2>(row, row_bytes, 0, groups, a, offsets, acc, nullptr, 0, ahead);
  for (int r = 0; r < kRows; ++r) y[r] = ReduceTree16Vnni(acc[r]);
}

// An even number of rows [row_begin, row_end), long ones (>= 8 groups), in
// blocks of kRowBlock rows, each block a column block at a time: a pair of
// rows reads 4 digit bytes per weight, so a whole long row's digits (down_proj,
// 12288 columns: 48 KiB) would come from L2 again for every pair, while a
// column block's 8 KiB stay in L1 for the block's 8 pairs. Each row keeps
// its accumulator across the column blocks and adds its groups in column
// order: the same bits as RowsVnni. The reads jump between rows, which the
// hardware prefetcher does not follow, so each pair prefetches what the next
// pair will read. Session 29, two threads streaming 40-100 distinct matrices
// from DRAM through Linear, interleaved runs: 1536 x 12288 Q4_0x16 14.1-14.6 ->
// 20.7-24.0 GB/s, 1536 x 6144 9.1-16.0 -> 12.8-18.3, Q8_0x16 1536 x 12288
// 14.5-17.8 -> 22.2-24.7; on 5-group rows (2560 columns) it was slower, hence
// the threshold.
template <class Layout>
CORTIQ_VNNI_TARGET void ColumnBlockedRowsVnni(const uint8_t* base, size_t row_bytes,
                                              size_t groups, const ActivationDigitsView& a,
                                              const int32_t* offsets, size_t row_begin,
                                              size_t row_end, float* y) {
  // Equal column blocks of at most kColumnBlockMaxGroups groups.
  const size_t blocks = (groups + kColumnBlockMaxGroups - 1) / kColumnBlockMaxGroups;
  const size_t block_groups = (groups + blocks - 1) / blocks;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowBlock) {
    const size_t r1 = std::min(row_end, r0 + kRowBlock);
    __m512 acc[kRowBlock / 2][2];
    for (size_t p = 0; p < (r1 - r0) / 2; ++p) acc[p][0] = acc[p][1] = _mm512_setzero_ps();
    for (size_t c0 = 0; c0 < groups; c0 += block_groups) {
      const size_t c1 = std::min(groups, c0 + block_groups);
      for (size_t r = r0; r < r1; r += 2) {
        const NextPairReads after = NextPair(base, row_bytes, Layout::kGroupBytes, groups,
                                             block_groups, r, r0, r1, c0, c1);
        SpanVnni<Layout, 2>(base + r * row_bytes, row_bytes, c0, c1, a, offsets,
                            acc[(r - r0) / 2], after.next, after.lines);
      }
    }
    for (size_t r = r0; r < r1; r += 2) {
      y[r] = ReduceTree16Vnni(acc[(r - r0) / 2][0]);
      y[r + 1] = ReduceTree16Vnni(acc[(r - r0) / 2][1]);
    }
  }
}

// Rows [row_begin, row_end) of one token. With into_l2 (DecodePrefetchIntoL2(),
// Zen 4): four rows per pass, each row prefetched into L2 a whole number of
// passes, >= kIntoL2PrefetchMinBytes, ahead; the 0-3 rows left in a pair and
// alone. Otherwise two at a time (four measured slower on Intel Emerald
// Rapids, session 29), long rows in column blocks.
//
// Why four streams into L2: the weights are read once per token, so what
// matters is how many 64-byte lines are in flight; software prefetches into L1
// are capped by its few miss buffers, and column blocks jump where the
// hardware prefetchers do not follow. Session 37, Zen 4 VM,
// cortiq-linear-benchmark from DRAM, 2 threads, Q4_0x16, interleaved runs:
// 2560 x 10240 20.0-20.9 GB/s in pairs and column blocks, 29.2-36.9 in passes
// of four; 10240 x 2560 19.2 in pairs (the f32 kernel 25.2-28.2), 30.4-45.6 in
// passes of four. Pairs without column blocks stayed at 19, and so did pairs or
// single rows with their prefetch moved into L2 or further ahead (20-23): it
// takes the four streams and the L2 prefetches together.
template <class Layout>
CORTIQ_VNNI_TARGET void RowRangeVnni(const uint8_t* base, size_t row_bytes, size_t groups,
                                     const ActivationDigitsView& a, const int32_t* offsets,
                                     size_t row_begin, size_t row_end, float* y, bool into_l2) {
  size_t r = row_begin;
  if (into_l2) {
    const size_t ahead = WholePassesAhead(4 * row_bytes, kIntoL2PrefetchMinBytes);
    for (; r + 4 <= row_end; r += 4) {
      RowsVnni<Layout, 4, /*kToL2=*/true>(base + r * row_bytes, row_bytes, groups, a, offsets,
                                          y + r, ahead);
    }
  } else if (groups >= kColumnBlockedMinGroups) {
    r = row_begin + (row_end - row_begin) / 2 * 2;
    ColumnBlockedRowsVnni<Layout>(base, row_bytes, groups, a, offsets, row_begin, r, y);
  }
  for (; r + 2 <= row_end; r += 2) {
    RowsVnni<Layout, 2>(base + r * row_bytes, row_bytes, groups, a, offsets, y + r);
  }
  for (; r < row_end; ++r) {
    RowsVnni<Layout, 1>(base + r * row_bytes, row_bytes, groups, a, offsets, y + r);
  }
}

#endif

std::atomic<int> g_fastest_allowed{static_cast<int>(DecodeLinearPath::kVnni)};
std::atomic<bool> g_float_preference_allowed{true};  // PreferFloatDecodeForTest

bool VnniAvailable() {
  static const bool available = CpuHasAvx512Vnni();
  return available;
}

}  // namespace vnni_internal

using namespace vnni_internal;  // NOLINT(build/namespaces): this file's own helpers

void ActivationDigitsScalar(const float* x, size_t cols, const ActivationDigitsView& out) {
  HWY_DASSERT(cols % kGroup == 0);
  for (size_t s = 0; s < cols / kGroup; ++s) {
    for (size_t j = 0; j < kGroupBlocks; ++j) {
      const float* xb = x + s * kGroup + 32 * j;
      float max = 0.0f;
      bool finite = true;
      for (size_t c = 0; c < 32; ++c) {
        finite = finite && isfinite(xb[c]);
        max = std::max(max, fabsf(xb[c]));
      }
      const int e = std::max(max > 0.0f && finite ? ilogbf(max) : kMinExponent, kMinExponent);
      out.scale[s * kGroupBlocks + j] =
          finite ? ldexpf(1.0f, e - kMantissaExponent) : NAN;
      int32_t sums[kDigits] = {};
      for (size_t c = 0; c < 32; ++c) {
        // Exact scaling, round to nearest even (the default mode, as vcvtps2dq).
        int32_t X = finite ? static_cast<int32_t>(nearbyintf(ldexpf(xb[c], kMantissaExponent - e)))
                           : 0;
        const size_t v = c / 4, b = c % 4;
        for (int k = 0; k < kDigits; ++k) {
          int32_t a = X;
          if (k < kDigits - 1) {
            a = static_cast<int8_t>(static_cast<uint8_t>(X & 0xFF));
            X = (X - a) / 256;  // exact: X - a is a multiple of 256
          }
          sums[k] += a;
          out.digits[s * kGroupDigitBytes + 64 * (4 * v + k) + 4 * j + b] = static_cast<int8_t>(a);
        }
      }
      for (int k = 0; k < kDigits; ++k) out.sums[s * 64 + 16 * k + j] = sums[k];
    }
  }
}

DecodeLinearPath DispatchedDecodeLinearPath() {
  const DecodeLinearPath best = VnniAvailable()   ? DecodeLinearPath::kVnni
                                : Avx2Available() ? DecodeLinearPath::kAvx2
                                                  : DecodeLinearPath::kFloat;
  return static_cast<DecodeLinearPath>(
      std::max(static_cast<int>(best), g_fastest_allowed.load(std::memory_order_relaxed)));
}

DecodeLinearPath DispatchedDecodeLinearPathQ8_0x16() {
  return DispatchedDecodeLinearPath() == DecodeLinearPath::kVnni ? DecodeLinearPath::kVnni
                                                                 : DecodeLinearPath::kFloat;
}

const char* DecodeLinearPathName(DecodeLinearPath path) {
  switch (path) {
    case DecodeLinearPath::kVnni:
      return "AVX-512 VNNI (exact integer digits)";
    case DecodeLinearPath::kAvx2:
      return "AVX2 (exact integer digits)";
    case DecodeLinearPath::kFloat:
      return "f32 FMA";
  }
  return "?";
}

void LimitDecodeLinearPathForTest(DecodeLinearPath fastest) {
  g_fastest_allowed.store(static_cast<int>(fastest), std::memory_order_relaxed);
}

bool DecodeQ8_0x16WithFloat(size_t cols) {
  static const bool splits = CpuSplitsAvx512();
  return splits && cols <= kFloatDecodeMaxCols &&
         g_float_preference_allowed.load(std::memory_order_relaxed) &&
         g_fastest_allowed.load(std::memory_order_relaxed) ==
             static_cast<int>(DecodeLinearPath::kVnni);
}

void PreferFloatDecodeForTest(bool allowed) {
  g_float_preference_allowed.store(allowed, std::memory_order_relaxed);
}

namespace {

// The digits of x with `path`'s kernel (kVnni or kAvx2).
void ActivationDigitsOn(DecodeLinearPath path, const float* x, size_t cols,
                        const ActivationDigitsView& a) {
#if defined(__x86_64__)
  if (path == DecodeLinearPath::kVnni) return ActivationDigitsVnni(x, cols, a);
  return ActivationDigitsAvx2(x, cols, a);
#else
  (void)path, (void)x, (void)cols, (void)a;
  HWY_ABORT("ActivationDigitsOn: no integer decode kernels on this build");
#endif
}

// Rows [row_begin, row_end) of one token with `path`'s row kernel (kAvx2: not Q8_0x16).
template <class Layout>
void RowRangeOn(DecodeLinearPath path, const uint8_t* base, size_t row_bytes, size_t groups,
                const ActivationDigitsView& a, const int32_t* offsets, size_t row_begin,
                size_t row_end, float* y) {
#if defined(__x86_64__)
  if (path == DecodeLinearPath::kVnni) {
    return RowRangeVnni<Layout>(base, row_bytes, groups, a, offsets, row_begin, row_end, y,
                                DecodePrefetchIntoL2());
  }
  if constexpr (std::is_same_v<Layout, Q4_0x16Layout>) {
    RowRangeQ4_0x16Avx2(base, row_bytes, groups, a, offsets, row_begin, row_end, y);
  } else if constexpr (std::is_same_v<Layout, Q4_Kx16Layout>) {
    RowRangeQ4_Kx16Avx2(base, row_bytes, groups, a, offsets, row_begin, row_end, y);
  } else if constexpr (std::is_same_v<Layout, Q5_Kx16Layout>) {
    RowRangeQ5_Kx16Avx2(base, row_bytes, groups, a, offsets, row_begin, row_end, y);
  } else {
    HWY_ABORT("RowRangeOn: no AVX2 kernel for Q8_0x16 (vpmaddubsw would saturate)");
  }
#else
  (void)path, (void)base, (void)row_bytes, (void)groups, (void)a, (void)offsets,
      (void)row_begin, (void)row_end, (void)y;
  HWY_ABORT("RowRangeOn: no integer decode kernels on this build");
#endif
}

// The digit arithmetic on `path` (kVnni, or kAvx2 for all but Q8_0x16), which the CPU must have.
template <class Layout>
void LinearRowsDigits(DecodeLinearPath path, const void* w, const float* x, size_t x_stride,
                      float* y, size_t y_stride, size_t batch, size_t rows, size_t cols,
                      size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kGroup == 0);
  (void)rows;
  HWY_ASSERT(path == DecodeLinearPath::kVnni ? VnniAvailable() : Avx2Available());
  if (row_begin == row_end || batch == 0) return;
  // The digits of every token, then each token's accumulator starts -kOffset * sum a_k (the
  // same integers RowDigitsScalar starts from, computed once per token instead of per row);
  // Q4_Kx16: `offsets` holds the f32 bits of each block's BlockTotal instead.
  const size_t sum_count = ActivationDigitSumBytes(cols) / sizeof(int32_t);
  uint8_t* scratch = ThreadScratch(DigitsBytes(cols, batch) + batch * sum_count * sizeof(int32_t));
  int32_t* offsets = reinterpret_cast<int32_t*>(scratch + DigitsBytes(cols, batch));
  for (size_t t = 0; t < batch; ++t) {
    const ActivationDigitsView a = DigitsAt(scratch, cols, batch, t);
    ActivationDigitsOn(path, x + t * x_stride, cols, a);
    if constexpr (Layout::kMins) {
      for (size_t s = 0; s < cols / kGroup; ++s) {
        for (size_t j = 0; j < kGroupBlocks; ++j) {
          const float total = BlockTotal(a, s, j);
          memcpy(&offsets[t * sum_count + s * kGroupBlocks + j], &total, sizeof(total));
        }
      }
    } else {
      for (size_t i = 0; i < sum_count; ++i) {
        offsets[t * sum_count + i] = -Layout::kOffset * a.sums[i];
      }
    }
  }
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t groups = cols / kGroup;
  const size_t row_bytes = groups * Layout::kGroupBytes;
  if (batch == 1) {
    const ActivationDigitsView a = DigitsAt(scratch, cols, 1, 0);
    RowRangeOn<Layout>(path, base, row_bytes, groups, a, offsets, row_begin, row_end, y);
    return;
  }
  // Blocks of 16 rows for every token: the block's weights stay in cache
  // across the tokens.
  constexpr size_t kRowsPerBlock = 16;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowsPerBlock) {
    const size_t r1 = std::min(row_end, r0 + kRowsPerBlock);
    for (size_t t = 0; t < batch; ++t) {
      const ActivationDigitsView a = DigitsAt(scratch, cols, batch, t);
      RowRangeOn<Layout>(path, base, row_bytes, groups, a, offsets + t * sum_count, r0, r1,
                         y + t * y_stride);
    }
  }
}

template <class Layout>
void LinearDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                        size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kGroup == 0);
  (void)rows;
  if (row_begin == row_end) return;
  uint8_t* scratch = ThreadScratch(DigitsBytes(cols, 1));
  const ActivationDigitsView a = DigitsAt(scratch, cols, 1, 0);
  ActivationDigitsScalar(x, cols, a);
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t groups = cols / kGroup;
  for (size_t r = row_begin; r < row_end; ++r) {
    y[r] = RowDigitsScalar<Layout>(base + r * groups * Layout::kGroupBytes, groups, a);
  }
}

}  // namespace

bool LinearKDigits(DecodeLinearKernel vnni, DecodeLinearKernel avx2, const void* w,
                   const float* x, float* y, size_t rows, size_t cols, size_t row_begin,
                   size_t row_end) {
  switch (DispatchedDecodeLinearPath()) {
    case DecodeLinearPath::kVnni:
      vnni(w, x, y, rows, cols, row_begin, row_end);
      return true;
    case DecodeLinearPath::kAvx2:
      avx2(w, x, y, rows, cols, row_begin, row_end);
      return true;
    case DecodeLinearPath::kFloat:
      break;
  }
  return false;
}

bool LinearQ8_0x16Digits(const void* w, const float* x, float* y, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end) {
  if (DispatchedDecodeLinearPathQ8_0x16() != DecodeLinearPath::kVnni ||
      DecodeQ8_0x16WithFloat(cols)) {
    return false;
  }
  LinearQ8_0x16Vnni(w, x, y, rows, cols, row_begin, row_end);
  return true;
}
bool LinearRowsQ8_0x16Digits(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end) {
  if (DispatchedDecodeLinearPathQ8_0x16() != DecodeLinearPath::kVnni ||
      DecodeQ8_0x16WithFloat(cols)) {
    return false;
  }
  LinearRowsQ8_0x16Vnni(w, x, x_stride, y, y_stride, batch, rows, cols, row_begin, row_end);
  return true;
}

void LinearQ8_0x16Vnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end) {
  LinearRowsDigits<Q8_0x16Layout>(DecodeLinearPath::kVnni, w, x, cols, y, rows, 1, rows, cols,
                                  row_begin, row_end);
}
void LinearRowsQ8_0x16Vnni(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end) {
  LinearRowsDigits<Q8_0x16Layout>(DecodeLinearPath::kVnni, w, x, x_stride, y, y_stride, batch,
                                  rows, cols, row_begin, row_end);
}
void LinearQ8_0x16DigitsScalar(const void* w, const float* x, float* y, size_t rows,
                               size_t cols, size_t row_begin, size_t row_end) {
  LinearDigitsScalar<Q8_0x16Layout>(w, x, y, rows, cols, row_begin, row_end);
}

// The seven entry points of a digit format with AVX2 kernels (ops/linear_vnni.h): its VNNI and
// AVX2 kernels for one token and for a batch, its scalar twin, and the dispatched pair that
// returns false (writing nothing) where DispatchedDecodeLinearPath() is kFloat. One macro so the
// formats cannot drift apart; Q8_0x16 has no AVX2 kernel and its own dispatch rule (above).
#define CORTIQ_DIGIT_FORMAT_ENTRY_POINTS(NAME, LAYOUT)                                        \
  void Linear##NAME##Vnni(const void* w, const float* x, float* y, size_t rows, size_t cols,  \
                          size_t row_begin, size_t row_end) {                                 \
    LinearRowsDigits<LAYOUT>(DecodeLinearPath::kVnni, w, x, cols, y, rows, 1, rows, cols,     \
                             row_begin, row_end);                                             \
  }                                                                                           \
  void LinearRows##NAME##Vnni(const void* w, const float* x, size_t x_stride, float* y,       \
                              size_t y_stride, size_t batch, size_t rows, size_t cols,        \
                              size_t row_begin, size_t row_end) {                             \
    LinearRowsDigits<LAYOUT>(DecodeLinearPath::kVnni, w, x, x_stride, y, y_stride, batch,     \
                             rows, cols, row_begin, row_end);                                 \
  }                                                                                           \
  void Linear##NAME##Avx2(const void* w, const float* x, float* y, size_t rows, size_t cols,  \
                          size_t row_begin, size_t row_end) {                                 \
    LinearRowsDigits<LAYOUT>(DecodeLinearPath::kAvx2, w, x, cols, y, rows, 1, rows, cols,     \
                             row_begin, row_end);                                             \
  }                                                                                           \
  void LinearRows##NAME##Avx2(const void* w, const float* x, size_t x_stride, float* y,       \
                              size_t y_stride, size_t batch, size_t rows, size_t cols,        \
                              size_t row_begin, size_t row_end) {                             \
    LinearRowsDigits<LAYOUT>(DecodeLinearPath::kAvx2, w, x, x_stride, y, y_stride, batch,     \
                             rows, cols, row_begin, row_end);                                 \
  }                                                                                           \
  void Linear##NAME##DigitsScalar(const void* w, const float* x, float* y, size_t rows,       \
                                  size_t cols, size_t row_begin, size_t row_end) {            \
    LinearDigitsScalar<LAYOUT>(w, x, y, rows, cols, row_begin, row_end);                      \
  }                                                                                           \
  bool Linear##NAME##Digits(const void* w, const float* x, float* y, size_t rows,             \
                            size_t cols, size_t row_begin, size_t row_end) {                  \
    const DecodeLinearPath path = DispatchedDecodeLinearPath();                               \
    if (path == DecodeLinearPath::kFloat) return false;                                       \
    LinearRowsDigits<LAYOUT>(path, w, x, cols, y, rows, 1, rows, cols, row_begin, row_end);   \
    return true;                                                                              \
  }                                                                                           \
  bool LinearRows##NAME##Digits(const void* w, const float* x, size_t x_stride, float* y,     \
                                size_t y_stride, size_t batch, size_t rows, size_t cols,      \
                                size_t row_begin, size_t row_end) {                           \
    const DecodeLinearPath path = DispatchedDecodeLinearPath();                               \
    if (path == DecodeLinearPath::kFloat) return false;                                       \
    LinearRowsDigits<LAYOUT>(path, w, x, x_stride, y, y_stride, batch, rows, cols, row_begin, \
                             row_end);                                                        \
    return true;                                                                              \
  }

CORTIQ_DIGIT_FORMAT_ENTRY_POINTS(Q4_0x16, Q4_0x16Layout)
CORTIQ_DIGIT_FORMAT_ENTRY_POINTS(Q4_Kx16, Q4_Kx16Layout)
CORTIQ_DIGIT_FORMAT_ENTRY_POINTS(Q5_Kx16, Q5_Kx16Layout)

#undef CORTIQ_DIGIT_FORMAT_ENTRY_POINTS

}  // namespace ops
}  // namespace cortiq
