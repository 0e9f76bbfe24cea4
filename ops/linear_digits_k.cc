// LinearQ4_KVnni, LinearQ4_KAvx2 and their scalar twin LinearQ4_KDigitsScalar,
// and the same three for Q5_K (ops/linear_vnni.h): Q4_K / Q5_K decode
// products in exact integer digits, on the GGUF's own bytes, each format's
// three with the same bits.
//
// Why a register transpose and not a regrouped layout as Q4_0x16: Q4_K's
// quants already come in 32-byte runs per pair of sub-blocks, so eight loads
// and 24 vpermt2d (on Intel's shuffle port, which the vpdpbusd and FMAs leave
// idle) give the lanes one sub-block each; the file stays as llama-quantize
// wrote it, and the prompt's kernels (ops/matmul.h) read it unchanged. On
// Zen 4 the vpermt2d share a pipe with the vpdpbusd, yet a kernel without
// them (wrong, but timed) and one transposing by vpunpck within 128-bit lanes
// were no faster (session 38).
//
// A row whose last group holds 1 or 2 super-blocks shares that group with
// the tails of 3 or 1 other rows (TailPack, PackedTailKVnni): E2B's and
// E4B's hidden sizes (1536, 2560) leave 2.
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
using vnni_internal::kGroupBlocks;
using vnni_internal::kGroupDigitBytes;

constexpr size_t kSuperBlocksPerGroup = 4;
constexpr size_t kKGroup = kSuperBlocksPerGroup * kSuperBlockSize;  // 1024 columns
// Byte offsets in block_q4_K (Q5_K: the same scales, then qh).
constexpr size_t kScalesOffset = 4;
constexpr size_t kQsOffset = 16;

// What the digit products of Q4_K and Q5_K differ in. Quant(sb, i, c, h):
// the unsigned integer the sums multiply for column c (< 32) of chunk i,
// nibble half h (0: low nibbles, sub-block 2 i; 1: high, 2 i + 1); DHalf(d, h):
// the d its sums are scaled by.
struct Q4_KDigitFormat {
  static constexpr size_t kBlockBytes = kQ4_KBlockBytes;
  static constexpr size_t kQs = kQsOffset;
  static constexpr bool kHighBit = false;
  // The high nibble in place (16 q): the VNNI kernel multiplies the byte as
  // it is, and 1/16 goes into d.
  static int32_t Quant(const uint8_t* sb, size_t i, size_t c, size_t h) {
    const uint8_t byte = sb[kQs + 32 * i + c];
    return h == 0 ? (byte & 0x0F) : (byte & 0xF0);
  }
  static float DHalf(float d, size_t h) { return h == 0 ? d : d * 0.0625f; }
};
// Q5_K (ggml dequantize_row_q5_K): the nibble plus 16 where bit 2 i + h of
// qh[c] is set.
struct Q5_KDigitFormat {
  static constexpr size_t kBlockBytes = kQ5_KBlockBytes;
  static constexpr size_t kQh = 16;
  static constexpr size_t kQs = 48;
  static constexpr bool kHighBit = true;
  static int32_t Quant(const uint8_t* sb, size_t i, size_t c, size_t h) {
    const uint8_t byte = sb[kQs + 32 * i + c];
    const int32_t nibble = h == 0 ? (byte & 0x0F) : (byte >> 4);
    return nibble | (((sb[kQh + c] >> (2 * i + h)) & 1) << 4);
  }
  static float DHalf(float d, size_t /*h*/) { return d; }
};

// The 32-column activation block (of the 32 in a group) that lane j's
// sub-block of half h (0: low nibbles, sub-block 2 i; 1: high, 2 i + 1) reads:
// super-block L = j / 4, chunk i = j % 4.
constexpr size_t LaneBlock(size_t j, size_t h) { return 8 * (j / 4) + 2 * (j % 4) + h; }

// Sub-blocks of the lanes, and the layout of the per-token arrays of a
// group: digits [h][v][k] (64 bytes each: lane j, 4 bytes = columns 4 v ..
// 4 v + 3 of its block), then per half the f32 digit-sum combination T and
// the scale 2^(e - 29), 16 lanes each.
constexpr size_t kKDigitBytes = kKGroup * 4;  // 4096 per group
constexpr size_t kKLaneFloats = 2 * 16;       // per group: [h][j]

using vnni_internal::CombineDigits;

// One row, scalar, from the digits of the zero-padded activations (x16
// layout, ops/linear_vnni.h).
template <class Format>
float RowKDigitsScalar(const uint8_t* row, size_t superblocks, size_t groups,
                       const ActivationDigitsView& a) {
  float acc[16] = {};
  for (size_t g = 0; g < groups; ++g) {
    for (size_t h = 0; h < 2; ++h) {
      for (size_t j = 0; j < 16; ++j) {
        const size_t b = kSuperBlocksPerGroup * g + j / 4, i = j % 4;
        const size_t block = 32 * g + LaneBlock(j, h);
        const size_t s = block / kGroupBlocks, lane = block % kGroupBlocks;
        int32_t sum[kDigits] = {};
        float dsc = 0.0f, dminm = 0.0f;
        if (b < superblocks) {
          const uint8_t* sb = row + b * Format::kBlockBytes;
          for (size_t c = 0; c < 32; ++c) {
            const int32_t q = Format::Quant(sb, i, c, h);
            for (int k = 0; k < kDigits; ++k) {
              sum[k] += q * a.digits[s * kGroupDigitBytes + 64 * (4 * (c / 4) + k) + 4 * lane + c % 4];
            }
          }
          uint16_t d, dmin;
          memcpy(&d, sb, 2);
          memcpy(&dmin, sb + 2, 2);
          int sc, m;
          KScaleMin(sb + kScalesOffset, 2 * i + h, &sc, &m);
          const float dh = Format::DHalf(F16BitsToF32(d), h);
          dsc = dh * static_cast<float>(sc);
          dminm = F16BitsToF32(dmin) * static_cast<float>(m);
        }
        int32_t sums[kDigits];
        for (int k = 0; k < kDigits; ++k) sums[k] = a.sums[s * 64 + 16 * k + lane];
        const float scale = a.scale[s * kGroupBlocks + lane];
        const float t = CombineDigits(sum), total = CombineDigits(sums) * scale;
        acc[j] = fmaf(t, dsc * scale, acc[j]);
        acc[j] = fmaf(-dminm, total, acc[j]);
      }
    }
  }
  return vnni_internal::ReduceTree16(acc);
}

// The per-thread scratch of a kernel call on `cols` columns (`groups` groups):
// the padded activations and their x16 digits (`x16`, what KDigitsVnni /
// KDigitsAvx2 take as scratch), then this file's digits and lanes.
struct KScratch {
  uint8_t* x16;
  int8_t* kdigits;
  float* klanes;
};
KScratch KScratchFor(size_t groups) {
  const size_t padded_cols = groups * kKGroup;
  const size_t x16_bytes = padded_cols * sizeof(float) + vnni_internal::DigitsBytes(padded_cols, 1);
  const size_t x16_bytes_aligned = (x16_bytes + 63) / 64 * 64;
  uint8_t* scratch = vnni_internal::ThreadScratch(x16_bytes_aligned + groups * kKDigitBytes +
                                                  groups * kKLaneFloats * 2 * sizeof(float));
  return {scratch, reinterpret_cast<int8_t*>(scratch + x16_bytes_aligned),
          reinterpret_cast<float*>(scratch + x16_bytes_aligned + groups * kKDigitBytes)};
}

