// What the exact integer decode kernels share (ops/linear_vnni.cc: Q4_0x16,
// Q8_0x16 with VNNI; ops/linear_digits_avx2.cc: Q4_0x16 with AVX2;
// ops/linear_digits_k.cc: Q4_K, Q5_K): the activation digits of
// ops/linear_vnni.h, per-thread scratch, the fixed 16-lane sum, the column
// blocks of long rows. Not part of the ops API; only those files include it.
#ifndef CORTIQ_OPS_LINEAR_VNNI_INTERNAL_H_
#define CORTIQ_OPS_LINEAR_VNNI_INTERNAL_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ops/cpu_features.h"
#include "ops/linear_vnni.h"
#include "ops/quantize_q4_0x16.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define CORTIQ_VNNI_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,f16c,fma")))
#define CORTIQ_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))
#endif

namespace cortiq {
namespace ops {
namespace vnni_internal {

constexpr size_t kGroup = kQ4_0x16BlockWeights;  // 512 columns per digit group
constexpr size_t kGroupBlocks = kQ4_0x16Blocks;  // 16 blocks of 32 weights
constexpr size_t kGroupDigitBytes = kGroup * 4;  // 2048
constexpr int kDigits = 4;
// The smallest block exponent: 2^(e - 29) stays a normal f32.
constexpr int kMinExponent = -97;
constexpr int kMantissaExponent = 29;  // |X| <= 2^30
// Bytes ahead of the reads that a row kernel prefetches (as the f32 kernel,
// ops/linear_q4_0x16-inl.h kQ4_0x16PrefetchBytes).
constexpr size_t kPrefetchBytes = 3072;

// Sum of 16 lanes in the fixed tree of ops/linear_vnni.h (lane i + 8, + 4,
// + 2, + 1).
float ReduceTree16(const float* a);

// t = V * 65536 + U in one f32 rounding, U = S_0 + 256 S_1 and V = S_2 + 256 S_3
// (exact int32 for digit sums of at most 32 quants below 2^5 or of the digits
// alone; converted with round to nearest even, as vcvtdq2ps): the f32 value of
// the four digit sums S_k of a block with a min term (Q4_K, Q5_K, Q4_Kx16).
inline float CombineDigits(const int32_t (&s)[kDigits]) {
  const int32_t u = s[0] + s[1] * 256, v = s[2] + s[3] * 256;
  return fmaf(static_cast<float>(v), 65536.0f, static_cast<float>(u));
}

// Column blocks (ColumnBlockedRowsVnni, ops/linear_vnni.cc): rows from
// kColumnBlockedMinGroups groups on (4096 columns: 16 KiB of digits) are
// taken in column blocks of at most kColumnBlockMaxGroups groups (8 KiB of
// digits, which stay in L1) of kRowBlock rows, a pair of rows at a time.
constexpr size_t kColumnBlockedMinGroups = 8;
constexpr size_t kColumnBlockMaxGroups = 4;
constexpr size_t kRowBlock = 16;

// What a column-blocked pass reads after the pair of rows at r of the row
// block [r0, r1) in the column block [c0, c1) of block_groups groups (of
// `groups`, group_bytes each): the next pair in this column block, else the
// block's first pair in the next column block, else the next row block (past
// the matrix only a prefetch, which does not fault). `lines` is how many
// 64-byte lines of each of its two rows to prefetch per group of the current
// span, so that the span's groups cover them all.
struct NextPairReads {
  const uint8_t* next;
  size_t lines;
};
inline NextPairReads NextPair(const uint8_t* base, size_t row_bytes, size_t group_bytes,
                              size_t groups, size_t block_groups, size_t r, size_t r0,
                              size_t r1, size_t c0, size_t c1) {
  const uint8_t* next;
  size_t next_groups;
  if (r + 2 < r1) {
    next = base + (r + 2) * row_bytes + c0 * group_bytes;
    next_groups = c1 - c0;
  } else if (c1 < groups) {
    next = base + r0 * row_bytes + c1 * group_bytes;
    next_groups = (groups < c1 + block_groups ? groups : c1 + block_groups) - c1;
  } else {
    next = base + r1 * row_bytes;
    next_groups = block_groups;
  }
  const size_t lines = (next_groups * group_bytes + 63) / 64;
  return {next, (lines + (c1 - c0) - 1) / (c1 - c0)};
}

// p + offset computed on integers: a prefetch address, which may lie past the
// matrix (a prefetch of it is harmless; forming it by pointer arithmetic would
// not be).
inline const uint8_t* PrefetchAddress(const uint8_t* p, size_t offset) {
  return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(p) + offset);
}

#if defined(__x86_64__)
// Prefetches the 64-byte lines at p, p + 64, ... below p + bytes (addresses
// formed on integers: p may lie past the matrix), into L2 with kToL2, else
// into L1. A span that does not start on a line needs bytes + 64 to cover its
// last line. Plain SSE: callable from the AVX2 and AVX-512 kernels alike.
template <bool kToL2>
inline void PrefetchLines(const uint8_t* p, size_t bytes) {
  for (size_t offset = 0; offset < bytes; offset += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(PrefetchAddress(p, offset)),
                 kToL2 ? _MM_HINT_T1 : _MM_HINT_T0);
  }
}
#endif

// A per-thread, 64-byte aligned scratch buffer of at least `bytes` (reused by
// the next call on the thread). Aborts if the allocation fails.
uint8_t* ThreadScratch(size_t bytes);

// The three arrays of ActivationDigitsView for token t of `tokens` rows of
// `cols` activations, carved from `base` (DigitsBytes(cols, tokens) bytes).
ActivationDigitsView DigitsAt(uint8_t* base, size_t cols, size_t tokens, size_t t);
size_t DigitsBytes(size_t cols, size_t tokens);

// x[0, cols) copied to `padded` and zero-filled to padded_cols (the digit
// groups of a row length that is not a multiple of theirs).
inline void PadActivations(const float* x, size_t cols, size_t padded_cols, float* padded) {
  memcpy(padded, x, cols * sizeof(float));
  for (size_t c = cols; c < padded_cols; ++c) padded[c] = 0.0f;
}

// Whether the CPU has AVX-512 F/BW/VL/DQ/VNNI (cached).
bool VnniAvailable();

// Whether the CPU has Highway's AVX2 target (AVX2, FMA, F16C, BMI2; cached):
// what the CORTIQ_AVX2_TARGET functions of ops/linear_digits_avx2.cc need.
bool Avx2Available();

#if defined(__x86_64__)

// ActivationDigitsScalar's bytes with AVX-512 (lane j = block j of a group).
// Only called when VnniAvailable().
CORTIQ_VNNI_TARGET void ActivationDigitsVnni(const float* x, size_t cols,
                                             const ActivationDigitsView& out);

// ReduceTree16 of the 16 lanes of v, the same bits.
CORTIQ_VNNI_TARGET inline float ReduceTree16Vnni(__m512 v) {
  const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v),
                                  _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  const __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
  return _mm_cvtss_f32(s1);
}