using vnni_internal::PadActivations;

#if defined(__x86_64__)

// vpermt2d indices of the transpose: stage s swaps bit s of the vector index
// with bit s of the lane index (pairs n, n | 1 << s); the last stage also
// moves the lanes to j = 4 L + i. Derived by simulating the moves on labels.
alignas(64) constexpr int32_t kTranspose[3][2][16] = {
    {{0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30},
     {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}},
    {{0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29},
     {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}},
    {{0, 8, 1, 9, 2, 10, 3, 11, 16, 24, 17, 25, 18, 26, 19, 27},
     {4, 12, 5, 13, 6, 14, 7, 15, 20, 28, 21, 29, 22, 30, 23, 31}},
};

// Lane j of half h from the x16 lanes of the group pair (2 g, 2 g + 1).
alignas(64) constexpr int32_t kLaneBlock[2][16] = {
    {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30},
    {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}};

// vpshufb of a 16-byte super-block head (d, dmin, scales[0..11] at bytes
// 4..15) into dword i = [sc_2i, sc_2i+1, m_2i, m_2i+1] before masking
// (ggml get_scale_min_k4): the low parts (scales[k] or scales[k + 4]), the
// high two bits of sub-blocks 4..7 (0x80: zero), the masks of the low parts.
alignas(64) constexpr uint8_t kScaleLow[64] = {
    4, 5, 8, 9, 6, 7, 10, 11, 12, 13, 12, 13, 14, 15, 14, 15,
    4, 5, 8, 9, 6, 7, 10, 11, 12, 13, 12, 13, 14, 15, 14, 15,
    4, 5, 8, 9, 6, 7, 10, 11, 12, 13, 12, 13, 14, 15, 14, 15,
    4, 5, 8, 9, 6, 7, 10, 11, 12, 13, 12, 13, 14, 15, 14, 15};
alignas(64) constexpr uint8_t kScaleHigh[64] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 4, 5, 8, 9, 6, 7, 10, 11,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 4, 5, 8, 9, 6, 7, 10, 11,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 4, 5, 8, 9, 6, 7, 10, 11,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 4, 5, 8, 9, 6, 7, 10, 11};
alignas(64) constexpr uint8_t kScaleLowMask[64] = {
    63, 63, 63, 63, 63, 63, 63, 63, 15, 15, 15, 15, 15, 15, 15, 15,
    63, 63, 63, 63, 63, 63, 63, 63, 15, 15, 15, 15, 15, 15, 15, 15,
    63, 63, 63, 63, 63, 63, 63, 63, 15, 15, 15, 15, 15, 15, 15, 15,
    63, 63, 63, 63, 63, 63, 63, 63, 15, 15, 15, 15, 15, 15, 15, 15};
// The mins of sub-blocks 4..7 take the high nibble of scales[k + 4]: bytes
// 10, 11, 14, 15 of each 16.
constexpr uint64_t kMinHighNibbleBytes = 0xCC00CC00CC00CC00ull;

using vnni_internal::CombineDigitsVnni;

// Rows whose last group holds 1 or 2 super-blocks (E2B's 1536 columns: 6,
// E4B's 2560: 10) leave that group's other lanes on zero weights, a quarter
// of E2B's digit products. PackedTailKVnni fills them with the tails of
// TailPack() rows at once (1 super-block: 4 rows, 2: 2 rows, else 1: none),
// slot L of the group taking super-block L % tail of row L / tail; the tail
// group's digits and lanes of slot L are then those of slot L % tail
// (KDigitsVnni copies them there, where the padded activations had zeros).
constexpr size_t TailSuperBlocks(size_t superblocks) { return superblocks % kSuperBlocksPerGroup; }
constexpr size_t TailPack(size_t superblocks) {
  return TailSuperBlocks(superblocks) == 1 ? 4 : TailSuperBlocks(superblocks) == 2 ? 2 : 1;
}

// The digits of x (cols) in the lanes of this file: zero-padded to the
// groups, x16 digits (vnni_internal::ActivationDigitsVnni), then each 64-byte
// vector of a group gathered from the x16 vectors of its two 512-column
// halves, and per lane T * 2^(e - 29) (T = CombineDigits of the block's digit
// sums) and the scale 2^(e - 29). Where TailPack(superblocks) > 1, the last
// group's digits and scales past its tail super-blocks repeat the tail's
// (above): the one-row kernels multiply them by zero weights and zero d and
// dmin, which adds +0 to each lane whatever the digits and finite scales, so
// their bits do not change (a non-finite scale makes the row NaN either way).
CORTIQ_VNNI_TARGET void KDigitsVnni(const float* x, size_t cols, size_t groups, uint8_t* scratch,
                                    int8_t* kdigits, float* klanes) {
  const size_t padded_cols = groups * kKGroup;
  float* padded = reinterpret_cast<float*>(scratch);
  const float* xs = x;
  if (padded_cols != cols) {
    PadActivations(x, cols, padded_cols, padded);
    xs = padded;
  }
  const ActivationDigitsView a =
      vnni_internal::DigitsAt(scratch + padded_cols * sizeof(float), padded_cols, 1, 0);
  vnni_internal::ActivationDigitsVnni(xs, padded_cols, a);
  for (size_t g = 0; g < groups; ++g) {
    const int8_t* first = a.digits + 2 * g * kGroupDigitBytes;
    const int8_t* second = first + kGroupDigitBytes;
    int8_t* out = kdigits + g * kKDigitBytes;
    for (size_t h = 0; h < 2; ++h) {
      const __m512i index = _mm512_load_si512(kLaneBlock[h]);
      for (size_t vk = 0; vk < 32; ++vk) {
        _mm512_store_si512(out + 64 * (32 * h + vk),
                           _mm512_permutex2var_epi32(_mm512_load_si512(first + 64 * vk), index,
                                                     _mm512_load_si512(second + 64 * vk)));
      }
      __m512i sums[kDigits];
      for (int k = 0; k < kDigits; ++k) {
        sums[k] = _mm512_permutex2var_epi32(_mm512_load_si512(a.sums + 2 * g * 64 + 16 * k),
                                            index,
                                            _mm512_load_si512(a.sums + (2 * g + 1) * 64 + 16 * k));
      }
      const __m512 scale =
          _mm512_permutex2var_ps(_mm512_load_ps(a.scale + 2 * g * kGroupBlocks), index,
                                 _mm512_load_ps(a.scale + (2 * g + 1) * kGroupBlocks));
      float* lanes = klanes + g * kKLaneFloats * 2;
      _mm512_store_ps(lanes + 16 * h, _mm512_mul_ps(CombineDigitsVnni(sums), scale));
      _mm512_store_ps(lanes + 32 + 16 * h, scale);
    }
  }
  const size_t superblocks = cols / kSuperBlockSize;
  const size_t tail = TailSuperBlocks(superblocks);
  if (TailPack(superblocks) > 1) {
    // Lane j takes lane j % (4 tail): slot L's 4 lanes from slot L % tail.
    const __m512i repeat = _mm512_and_si512(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(static_cast<int>(4 * tail - 1)));
    int8_t* out = kdigits + (groups - 1) * kKDigitBytes;
    for (size_t n = 0; n < kKDigitBytes / 64; ++n) {
      _mm512_store_si512(out + 64 * n,
                         _mm512_permutexvar_epi32(repeat, _mm512_load_si512(out + 64 * n)));
    }
    // The scales too (each lane's coef), not the totals T: a row reads T only
    // in its own lanes, moved to [0, 4 tail), and the padded lanes keep the
    // zero block's T = +0, whose product with dmin m = +0 is +0 (a tail
    // block's T can be infinite for finite activations near FLT_MAX; +0 times
    // it would be NaN where the scalar twin has +-inf).
    float* scales = klanes + (groups - 1) * kKLaneFloats * 2 + 32;
    for (size_t h = 0; h < 2; ++h) {
      _mm512_store_ps(scales + 16 * h,
                      _mm512_permutexvar_ps(repeat, _mm512_load_ps(scales + 16 * h)));
    }
  }
}