// CombineDigits lane-wise.
CORTIQ_VNNI_TARGET inline __m512 CombineDigitsVnni(const __m512i (&s)[kDigits]) {
  const __m512i u = _mm512_add_epi32(s[0], _mm512_slli_epi32(s[1], 8));
  const __m512i v = _mm512_add_epi32(s[2], _mm512_slli_epi32(s[3], 8));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(65536.0f), _mm512_cvtepi32_ps(u));
}

// ReduceTree16 of the 16 lanes [lo, hi], the same bits.
CORTIQ_AVX2_TARGET inline float ReduceTree16Avx2(__m256 lo, __m256 hi) {
  const __m256 s8 = _mm256_add_ps(lo, hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  const __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
  return _mm_cvtss_f32(s1);
}

// ActivationDigitsScalar's bytes with AVX2 (ops/linear_digits_avx2.cc). Only
// called when Avx2Available().
CORTIQ_AVX2_TARGET void ActivationDigitsAvx2(const float* x, size_t cols,
                                             const ActivationDigitsView& out);

// y[r] for r in [row_begin, row_end) of Q4_0x16 rows at base (row_bytes
// apart, `groups` groups each) by the digit arithmetic with AVX2, from the
// digits `a` and the offset terms -8 * a.sums (ops/linear_digits_avx2.cc):
// RowDigitsScalar's bits. Only called when Avx2Available().
CORTIQ_AVX2_TARGET void RowRangeQ4_0x16Avx2(const uint8_t* base, size_t row_bytes, size_t groups,
                                            const ActivationDigitsView& a, const int32_t* offsets,
                                            size_t row_begin, size_t row_end, float* y);

// The same for Q4_Kx16 rows, with `totals` the f32 bits of each block's
// BlockTotal (ops/linear_vnni.cc) in place of the offsets: the bits of
// LinearQ4_Kx16DigitsScalar.
CORTIQ_AVX2_TARGET void RowRangeQ4_Kx16Avx2(const uint8_t* base, size_t row_bytes, size_t groups,
                                            const ActivationDigitsView& a, const int32_t* totals,
                                            size_t row_begin, size_t row_end, float* y);
// And for Q5_Kx16 rows (LinearQ5_Kx16DigitsScalar's bits).
CORTIQ_AVX2_TARGET void RowRangeQ5_Kx16Avx2(const uint8_t* base, size_t row_bytes, size_t groups,
                                            const ActivationDigitsView& a, const int32_t* totals,
                                            size_t row_begin, size_t row_end, float* y);

#endif

}  // namespace vnni_internal
}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_LINEAR_VNNI_INTERNAL_H_