// The 8 quant vectors (n = 2 L + p: bytes [64 p, 64 p + 64) of super-block
// L's qs), the 4 heads (128-bit lane L: bytes 0..15 of super-block L) and,
// for Q5_K, the qh of super-blocks 0, 1 (qh[0]) and 2, 3 (qh[1]; 256-bit half
// L % 2) of group g; super-blocks at or past `superblocks` read as zeros.
template <class Format>
CORTIQ_VNNI_TARGET inline void LoadGroup(const uint8_t* row, size_t g, size_t superblocks,
                                         __m512i (&q)[8], __m512i& head, __m512i (&qh)[2]) {
  const uint8_t* base = row + g * kSuperBlocksPerGroup * Format::kBlockBytes;
  if (kSuperBlocksPerGroup * (g + 1) <= superblocks) {
    for (size_t L = 0; L < 4; ++L) {
      const uint8_t* sb = base + L * Format::kBlockBytes;
      q[2 * L] = _mm512_loadu_si512(sb + Format::kQs);
      q[2 * L + 1] = _mm512_loadu_si512(sb + Format::kQs + 64);
    }
    // The lane index of vinserti32x4 is an immediate: spelled out, not a loop
    // (clang rejects a loop variable even where GCC's unrolling folds it).
    const auto head_of = [&](size_t L) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + L * Format::kBlockBytes));
    };
    head = _mm512_castsi128_si512(head_of(0));
    head = _mm512_inserti32x4(head, head_of(1), 1);
    head = _mm512_inserti32x4(head, head_of(2), 2);
    head = _mm512_inserti32x4(head, head_of(3), 3);
    if constexpr (Format::kHighBit) {
      for (size_t n = 0; n < 2; ++n) {
        const uint8_t* sb = base + 2 * n * Format::kBlockBytes + Format::kQh;
        qh[n] = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb))),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + Format::kBlockBytes)), 1);
      }
    }
    return;
  }
  alignas(64) uint8_t heads[64] = {};
  alignas(64) uint8_t high[128] = {};
  for (size_t L = 0; L < 4; ++L) {
    if (kSuperBlocksPerGroup * g + L < superblocks) {
      const uint8_t* sb = base + L * Format::kBlockBytes;
      q[2 * L] = _mm512_loadu_si512(sb + Format::kQs);
      q[2 * L + 1] = _mm512_loadu_si512(sb + Format::kQs + 64);
      memcpy(heads + 16 * L, sb, 16);
      if constexpr (Format::kHighBit) memcpy(high + 32 * L, sb + Format::kQh, 32);
    } else {
      q[2 * L] = q[2 * L + 1] = _mm512_setzero_si512();
    }
  }
  head = _mm512_load_si512(heads);
  if constexpr (Format::kHighBit) {
    qh[0] = _mm512_load_si512(high);
    qh[1] = _mm512_load_si512(high + 64);
  }
}

// The constant vectors of GroupTermsVnni, loaded once per RowKVnni or
// PackedTailKVnni call.
struct KVnniConstants {
  __m512i nibble, low_bit, high_bits;
  // Q5_K: dword 8 L of the qh pair (qh[0], qh[1]) for lane j = 4 L + i, and
  // the shift 2 i + h of each half's bit.
  __m512i qh_index, bit_count[2];
  // vpshufb indices (per 128-bit lane) that zero-extend byte n of each 32-bit lane.
  __m512i byte_of[4];
  __m512i scale_low, scale_high, scale_low_mask;
  __m512i transpose[3][2];
};

CORTIQ_VNNI_TARGET inline KVnniConstants LoadKVnniConstants() {
  KVnniConstants c;
  c.nibble = _mm512_set1_epi8(0x0F);
  c.low_bit = _mm512_set1_epi8(1);
  c.high_bits = _mm512_set1_epi8(0x30);
  c.qh_index = _mm512_setr_epi32(0, 0, 0, 0, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 24, 24);
  c.bit_count[0] = _mm512_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6);
  c.bit_count[1] = _mm512_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7, 1, 3, 5, 7, 1, 3, 5, 7);
  for (int n = 0; n < 4; ++n) {
    c.byte_of[n] = _mm512_add_epi32(
        _mm512_set1_epi32(static_cast<int>(0x80808000u) | n),
        _mm512_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12));
  }
  c.scale_low = _mm512_load_si512(kScaleLow);
  c.scale_high = _mm512_load_si512(kScaleHigh);
  c.scale_low_mask = _mm512_load_si512(kScaleLowMask);
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < 2; ++i) c.transpose[s][i] = _mm512_load_si512(kTranspose[s][i]);
  }
  return c;
}

// What one group adds to a row's 16 lanes, in this order
// for h = 0, 1: acc = acc + t[h] coef[h], then acc = acc - mins[h] total[h]
// (one rounding each; total[h] = T of half h, the group's klanes[16 h, 16 h +
// 16)). t = CombineDigits
// of the lane's 4 digit sums, coef = (d_h sc) 2^(e - 29), mins = dmin m.
struct KGroupTerms {
  __m512 t[2], coef[2], mins[2];
};

// The terms of a group from its loaded vectors (LoadGroup, or
// PackedTailKVnni's: 8 quant vectors v, the 4 heads, Q5_K's qh): the
// transpose, 8 digit sums (4 digits x the two halves, 8 vpdpbusd each), the
// scales and mins of the heads. Q5_K: lane j = 4 L + i of quad vector `quad`
// takes qh dword `quad` of super-block L (vpermt2d), whose bit 2 i + h of
// each byte becomes bit 4 of the quant byte (vpsrlvd); d is not divided for
// the high nibbles.
template <class Format>
CORTIQ_VNNI_TARGET __attribute__((always_inline)) inline KGroupTerms GroupTermsVnni(
    __m512i (&v)[8], __m512i head, const __m512i (&qh)[2], const int8_t* digits,
    const float* lanes, const KVnniConstants& c) {
  // Three butterfly stages turn the 8 per-chunk loads into 8 per-quad vectors.
  for (int s = 0; s < 3; ++s) {
    for (int n = 0; n < 8; ++n) {
      if (n & (1 << s)) continue;
      const __m512i a = v[n], b = v[n | (1 << s)];
      v[n] = _mm512_permutex2var_epi32(a, c.transpose[s][0], b);
      v[n | (1 << s)] = _mm512_permutex2var_epi32(a, c.transpose[s][1], b);
    }
  }
  __m512i sum[2][kDigits];
  for (int h = 0; h < 2; ++h) {
    for (int k = 0; k < kDigits; ++k) sum[h][k] = _mm512_setzero_si512();
  }
  // v[quad] lane j: 4 quant bytes of chunk j. Q4_K's high nibbles stay in
  // place (16 q).
  for (int quad = 0; quad < 8; ++quad) {
    __m512i low = _mm512_and_si512(v[quad], c.nibble);
    __m512i high;
    if constexpr (Format::kHighBit) {
      const __m512i bits = _mm512_permutex2var_epi32(
          qh[0], _mm512_add_epi32(c.qh_index, _mm512_set1_epi32(quad)), qh[1]);
      high = _mm512_and_si512(_mm512_srli_epi16(v[quad], 4), c.nibble);
      low = _mm512_or_si512(
          low, _mm512_slli_epi32(
                   _mm512_and_si512(_mm512_srlv_epi32(bits, c.bit_count[0]), c.low_bit), 4));
      high = _mm512_or_si512(
          high, _mm512_slli_epi32(
                    _mm512_and_si512(_mm512_srlv_epi32(bits, c.bit_count[1]), c.low_bit), 4));
    } else {
      (void)qh;
      high = _mm512_andnot_si512(c.nibble, v[quad]);
    }
    for (int k = 0; k < kDigits; ++k) {
      sum[0][k] =
          _mm512_dpbusd_epi32(sum[0][k], low, _mm512_load_si512(digits + 64 * (4 * quad + k)));
      sum[1][k] = _mm512_dpbusd_epi32(sum[1][k], high,
                                      _mm512_load_si512(digits + 64 * (32 + 4 * quad + k)));
    }
  }
  KGroupTerms terms;
  for (int h = 0; h < 2; ++h) terms.t[h] = CombineDigitsVnni(sum[h]);
  // Scales and mins: [sc_lo, sc_hi, m_lo, m_hi] bytes in each lane.
  const __m512i lo = _mm512_shuffle_epi8(head, c.scale_low);
  const __m512i hi = _mm512_shuffle_epi8(head, c.scale_high);
  const __m512i low_part = _mm512_mask_blend_epi8(
      kMinHighNibbleBytes, _mm512_and_si512(lo, c.scale_low_mask),
      _mm512_and_si512(_mm512_srli_epi16(lo, 4), c.nibble));
  const __m512i packed =
      _mm512_or_si512(low_part, _mm512_and_si512(_mm512_srli_epi16(hi, 2), c.high_bits));
  const __m512i dd = _mm512_shuffle_epi32(head, _MM_PERM_AAAA);
  const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dd));
  const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dd, 16)));
  const __m512 dh[2] = {d, Format::kHighBit ? d : _mm512_mul_ps(d, _mm512_set1_ps(0.0625f))};
  for (int h = 0; h < 2; ++h) {
    const __m512 sc = _mm512_cvtepi32_ps(_mm512_shuffle_epi8(packed, c.byte_of[h]));
    const __m512 m = _mm512_cvtepi32_ps(_mm512_shuffle_epi8(packed, c.byte_of[2 + h]));
    terms.coef[h] = _mm512_mul_ps(_mm512_mul_ps(dh[h], sc), _mm512_load_ps(lanes + 32 + 16 * h));
    terms.mins[h] = _mm512_mul_ps(dmin, m);
  }
  return terms;
}

// acc plus a group's terms (KGroupTerms: the two halves in turn).
CORTIQ_VNNI_TARGET __attribute__((always_inline)) inline __m512 AddGroupTerms(
    const KGroupTerms& terms, const float* lanes, __m512 acc) {
  for (int h = 0; h < 2; ++h) {
    acc = _mm512_fmadd_ps(terms.t[h], terms.coef[h], acc);
    acc = _mm512_fnmadd_ps(terms.mins[h], _mm512_load_ps(lanes + 16 * h), acc);
  }
  return acc;
}

// acc plus groups [g0, g1) of one row: per group, GroupTermsVnni and
// AddGroupTerms (one row at a time: two rows' vectors and sums spill the 32
// registers; measured slower). While group g0 + i is read, the group's bytes
// at prefetch + i * (group bytes) are prefetched (a hint: any address), into
// L1, or into L2 with kToL2. Not inlined: inlined into the passes of four
// long rows it measured half as fast (session 38, 2560 x 10240 from cache,
// one thread: 13-15 -> 6-7 GB/s), spilling around the four accumulators.
template <class Format, bool kToL2 = false>
CORTIQ_VNNI_TARGET __m512 RowKVnni(const uint8_t* row, size_t superblocks, size_t g0, size_t g1,
                                   const int8_t* kdigits, const float* klanes,
                                   const uint8_t* prefetch, __m512 acc) {
  constexpr size_t kGroupBytes = kSuperBlocksPerGroup * Format::kBlockBytes;
  const KVnniConstants c = LoadKVnniConstants();
  for (size_t g = g0; g < g1; ++g) {
    vnni_internal::PrefetchLines<kToL2>(
        vnni_internal::PrefetchAddress(prefetch, (g - g0) * kGroupBytes), kGroupBytes + 64);
    const int8_t* digits = kdigits + g * kKDigitBytes;
    const float* lanes = klanes + g * kKLaneFloats * 2;
    __m512i head;
    __m512i v[8];
    __m512i qh[2];
    LoadGroup<Format>(row, g, superblocks, v, head, qh);
    acc = AddGroupTerms(GroupTermsVnni<Format>(v, head, qh, digits, lanes, c), lanes, acc);
  }
  return acc;
}

// Lanes [4 kTail p, 4 kTail (p + 1)) of x moved to [0, 4 kTail), +0 in the
// others (valignd: lane i takes lane i + 4 kTail p; its shift is an immediate).
template <size_t kTail>
CORTIQ_VNNI_TARGET __attribute__((always_inline)) inline __m512 RowLanesDown(__m512 x, int p) {
  constexpr __mmask16 kRowLanes = static_cast<__mmask16>((1u << (4 * kTail)) - 1);
  const __m512i xi = _mm512_castps_si512(x);
  __m512i shifted = xi;
  switch (4 * kTail * static_cast<size_t>(p)) {
    case 4: shifted = _mm512_alignr_epi32(xi, xi, 4); break;
    case 8: shifted = _mm512_alignr_epi32(xi, xi, 8); break;
    case 12: shifted = _mm512_alignr_epi32(xi, xi, 12); break;
    default: break;
  }
  return _mm512_maskz_mov_ps(kRowLanes, _mm512_castsi512_ps(shifted));
}

// The last group of kPack rows (rows[p], each of `superblocks` super-blocks,
// TailSuperBlocks(superblocks) = 4 / kPack of them in the last group) in one pass
// (TailPack above): slot L = tail p + l holds super-block l of row p's tail.
// acc[p] gets what RowKVnni adds for that group on row p alone, bit for bit:
// its lanes [4 tail p, 4 tail p + 4 tail) moved to lanes [0, 4 tail), and
// +0 terms in the other lanes, as the zero weights past a row's end give
// there. Prefetches each row's tail at + `ahead` bytes (into L2 with kToL2).
template <class Format, int kPack, bool kToL2 = false>
CORTIQ_VNNI_TARGET void PackedTailKVnni(const uint8_t* const (&rows)[kPack], size_t superblocks,
                                        size_t groups, const int8_t* kdigits,
                                        const float* klanes, size_t ahead,
                                        __m512* const (&acc)[kPack]) {
  constexpr size_t kTail = kSuperBlocksPerGroup / kPack;
  const size_t first = superblocks - kTail;
  for (int p = 0; p < kPack; ++p) {
    vnni_internal::PrefetchLines<kToL2>(
        vnni_internal::PrefetchAddress(rows[p], first * Format::kBlockBytes + ahead),
        kTail * Format::kBlockBytes + 64);
  }
  const KVnniConstants c = LoadKVnniConstants();
  const int8_t* digits = kdigits + (groups - 1) * kKDigitBytes;
  const float* lanes = klanes + (groups - 1) * kKLaneFloats * 2;
  const uint8_t* sb[4];
  for (size_t L = 0; L < 4; ++L) {
    sb[L] = rows[L / kTail] + (first + L % kTail) * Format::kBlockBytes;
  }
  __m512i v[8];
  for (size_t L = 0; L < 4; ++L) {
    v[2 * L] = _mm512_loadu_si512(sb[L] + Format::kQs);
    v[2 * L + 1] = _mm512_loadu_si512(sb[L] + Format::kQs + 64);
  }
  const auto head_of = [&](size_t L) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb[L]));
  };
  __m512i head = _mm512_castsi128_si512(head_of(0));
  head = _mm512_inserti32x4(head, head_of(1), 1);
  head = _mm512_inserti32x4(head, head_of(2), 2);
  head = _mm512_inserti32x4(head, head_of(3), 3);
  __m512i qh[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
  if constexpr (Format::kHighBit) {
    for (size_t n = 0; n < 2; ++n) {
      qh[n] = _mm512_inserti64x4(
          _mm512_castsi256_si512(
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb[2 * n] + Format::kQh))),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb[2 * n + 1] + Format::kQh)), 1);
    }
  }
  const KGroupTerms terms = GroupTermsVnni<Format>(v, head, qh, digits, lanes, c);
  for (int p = 0; p < kPack; ++p) {
    KGroupTerms row_terms;
    for (int h = 0; h < 2; ++h) {
      row_terms.t[h] = RowLanesDown<kTail>(terms.t[h], p);
      row_terms.coef[h] = RowLanesDown<kTail>(terms.coef[h], p);
      row_terms.mins[h] = RowLanesDown<kTail>(terms.mins[h], p);
    }
    // T: lanes [0, 4 tail) hold the tail's, the others the padding's +0.
    *acc[p] = AddGroupTerms(row_terms, lanes, *acc[p]);
  }
}

// acc[r - r0] plus the last group of rows [r0, r1) (rows row_bytes apart at
// base): TailPack(superblocks) rows per PackedTailKVnni pass, the 0-3 rows
// left one at a time. Each row's tail is prefetched at + `ahead` bytes. Only
// where TailPack(superblocks) > 1, with acc[r - r0] holding groups
// [0, groups - 1) of row r (with TailPack 1 nobody skips the last group, and
// this would add it twice).
template <class Format, bool kToL2>
CORTIQ_VNNI_TARGET void AddTailGroups(const uint8_t* base, size_t row_bytes, size_t superblocks,
                                      size_t groups, const int8_t* kdigits, const float* klanes,
                                      size_t r0, size_t r1, size_t ahead, __m512* acc) {
  constexpr size_t kGroupBytes = kSuperBlocksPerGroup * Format::kBlockBytes;
  size_t r = r0;
  if (TailPack(superblocks) == 2) {
    for (; r + 2 <= r1; r += 2) {
      const uint8_t* const rows[2] = {base + r * row_bytes, base + (r + 1) * row_bytes};
      __m512* const accs[2] = {&acc[r - r0], &acc[r - r0 + 1]};
      PackedTailKVnni<Format, 2, kToL2>(rows, superblocks, groups, kdigits, klanes, ahead, accs);
    }
  } else if (TailPack(superblocks) == 4) {
    for (; r + 4 <= r1; r += 4) {
      const uint8_t* const rows[4] = {base + r * row_bytes, base + (r + 1) * row_bytes,
                                      base + (r + 2) * row_bytes, base + (r + 3) * row_bytes};
      __m512* const accs[4] = {&acc[r - r0], &acc[r - r0 + 1], &acc[r - r0 + 2],
                               &acc[r - r0 + 3]};
      PackedTailKVnni<Format, 4, kToL2>(rows, superblocks, groups, kdigits, klanes, ahead, accs);
    }
  }
  for (; r < r1; ++r) {
    const uint8_t* row = base + r * row_bytes;
    acc[r - r0] = RowKVnni<Format, kToL2>(
        row, superblocks, groups - 1, groups, kdigits, klanes,
        vnni_internal::PrefetchAddress(row, (groups - 1) * kGroupBytes + ahead), acc[r - r0]);
  }
}

// y[r] for r in [row_begin, row_end), one row after the other (rows
// row_bytes apart at base, `groups` groups each), the tails of TailPack rows
// at once (AddTailGroups), each row's bytes prefetched `ahead` bytes ahead
// (into L2 with kToL2): the reads go down the matrix, the tails of a pack
// just after the pack's other groups. Two rows at a time (sharing the digit
// loads) measured no faster: with the constants their vectors and sums spill.
template <class Format, bool kToL2>
CORTIQ_VNNI_TARGET void RowsOneByOneKVnni(const uint8_t* base, size_t row_bytes,
                                          size_t superblocks, size_t groups,
                                          const int8_t* kdigits, const float* klanes,
                                          size_t row_begin, size_t row_end, size_t ahead,
                                          float* y) {
  const size_t pack = TailPack(superblocks);
  const size_t own_groups = pack > 1 ? groups - 1 : groups;
  size_t r = row_begin;
  for (; r + pack <= row_end; r += pack) {
    __m512 acc[4];
    for (size_t i = 0; i < pack; ++i) {
      const uint8_t* row = base + (r + i) * row_bytes;
      acc[i] = RowKVnni<Format, kToL2>(row, superblocks, 0, own_groups, kdigits, klanes,
                                       vnni_internal::PrefetchAddress(row, ahead),
                                       _mm512_setzero_ps());
    }
    if (pack > 1) {
      AddTailGroups<Format, kToL2>(base, row_bytes, superblocks, groups, kdigits, klanes, r,
                                   r + pack, ahead, acc);
    }
    for (size_t i = 0; i < pack; ++i) y[r + i] = vnni_internal::ReduceTree16Vnni(acc[i]);
  }
  for (; r < row_end; ++r) {
    const uint8_t* row = base + r * row_bytes;
    y[r] = vnni_internal::ReduceTree16Vnni(
        RowKVnni<Format, kToL2>(row, superblocks, 0, groups, kdigits, klanes,
                                vnni_internal::PrefetchAddress(row, ahead), _mm512_setzero_ps()));
  }
}

// Rows of kKColumnBlockedMinGroups groups or more (their digits, 4 KiB per
// group, do not stay in L1 beside the weight stream) are taken kRowBlock rows
// at a time, those rows one column block of at most kKColumnBlockMaxGroups
// groups at a time; each row keeps its 16-lane accumulator across the column
// blocks and adds its groups in column order, so the bits are the same.
constexpr size_t kKColumnBlockedMinGroups = 4;
constexpr size_t kKColumnBlockMaxGroups = 2;

// y[r] for r in [row_begin, row_end) by RowKVnni (rows row_bytes apart at
// base, `groups` groups each) and, where TailPack(superblocks) > 1, the last
// group of TailPack rows at once (PackedTailKVnni). Every row adds its groups
// in column order, whatever the streaming: the same bits.
template <class Format>
CORTIQ_VNNI_TARGET void RowRangeKVnni(const uint8_t* base, size_t row_bytes, size_t superblocks,
                                      size_t groups, const int8_t* kdigits, const float* klanes,
                                      size_t row_begin, size_t row_end, float* y) {
  constexpr size_t kGroupBytes = kSuperBlocksPerGroup * Format::kBlockBytes;
  // The groups each row sums alone: all, or all but the packed last one.
  const size_t pack = TailPack(superblocks);
  const size_t own_groups = pack > 1 ? groups - 1 : groups;
  // Long rows where DecodePrefetchIntoL2() (Zen 4): four rows per pass, a group
  // of each in turn, prefetched into L2 whole passes ahead (four streams, as
  // the Q4_0x16 kernel's, ops/linear_vnni.cc RowRangeVnni); their
  // digits then come from L2. RowKVnni runs per row and group: its constants,
  // 8 sums and 8 vectors already fill the 32 registers, and with four
  // accumulators more the kernel measured ~20% slower from cache.
  // Short rows stay one at a time but for their last group (TailPack), which
  // a pack of rows shares (in passes of four, a group of each in
  // turn, they measured slower: E4B 10240 x 2560 17-18 against 18-24 GB/s).
  // Session 37, Zen 4 VM, E2B Q4_K_M decode, interleaved: 14.4-15.4 ->
  // 16.1-17.0 tok/s (all rows in passes of four: 14.9-15.8).
  const bool into_l2 = DecodePrefetchIntoL2();
  if (into_l2 && groups >= kKColumnBlockedMinGroups) {
    const size_t ahead = WholePassesAhead(4 * row_bytes, kIntoL2PrefetchMinBytes);
    for (; row_begin + 4 <= row_end; row_begin += 4) {
      const size_t r = row_begin;
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps()};
      for (size_t g = 0; g < own_groups; ++g) {
        for (size_t i = 0; i < 4; ++i) {
          const uint8_t* row = base + (r + i) * row_bytes;
          acc[i] = RowKVnni<Format, /*kToL2=*/true>(
              row, superblocks, g, g + 1, kdigits, klanes,
              vnni_internal::PrefetchAddress(row, g * kGroupBytes + ahead), acc[i]);
        }
      }
      if (pack > 1) {
        AddTailGroups<Format, /*kToL2=*/true>(base, row_bytes, superblocks, groups, kdigits,
                                              klanes, r, r + 4, ahead, acc);
      }
      for (size_t i = 0; i < 4; ++i) y[r + i] = vnni_internal::ReduceTree16Vnni(acc[i]);
    }
  }
  // Short rows (and, with into_l2, the 0-3 long rows left) one at a time;
  // with into_l2, prefetched into L2 >= 12 KiB ahead (one row at a time but
  // into L1 3 KiB ahead, as before session 38, read E4B's 10240 x 2560 at
  // 17.5 GB/s with 2 threads from DRAM; into L2 12-48 KiB ahead, 21-25).
  if (groups < kKColumnBlockedMinGroups || into_l2) {
    if (into_l2) {
      RowsOneByOneKVnni<Format, /*kToL2=*/true>(
          base, row_bytes, superblocks, groups, kdigits, klanes, row_begin, row_end,
          WholePassesAhead(pack * row_bytes, kIntoL2PrefetchMinBytes), y);
    } else {
      RowsOneByOneKVnni<Format, /*kToL2=*/false>(base, row_bytes, superblocks, groups, kdigits,
                                                 klanes, row_begin, row_end,
                                                 vnni_internal::kPrefetchBytes, y);
    }
    return;
  }
  using vnni_internal::kRowBlock;
  const size_t blocks = (own_groups + kKColumnBlockMaxGroups - 1) / kKColumnBlockMaxGroups;
  const size_t block_groups = (own_groups + blocks - 1) / blocks;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowBlock) {
    const size_t r1 = std::min(row_end, r0 + kRowBlock);
    __m512 acc[kRowBlock];
    for (size_t r = r0; r < r1; ++r) acc[r - r0] = _mm512_setzero_ps();
    for (size_t c0 = 0; c0 < own_groups; c0 += block_groups) {
      const size_t c1 = std::min(own_groups, c0 + block_groups);
      for (size_t r = r0; r < r1; ++r) {
        // What this pass reads next: the next row's span, else the block's
        // first row in the next column block, else the next row block (its
        // tails, AddTailGroups, prefetch themselves).
        const uint8_t* next =
            r + 1 < r1        ? base + (r + 1) * row_bytes + c0 * kGroupBytes
            : c1 < own_groups ? base + r0 * row_bytes + c1 * kGroupBytes
                              : vnni_internal::PrefetchAddress(base, r1 * row_bytes);
        acc[r - r0] = RowKVnni<Format>(base + r * row_bytes, superblocks, c0, c1, kdigits, klanes,
                                       next, acc[r - r0]);
      }
    }
    if (pack > 1) {
      AddTailGroups<Format, /*kToL2=*/false>(base, row_bytes, superblocks, groups, kdigits,
                                             klanes, r0, r1, vnni_internal::kPrefetchBytes, acc);
    }
    for (size_t r = r0; r < r1; ++r) y[r] = vnni_internal::ReduceTree16Vnni(acc[r - r0]);
  }
}

// --- AVX2: the same sums and f32 steps in two halves of 8 lanes ---

// The digits and lanes of KDigitsVnni from ActivationDigitsAvx2, rearranged
// by plain copies (kLaneBlock: lane j of half h is x16 lane 2 j + h of the
// group pair).
CORTIQ_AVX2_TARGET void KDigitsAvx2(const float* x, size_t cols, size_t groups, uint8_t* scratch,
                                    int8_t* kdigits, float* klanes) {
  const size_t padded_cols = groups * kKGroup;
  float* padded = reinterpret_cast<float*>(scratch);
  const float* xs = x;
  if (padded_cols != cols) {
    PadActivations(x, cols, padded_cols, padded);
    xs = padded;
  }
  const ActivationDigitsView a =
      vnni_internal::DigitsAt(scratch + padded_cols * sizeof(float), padded_cols, 1, 0);
  vnni_internal::ActivationDigitsAvx2(xs, padded_cols, a);
  for (size_t g = 0; g < groups; ++g) {
    int8_t* out = kdigits + g * kKDigitBytes;
    float* lanes = klanes + g * kKLaneFloats * 2;
    for (size_t h = 0; h < 2; ++h) {
      for (size_t j = 0; j < 16; ++j) {
        const size_t lane = kLaneBlock[h][j];
        const size_t s = 2 * g + lane / 16, src = lane % 16;
        const int8_t* in = a.digits + s * kGroupDigitBytes + 4 * src;
        for (size_t vk = 0; vk < 32; ++vk) memcpy(out + 64 * (32 * h + vk) + 4 * j, in + 64 * vk, 4);
        int32_t sums[kDigits];
        for (int k = 0; k < kDigits; ++k) sums[k] = a.sums[s * 64 + 16 * k + src];
        const float scale = a.scale[s * kGroupBlocks + src];
        lanes[16 * h + j] = CombineDigits(sums) * scale;
        lanes[32 + 16 * h + j] = scale;
      }
    }
  }
}

// CombineDigits lane-wise.
CORTIQ_AVX2_TARGET inline __m256 CombineDigitsAvx2(const __m256i (&s)[kDigits]) {
  const __m256i u = _mm256_add_epi32(s[0], _mm256_slli_epi32(s[1], 8));
  const __m256i v = _mm256_add_epi32(s[2], _mm256_slli_epi32(s[3], 8));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(65536.0f), _mm256_cvtepi32_ps(u));
}

// kRows rows (row_bytes apart), all groups, reduced to y[0..kRows): per group
// and half of lanes (super-blocks 2 p, 2 p + 1 of the group), the 8 chunk
// loads of each row transposed (vpunpck / vperm2i128) so that dword n of
// vector `quad` holds quant bytes [4 quad, 4 quad + 4) of chunk n; per nibble
// half and digit, 8 vpmaddubsw into 16-bit words (at most 8 * 3840, as
// ops/linear_digits_avx2.cc) widened by vpmaddwd, the rows sharing each digit
// load; the high nibbles are taken as q (shifted) and their sums times 16,
// which are the VNNI kernel's sums of 16 q exactly. Then the f32 steps of
// GroupTermsVnni / AddGroupTerms on the half's 8 lanes.
template <class Format, int kRows>
CORTIQ_AVX2_TARGET void RowsKAvx2(const uint8_t* row, size_t row_bytes, size_t superblocks,
                                  size_t groups, const int8_t* kdigits, const float* klanes,
                                  float* y) {
  constexpr size_t kGroupBytes = kSuperBlocksPerGroup * Format::kBlockBytes;
  // 16-bit words hold the pairs of this many quads at most: 8 * 2 * 15 * 128
  // (Q4_K), 4 * 2 * 31 * 128 = 31744 (Q5_K) < 2^15.
  constexpr int kQuadsPerWord = Format::kHighBit ? 4 : 8;
  const __m256i bit_count[2] = {_mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
                                _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)};
  const __m256i low_bits = _mm256_set1_epi8(1);
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i byte_of[4];
  for (int n = 0; n < 4; ++n) {
    byte_of[n] = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(0x80808000u) | n),
                                  _mm256_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12));
  }
  const __m256i high_bits = _mm256_set1_epi8(0x30);
  const __m256i scale_low = _mm256_load_si256(reinterpret_cast<const __m256i*>(kScaleLow));
  const __m256i scale_high = _mm256_load_si256(reinterpret_cast<const __m256i*>(kScaleHigh));
  const __m256i scale_low_mask =
      _mm256_load_si256(reinterpret_cast<const __m256i*>(kScaleLowMask));
  // Bytes 10, 11, 14, 15 of each 16 (kMinHighNibbleBytes).
  const __m256i min_high = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, -1, -1,
                                            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, -1, -1);
  __m256 acc[kRows][2];
  for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (size_t g = 0; g < groups; ++g) {
    for (int r = 0; r < kRows; ++r) {
      vnni_internal::PrefetchLines</*kToL2=*/false>(
          vnni_internal::PrefetchAddress(row + r * row_bytes,
                                         g * kGroupBytes + vnni_internal::kPrefetchBytes),
          kGroupBytes + 64);
    }
    const int8_t* digits = kdigits + g * kKDigitBytes;
    const float* lanes = klanes + g * kKLaneFloats * 2;
    for (int p = 0; p < 2; ++p) {
      // A pair wholly past the row's end: the scalar twin's steps on its zero
      // sums, scales and mins (the padding's digits are finite) amount to
      // adding +0 to every lane, which leaves each lane unchanged except a -0
      // (an underflowed product) that becomes +0. One addition does the same.
      if (kSuperBlocksPerGroup * g + 2 * p >= superblocks) {
        for (int r = 0; r < kRows; ++r) acc[r][p] = _mm256_add_ps(acc[r][p], _mm256_setzero_ps());
        continue;
      }
      // Kept in memory: the sums below need the registers more.
      alignas(32) __m256i quads[kRows][8];
      // Q5_K: dword `quad` of each super-block's qh, in the lanes of its chunks.
      alignas(32) __m256i high[kRows][8];
      __m256i packed[kRows];
      __m256 dv[kRows], dminv[kRows];
      for (int r = 0; r < kRows; ++r) {
        const uint8_t* base = row + r * row_bytes + g * kGroupBytes;
        // Chunks n = 4 L + i of super-blocks 2 p + L (zeros past the row's end).
        __m256i v[8];
        __m256i head = _mm256_setzero_si256();
        __m256i qh[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        float d[2] = {0.0f, 0.0f}, dmin[2] = {0.0f, 0.0f};
        for (int L = 0; L < 2; ++L) {
          const size_t b = kSuperBlocksPerGroup * g + 2 * p + L;
          const uint8_t* sb = base + (2 * p + L) * Format::kBlockBytes;
          for (int i = 0; i < 4; ++i) {
            v[4 * L + i] = b < superblocks ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                                 sb + Format::kQs + 32 * i))
                                           : _mm256_setzero_si256();
          }
          if constexpr (Format::kHighBit) {
            if (b < superblocks) {
              qh[L] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + Format::kQh));
            }
          }
          if (b < superblocks) {
            const __m128i h16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb));
            head = L == 0 ? _mm256_inserti128_si256(head, h16, 0)
                          : _mm256_inserti128_si256(head, h16, 1);
            uint16_t bits[2];
            memcpy(bits, sb, sizeof(bits));
            d[L] = _cvtsh_ss(bits[0]);
            dmin[L] = _cvtsh_ss(bits[1]);
          }
        }
        // 8 x 8 transpose of 32-bit words.
        __m256i t[8], u[8];
        for (int n = 0; n < 8; n += 2) {
          t[n] = _mm256_unpacklo_epi32(v[n], v[n + 1]);
          t[n + 1] = _mm256_unpackhi_epi32(v[n], v[n + 1]);
        }
        for (int n = 0; n < 8; n += 4) {
          u[n] = _mm256_unpacklo_epi64(t[n], t[n + 2]);
          u[n + 1] = _mm256_unpackhi_epi64(t[n], t[n + 2]);
          u[n + 2] = _mm256_unpacklo_epi64(t[n + 1], t[n + 3]);
          u[n + 3] = _mm256_unpackhi_epi64(t[n + 1], t[n + 3]);
        }
        for (int n = 0; n < 4; ++n) {
          quads[r][n] = _mm256_permute2x128_si256(u[n], u[n + 4], 0x20);
          quads[r][n + 4] = _mm256_permute2x128_si256(u[n], u[n + 4], 0x31);
        }
        if constexpr (Format::kHighBit) {
          for (int quad = 0; quad < 8; ++quad) {
            const __m256i index = _mm256_set1_epi32(quad);
            high[r][quad] = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(qh[0], index),
                                               _mm256_permutevar8x32_epi32(qh[1], index), 0xF0);
          }
        }
        // Scales and mins: [sc_lo, sc_hi, m_lo, m_hi] bytes in each lane.
        const __m256i lo = _mm256_shuffle_epi8(head, scale_low);
        const __m256i hi = _mm256_shuffle_epi8(head, scale_high);
        const __m256i low_part =
            _mm256_blendv_epi8(_mm256_and_si256(lo, scale_low_mask),
                               _mm256_and_si256(_mm256_srli_epi16(lo, 4), nibble), min_high);
        packed[r] =
            _mm256_or_si256(low_part, _mm256_and_si256(_mm256_srli_epi16(hi, 2), high_bits));
        dv[r] = _mm256_setr_m128(_mm_set1_ps(d[0]), _mm_set1_ps(d[1]));
        dminv[r] = _mm256_setr_m128(_mm_set1_ps(dmin[0]), _mm_set1_ps(dmin[1]));
      }
      for (int h = 0; h < 2; ++h) {
        __m256i sum[kRows][kDigits];
        for (int q0 = 0; q0 < 8; q0 += kQuadsPerWord) {
          __m256i words[kRows][kDigits];
          for (int r = 0; r < kRows; ++r) {
            for (int k = 0; k < kDigits; ++k) words[r][k] = _mm256_setzero_si256();
          }
#pragma GCC unroll 8
          for (int quad = q0; quad < q0 + kQuadsPerWord; ++quad) {
            __m256i q[kRows];
            for (int r = 0; r < kRows; ++r) {
              const __m256i bytes = _mm256_load_si256(&quads[r][quad]);
              q[r] = h == 0 ? _mm256_and_si256(bytes, nibble)
                            : _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble);
              if constexpr (Format::kHighBit) {
                // Bit 2 i + h of each qh byte to bit 4 of the quant byte.
                const __m256i bit = _mm256_and_si256(
                    _mm256_srlv_epi32(_mm256_load_si256(&high[r][quad]), bit_count[h]), low_bits);
                q[r] = _mm256_or_si256(q[r], _mm256_slli_epi32(bit, 4));
              }
            }
#pragma GCC unroll 4
            for (int k = 0; k < kDigits; ++k) {
              const __m256i digit = _mm256_load_si256(reinterpret_cast<const __m256i*>(
                  digits + 64 * (32 * h + 4 * quad + k) + 32 * p));
              for (int r = 0; r < kRows; ++r) {
                words[r][k] = _mm256_add_epi16(words[r][k], _mm256_maddubs_epi16(q[r], digit));
              }
            }
          }
          for (int r = 0; r < kRows; ++r) {
            for (int k = 0; k < kDigits; ++k) {
              const __m256i part = _mm256_madd_epi16(words[r][k], ones);
              sum[r][k] = q0 == 0 ? part : _mm256_add_epi32(sum[r][k], part);
            }
          }
        }
        const __m256 scale = _mm256_load_ps(lanes + 32 + 16 * h + 8 * p);
        const __m256 total = _mm256_load_ps(lanes + 16 * h + 8 * p);
        for (int r = 0; r < kRows; ++r) {
          if (!Format::kHighBit && h == 1) {
            // Q4_K: the VNNI kernel's sums of 16 q.
            for (int k = 0; k < kDigits; ++k) sum[r][k] = _mm256_slli_epi32(sum[r][k], 4);
          }
          const __m256 dh = h == 0 || Format::kHighBit
                                ? dv[r]
                                : _mm256_mul_ps(dv[r], _mm256_set1_ps(0.0625f));
          const __m256 sc = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(packed[r], byte_of[h]));
          const __m256 m = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(packed[r], byte_of[2 + h]));
          const __m256 t_sum = CombineDigitsAvx2(sum[r]);
          acc[r][p] =
              _mm256_fmadd_ps(t_sum, _mm256_mul_ps(_mm256_mul_ps(dh, sc), scale), acc[r][p]);
          acc[r][p] = _mm256_fnmadd_ps(_mm256_mul_ps(dminv[r], m), total, acc[r][p]);
        }
      }
    }
  }
  for (int r = 0; r < kRows; ++r) y[r] = vnni_internal::ReduceTree16Avx2(acc[r][0], acc[r][1]);
}

#endif

// LinearQ4_KVnni / LinearQ5_KVnni.
template <class Format>
void LinearKVnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                 size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
#if defined(__x86_64__)
  HWY_ASSERT(vnni_internal::VnniAvailable());
  if (row_begin == row_end) return;
  const size_t superblocks = cols / kSuperBlockSize;
  const size_t groups = (superblocks + kSuperBlocksPerGroup - 1) / kSuperBlocksPerGroup;
  const KScratch scratch = KScratchFor(groups);
  KDigitsVnni(x, cols, groups, scratch.x16, scratch.kdigits, scratch.klanes);
  RowRangeKVnni<Format>(static_cast<const uint8_t*>(w), superblocks * Format::kBlockBytes,
                        superblocks, groups, scratch.kdigits, scratch.klanes, row_begin, row_end,
                        y);
#else
  (void)w, (void)x, (void)y, (void)cols, (void)row_begin, (void)row_end;
  HWY_ABORT("LinearKVnni: no AVX-512 VNNI on this build");
#endif
}


// LinearQ4_KAvx2 / LinearQ5_KAvx2.
template <class Format>
void LinearKAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                 size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
#if defined(__x86_64__)
  HWY_ASSERT(vnni_internal::Avx2Available());
  if (row_begin == row_end) return;
  const size_t superblocks = cols / kSuperBlockSize;
  const size_t groups = (superblocks + kSuperBlocksPerGroup - 1) / kSuperBlocksPerGroup;
  const KScratch scratch = KScratchFor(groups);
  KDigitsAvx2(x, cols, groups, scratch.x16, scratch.kdigits, scratch.klanes);
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t row_bytes = superblocks * Format::kBlockBytes;
  size_t r = row_begin;
  for (; r + 2 <= row_end; r += 2) {
    RowsKAvx2<Format, 2>(base + r * row_bytes, row_bytes, superblocks, groups, scratch.kdigits,
                         scratch.klanes, y + r);
  }
  for (; r < row_end; ++r) {
    RowsKAvx2<Format, 1>(base + r * row_bytes, row_bytes, superblocks, groups, scratch.kdigits,
                         scratch.klanes, y + r);
  }
#else
  (void)w, (void)x, (void)y, (void)cols, (void)row_begin, (void)row_end;
  HWY_ABORT("LinearKAvx2: no AVX2 on this build");
#endif
}

// LinearQ4_KDigitsScalar / LinearQ5_KDigitsScalar.
template <class Format>
void LinearKDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  HWY_DASSERT(cols % kSuperBlockSize == 0);
  (void)rows;
  if (row_begin == row_end) return;
  const size_t superblocks = cols / kSuperBlockSize;
  const size_t groups = (superblocks + kSuperBlocksPerGroup - 1) / kSuperBlocksPerGroup;
  const size_t padded_cols = groups * kKGroup;
  const size_t padded_bytes = (padded_cols * sizeof(float) + 63) / 64 * 64;
  uint8_t* scratch =
      vnni_internal::ThreadScratch(padded_bytes + vnni_internal::DigitsBytes(padded_cols, 1));
  float* padded = reinterpret_cast<float*>(scratch);
  PadActivations(x, cols, padded_cols, padded);
  const ActivationDigitsView a = vnni_internal::DigitsAt(scratch + padded_bytes, padded_cols, 1, 0);
  ActivationDigitsScalar(padded, padded_cols, a);
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t row_bytes = superblocks * Format::kBlockBytes;
  for (size_t r = row_begin; r < row_end; ++r) {
    y[r] = RowKDigitsScalar<Format>(base + r * row_bytes, superblocks, groups, a);
  }
}

}  // namespace

void LinearQ4_KVnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end) {
  LinearKVnni<Q4_KDigitFormat>(w, x, y, rows, cols, row_begin, row_end);
}
void LinearQ5_KVnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end) {
  LinearKVnni<Q5_KDigitFormat>(w, x, y, rows, cols, row_begin, row_end);
}
void LinearQ4_KAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end) {
  LinearKAvx2<Q4_KDigitFormat>(w, x, y, rows, cols, row_begin, row_end);
}
void LinearQ5_KAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end) {
  LinearKAvx2<Q5_KDigitFormat>(w, x, y, rows, cols, row_begin, row_end);
}
void LinearQ4_KDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                            size_t row_begin, size_t row_end) {
  LinearKDigitsScalar<Q4_KDigitFormat>(w, x, y, rows, cols, row_begin, row_end);
}
void LinearQ5_KDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                            size_t row_begin, size_t row_end) {
  LinearKDigitsScalar<Q5_KDigitFormat>(w, x, y, rows, cols, row_begin, row_end);
}

}  // namespace ops
}  // namespace cortiq
