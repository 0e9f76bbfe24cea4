// AVX-512 dot products of one super-block row (SuperBlockScales +
// SuperBlockDotScaled) for Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS
// (ops/quantize_k.h, ops/quantize_iq4.h): the AVX3 targets' replacement of the
// portable SuperBlockDot in ops/kquant_block-inl.h, used by
// ops/linear_superblock-inl.h.
//
// Each sub-block's weights are produced as their exact f32 values (the
// values of DequantizeRow*) and multiplied into the accumulators, so the
// result is the f32 dot product of the dequantized row, with no scale or min
// terms of its own. The decoding is a table lookup: for sub-block k the 16
// possible values of a 4-bit quant, t_k[q] = scale_k * q - min_k (rounded
// once, as llama.cpp dequantizes), form one register, and vpermps picks a
// lane of it per weight (it reads only the low 4 bits of each index, so
// neighbouring bits of the packed quants need no masking; the 2- and 3-bit
// quants of Q2_K / Q3_K index tables repeated every 4 / 8 lanes, the 5-bit
// quants of Q5_K a two-register table, vpermt2ps). Building a table costs one
// FMA with the scale and min broadcast from memory, i.e. less than the
// per-sub-block scale FMA and the separate min sum it replaces. Q6_K's
// 16-weight sub-blocks are too short for tables: its quants are assembled
// byte-wise for 128 weights at a time, widened (vpmovsxbd) and converted.
//
// Per-target code (Highway "toggle" include guard); empty except on AVX3.

#if defined(CORTIQ_OPS_KQUANT_DOT_AVX3_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_KQUANT_DOT_AVX3_INL_H_
#undef CORTIQ_OPS_KQUANT_DOT_AVX3_INL_H_
#else
#define CORTIQ_OPS_KQUANT_DOT_AVX3_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "ops/kquant_block-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

namespace avx3 {

// The compiler keeps a just-stored scale vector in a register and would
// broadcast its lanes with shuffles (one vector instruction each); after this
// barrier it reloads them, as broadcast memory operands ({1to16}) that cost
// no vector instruction.
HWY_INLINE void ReloadScales() { asm volatile("" ::: "memory"); }

HWY_INLINE __m512 Iota() {
  return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

HWY_INLINE __m512i Bytes16(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// v << kShift (kShift > 0) or v >> -kShift, per 32-bit lane.
template <int kShift>
HWY_INLINE __m512i Shift(__m512i v) {
  if constexpr (kShift > 0) {
    return _mm512_slli_epi32(v, kShift);
  } else if constexpr (kShift < 0) {
    return _mm512_srli_epi32(v, -kShift);
  } else {
    return v;
  }
}

// (mask & a) | (~mask & b), bitwise.
HWY_INLINE __m512i Select(__m512i mask, __m512i a, __m512i b) {
  return _mm512_ternarylogic_epi32(mask, a, b, 0xCA);
}

// Q4_K / Q5_K: out[2k] = d * sc_k, out[2k + 1] = dmin * m_k (k < 8; KScaleMin,
// four at a time: bytes 0..3 of the 12 are sc 0..3, 4..7 m 0..3, and the high
// 2 bits of sc / m 4..7 are bits 6, 7 of bytes 0..3 / 4..7). Reads the 16
// bytes from `scales` (the 12 scale bytes and 4 quant bytes after them).
HWY_INLINE void KScaleMins(const uint8_t* block, const uint8_t* scales,
                           float* HWY_RESTRICT out) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales));
  // Words [a, c, b, c >> 4] and [a >> 2, a >> 2, b >> 2, b >> 2] (a, b, c the
  // scale bytes 0..3, 4..7, 8..11): sc 0..3, sc 4..7, m 0..3, m 4..7.
  const __m128i t1 = _mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)),
                                    _mm_setr_epi32(0, 0, 0, 4));
  const __m128i t2 = _mm_srli_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0)), 2);
  const __m128i words = _mm_ternarylogic_epi32(
      _mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F), t1,
      _mm_and_si128(t2, _mm_setr_epi32(0, 0x30303030, 0, 0x30303030)), 0xEA);
  // 0xEA: (A & B) | C. Interleave to sc0, m0, sc1, m1, ...
  const __m128i bytes = _mm_shuffle_epi8(
      words, _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
  uint32_t dd;
  memcpy(&dd, block, sizeof(dd));  // f16 d, dmin
  const __m512 coef = _mm512_cvtph_ps(_mm256_set1_epi32(static_cast<int>(dd)));
  _mm512_store_ps(out, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)), coef));
}

// Chunk c of a Q4_K super-block: weights 64c + [0, 32) (sub-block 2c: low
// nibbles of qs[32c, 32c + 32)) and 64c + [32, 64) (sub-block 2c + 1: high
// nibbles).
HWY_INLINE void Q4_KChunk(const uint8_t* qs, const float* sm, const float* x, size_t c,
                          __m512& a0, __m512& a1) {
  const __m512 iota = Iota();
  const __m512 t_lo =
      _mm512_fmsub_ps(iota, _mm512_set1_ps(sm[4 * c]), _mm512_set1_ps(sm[4 * c + 1]));
  const __m512 t_hi =
      _mm512_fmsub_ps(iota, _mm512_set1_ps(sm[4 * c + 2]), _mm512_set1_ps(sm[4 * c + 3]));
  const __m512i p0 = Bytes16(qs + 32 * c), p1 = Bytes16(qs + 32 * c + 16);
  const float* xc = x + 64 * c;
  a0 = _mm512_fmadd_ps(_mm512_permutexvar_ps(p0, t_lo), _mm512_loadu_ps(xc), a0);
  a1 = _mm512_fmadd_ps(_mm512_permutexvar_ps(p1, t_lo), _mm512_loadu_ps(xc + 16), a1);
  a0 = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(p0, 4), t_hi),
                       _mm512_loadu_ps(xc + 32), a0);
  a1 = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(p1, 4), t_hi),
                       _mm512_loadu_ps(xc + 48), a1);
}

// Chunk c of a Q5_K super-block: as Q4_K with the fifth bit (bit 2c / 2c + 1
// of qh[l]) as bit 4 of a vpermt2ps index into the 32 values of the
// sub-block. h0 / h1: qh[0, 16) / qh[16, 32) widened to 32-bit lanes.
template <int c>
HWY_INLINE void Q5_KChunk(const uint8_t* qs, const float* sm, const float* x, __m512i h0,
                          __m512i h1, __m512& a0, __m512& a1) {
  const __m512 iota = Iota();
  const __m512 iota16 = _mm512_add_ps(iota, _mm512_set1_ps(16.0f));
  const __m512 ds_lo = _mm512_set1_ps(sm[4 * c]), dm_lo = _mm512_set1_ps(sm[4 * c + 1]);
  const __m512 ds_hi = _mm512_set1_ps(sm[4 * c + 2]), dm_hi = _mm512_set1_ps(sm[4 * c + 3]);
  const __m512 lo0 = _mm512_fmsub_ps(iota, ds_lo, dm_lo);
  const __m512 lo1 = _mm512_fmsub_ps(iota16, ds_lo, dm_lo);
  const __m512 hi0 = _mm512_fmsub_ps(iota, ds_hi, dm_hi);
  const __m512 hi1 = _mm512_fmsub_ps(iota16, ds_hi, dm_hi);
  const __m512i m0F = _mm512_set1_epi32(0x0F);
  const __m512i p0 = Bytes16(qs + 32 * c), p1 = Bytes16(qs + 32 * c + 16);
  // Index bits 0..3: the nibble; bit 4: the qh bit moved there (vpermt2ps
  // reads bits 0..4 only, so the other moved bits do not matter).
  const __m512i i0 = Select(m0F, p0, Shift<4 - 2 * c>(h0));
  const __m512i i1 = Select(m0F, p1, Shift<4 - 2 * c>(h1));
  const __m512i j0 = Select(m0F, _mm512_srli_epi32(p0, 4), Shift<3 - 2 * c>(h0));
  const __m512i j1 = Select(m0F, _mm512_srli_epi32(p1, 4), Shift<3 - 2 * c>(h1));
  const float* xc = x + 64 * c;
  a0 = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo0, i0, lo1), _mm512_loadu_ps(xc), a0);
  a1 = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo0, i1, lo1), _mm512_loadu_ps(xc + 16), a1);
  a0 = _mm512_fmadd_ps(_mm512_permutex2var_ps(hi0, j0, hi1), _mm512_loadu_ps(xc + 32), a0);
  a1 = _mm512_fmadd_ps(_mm512_permutex2var_ps(hi0, j1, hi1), _mm512_loadu_ps(xc + 48), a1);
}

// Half h of a Q3_K / Q2_K super-block: weights 128h + 32t + l (t < 4, l <
// 32); sub-block 8h + 2t + l / 16. Q3_K: index bits 0, 1 from qs (bits 2t of
// qs[32h + l]) and bit 2 from hmask (bit 4h + t of hmask[l]) into tables
// repeated every 8 lanes; Q2_K: bits 0, 1 only, tables repeated every 4.
template <bool kQ3, int h>
HWY_INLINE void SmallHalf(const uint8_t* qs, const uint8_t* hmask, const float* sm,
                          const float* mins, const float* x, __m512& a0, __m512& a1) {
  // Q3_K: (q - 4) per lane i % 8; Q2_K: q per lane i % 4.
  const __m512 base = kQ3 ? _mm512_setr_ps(-4, -3, -2, -1, 0, 1, 2, 3, -4, -3, -2, -1, 0, 1, 2, 3)
                          : _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
  const __m512i m03 = _mm512_set1_epi32(0x03);
  for (size_t lh = 0; lh < 32; lh += 16) {
    const __m512i b = Bytes16(qs + 32 * h + lh);
    __m512i m = _mm512_setzero_si512();
    if constexpr (kQ3) m = Bytes16(hmask + lh);
    __m512i idx[4] = {b, _mm512_srli_epi32(b, 2), _mm512_srli_epi32(b, 4),
                      _mm512_srli_epi32(b, 6)};
    if constexpr (kQ3) {
      // Bit 4h + t of m to bit 2.
      idx[0] = Select(m03, idx[0], Shift<2 - 4 * h>(m));
      idx[1] = Select(m03, idx[1], Shift<1 - 4 * h>(m));
      idx[2] = Select(m03, idx[2], Shift<0 - 4 * h>(m));
      idx[3] = Select(m03, idx[3], Shift<-1 - 4 * h>(m));
    }
    for (size_t t = 0; t < 4; ++t) {
      const size_t k = 8 * h + 2 * t + lh / 16;
      const __m512 table =
          kQ3 ? _mm512_mul_ps(base, _mm512_set1_ps(sm[k]))
              : _mm512_fmsub_ps(base, _mm512_set1_ps(sm[k]), _mm512_set1_ps(mins[k]));
      const __m512 w = _mm512_permutexvar_ps(idx[t], table);
      const __m512 xv = _mm512_loadu_ps(x + 128 * h + 32 * t + lh);
      if (t % 2 == 0) {
        a0 = _mm512_fmadd_ps(w, xv, a0);
      } else {
        a1 = _mm512_fmadd_ps(w, xv, a1);
      }
    }
  }
}

// Half h of a Q6_K super-block (128 weights): the quants assembled byte-wise
// (64 bytes of ql, 32 of qh), minus 32 as int8, then per 16 weights widened,
// converted and scaled (exact: at most 8 + 6 + 11 significant bits).
HWY_INLINE void Q6_KHalf(const uint8_t* block, size_t h, const float* sm, const float* x,
                         __m512& a0, __m512& a1) {
  const __m512i ql = _mm512_loadu_si512(block + 64 * h);
  const __m512i qh = _mm512_broadcast_i64x4(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + kQ6_KQh + 32 * h)));
  const __m512i m0F = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
  const __m512i lo = _mm512_and_si512(ql, m0F);                         // t = 0, 1
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(ql, 4), m0F);  // t = 2, 3
  // Bits 4, 5 of each quant: qh bits 2t, 2t + 1 moved to bits 4, 5 (16-bit
  // shifts: the bits a byte receives from its neighbour are masked off).
  const __m512i h01 = _mm512_sllv_epi16(
      qh, _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1));
  const __m512i h23 = _mm512_srlv_epi16(
      qh, _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1));
  const __m512i bias = _mm512_set1_epi8(32);
  // (A & B) | C = 0xEA; minus 32: the signed quants.
  const __m512i q01 = _mm512_sub_epi8(_mm512_ternarylogic_epi32(h01, m30, lo, 0xEA), bias);
  const __m512i q23 = _mm512_sub_epi8(_mm512_ternarylogic_epi32(h23, m30, hi, 0xEA), bias);
  // Stored and widened from memory (a load and one shuffle per 16 weights,
  // cheaper than extracting the 128-bit lanes).
  HWY_ALIGN int8_t q[128];  // weights 128h + [0, 128) in order
  _mm512_store_si512(q, q01);
  _mm512_store_si512(q + 64, q23);
  ReloadScales();
  const float* xh = x + 128 * h;
  const float* sh = sm + 8 * h;
  for (size_t g = 0; g < 8; ++g) {
    // Sub-block 8h + g: weights 128h + 16g + [0, 16).
    const __m512 w = _mm512_mul_ps(
        _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
            _mm_load_si128(reinterpret_cast<const __m128i*>(q + 16 * g)))),
        _mm512_set1_ps(sh[g]));
    if (g % 2 == 0) {
      a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(xh + 16 * g), a0);
    } else {
      a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(xh + 16 * g), a1);
    }
  }
}

// Q3_K: out[k] = d * (s_k - 32), k < 16 (Q3_KScale, four at a time as
// Q3_KScales; the 12 scale bytes read by a masked load, as the 16 bytes from
// there would run past the block).
HWY_INLINE void Q3_KScales(const uint8_t* block, float* HWY_RESTRICT out) {
  const __m128i v = _mm_maskz_loadu_epi8(0x0FFF, block + kQ3_KScales);
  // Low 4 bits: words [a, b, a >> 4, b >> 4]; high 2: [t, t >> 2, t >> 4,
  // t >> 6] (a, b, t the scale bytes 0..3, 4..7, 8..11).
  const __m128i lo = _mm_and_si128(
      _mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 1, 0)), _mm_setr_epi32(0, 0, 4, 4)),
      _mm_set1_epi32(0x0F0F0F0F));
  const __m128i hi = _mm_and_si128(
      _mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(2, 2, 2, 2)), _mm_setr_epi32(0, 2, 4, 6)),
      _mm_set1_epi32(0x03030303));
  const __m128i bytes = _mm_or_si128(lo, _mm_slli_epi32(hi, 4));
  const __m512 f = _mm512_cvtepi32_ps(
      _mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), _mm512_set1_epi32(32)));
  uint16_t d;
  memcpy(&d, block + kQ3_KD, sizeof(d));
  const __m512 vd = _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(d)));
  _mm512_store_ps(out, _mm512_mul_ps(f, vd));
}

// IQ4_XS: out[k] = d * (ls_k - 32), k < 8 (lanes 8..15: don't care).
HWY_INLINE void IQ4_XSScales(const uint8_t* block, float* HWY_RESTRICT out) {
  uint32_t low;
  uint16_t high;
  memcpy(&low, block + kIQ4_XSScalesL, sizeof(low));
  memcpy(&high, block + kIQ4_XSScalesH, sizeof(high));
  const __m512i l = _mm512_and_si512(
      _mm512_srlv_epi32(_mm512_set1_epi32(static_cast<int>(low)),
                        _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0)),
      _mm512_set1_epi32(0x0F));
  const __m512i h = _mm512_and_si512(
      _mm512_srlv_epi32(_mm512_set1_epi32(high),
                        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0)),
      _mm512_set1_epi32(0x03));
  const __m512i ls = _mm512_or_si512(l, _mm512_slli_epi32(h, 4));
  uint16_t d;
  memcpy(&d, block, sizeof(d));
  const __m512 vd = _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(d)));
  _mm512_store_ps(out, _mm512_mul_ps(
                           _mm512_cvtepi32_ps(_mm512_sub_epi32(ls, _mm512_set1_epi32(32))), vd));
}

}  // namespace avx3

// The AVX3 linear kernels run a pass of rows over a super-block in two steps:
// SuperBlockScales decodes each row's sub-block scales (and mins) into
// kScaleFloats floats, then, after all rows' scales are stored (so that
// their broadcasts do not wait for a store just issued: that ordering made
// Q4_K 25% faster), SuperBlockDotScaled adds the row's dot product with x to
// the lane-wise partial sums a0, a1.
constexpr size_t kScaleFloats = 32;

// Q4_K / Q5_K: [d sc_k, dmin m_k] interleaved (KScaleMins).
HWY_INLINE void SuperBlockScales(Q4_KFormat, const uint8_t* block, float* sm) {
  avx3::KScaleMins(block, block + kQ4_KScales, sm);
}
HWY_INLINE void SuperBlockScales(Q5_KFormat, const uint8_t* block, float* sm) {
  avx3::KScaleMins(block, block + kQ5_KScales, sm);
}
// Q6_K: d sc_k (k < 16).
HWY_INLINE void SuperBlockScales(Q6_KFormat, const uint8_t* block, float* sm) {
  Q6_KScales(QuantDF(), block, sm);
}
// Q3_K: d (s_k - 32) (k < 16).
HWY_INLINE void SuperBlockScales(Q3_KFormat, const uint8_t* block, float* sm) {
  avx3::Q3_KScales(block, sm);
}
// Q2_K: d sc_k, then dmin m_k (k < 16).
HWY_INLINE void SuperBlockScales(Q2_KFormat, const uint8_t* block, float* sm) {
  Q2_KScales(QuantDF(), block, sm, sm + 16);
}
// IQ4_XS: d (ls_k - 32) (k < 8).
HWY_INLINE void SuperBlockScales(IQ4_XSFormat, const uint8_t* block, float* sm) {
  avx3::IQ4_XSScales(block, sm);
}

HWY_INLINE void SuperBlockDotScaled(Q4_KFormat, const uint8_t* block, const float* x,
                                    const float* sm, __m512& a0, __m512& a1) {
  for (size_t c = 0; c < 4; ++c) avx3::Q4_KChunk(block + kQ4_KQs, sm, x, c, a0, a1);
}

HWY_INLINE void SuperBlockDotScaled(Q5_KFormat, const uint8_t* block, const float* x,
                                    const float* sm, __m512& a0, __m512& a1) {
  // The 5-bit quants of all 256 weights, built byte-wise 128 at a time: for
  // chunks c = 2p, 2p + 1 (64 bytes of qs), the low nibbles with qh bit 2c at
  // bit 4 (lo[p]: chunk 2p in bytes 0..31, 2p + 1 in 32..63) and the high
  // nibbles with bit 2c + 1 (hi[p]); 16-bit shifts move the qh bits (the bits
  // a byte receives from its neighbour are masked off).
  HWY_ALIGN uint8_t q5[2][2][64];  // [p][0: low nibbles, 1: high][byte]
  const __m512i qh = _mm512_broadcast_i64x4(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + kQ5_KQh)));
  const __m512i m0F = _mm512_set1_epi8(0x0F), m10 = _mm512_set1_epi8(0x10);
  const __m512i c42 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i c31 = _mm512_inserti64x4(_mm512_set1_epi16(3), _mm256_set1_epi16(1), 1);
  const __m512i c02 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  const __m512i c13 = _mm512_inserti64x4(_mm512_set1_epi16(1), _mm256_set1_epi16(3), 1);
  for (int p = 0; p < 2; ++p) {
    const __m512i q = _mm512_loadu_si512(block + kQ5_KQs + 64 * p);
    const __m512i lo = _mm512_and_si512(q, m0F);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m0F);
    // Chunk c's bits 2c (low) and 2c + 1 (high) to bit 4: left by 4, 2 (low,
    // c = 0, 1), 3, 1 (high); right by 0, 2 and 1, 3 for c = 2, 3.
    const __m512i hl = p == 0 ? _mm512_sllv_epi16(qh, c42) : _mm512_srlv_epi16(qh, c02);
    const __m512i hh = p == 0 ? _mm512_sllv_epi16(qh, c31) : _mm512_srlv_epi16(qh, c13);
    _mm512_store_si512(q5[p][0], _mm512_ternarylogic_epi32(hl, m10, lo, 0xEA));
    _mm512_store_si512(q5[p][1], _mm512_ternarylogic_epi32(hh, m10, hi, 0xEA));
  }
  avx3::ReloadScales();
  const __m512 iota = avx3::Iota();
  const __m512 iota16 = _mm512_add_ps(iota, _mm512_set1_ps(16.0f));
  for (size_t c = 0; c < 4; ++c) {
    for (size_t half = 0; half < 2; ++half) {  // sub-block 2c + half
      const __m512 ds = _mm512_set1_ps(sm[4 * c + 2 * half]);
      const __m512 dm = _mm512_set1_ps(sm[4 * c + 2 * half + 1]);
      const __m512 t0 = _mm512_fmsub_ps(iota, ds, dm);
      const __m512 t1 = _mm512_fmsub_ps(iota16, ds, dm);
      const uint8_t* q = q5[c / 2][half] + 32 * (c % 2);
      const float* xs = x + 64 * c + 32 * half;
      a0 = _mm512_fmadd_ps(_mm512_permutex2var_ps(t0, avx3::Bytes16(q), t1),
                           _mm512_loadu_ps(xs), a0);
      a1 = _mm512_fmadd_ps(_mm512_permutex2var_ps(t0, avx3::Bytes16(q + 16), t1),
                           _mm512_loadu_ps(xs + 16), a1);
    }
  }
}

HWY_INLINE void SuperBlockDotScaled(Q6_KFormat, const uint8_t* block, const float* x,
                                    const float* sm, __m512& a0, __m512& a1) {
  avx3::Q6_KHalf(block, 0, sm, x, a0, a1);
  avx3::Q6_KHalf(block, 1, sm, x, a0, a1);
}

HWY_INLINE void SuperBlockDotScaled(Q3_KFormat, const uint8_t* block, const float* x,
                                    const float* sm, __m512& a0, __m512& a1) {
  avx3::SmallHalf<true, 0>(block + kQ3_KQs, block, sm, nullptr, x, a0, a1);
  avx3::SmallHalf<true, 1>(block + kQ3_KQs, block, sm, nullptr, x, a0, a1);
}

HWY_INLINE void SuperBlockDotScaled(Q2_KFormat, const uint8_t* block, const float* x,
                                    const float* sm, __m512& a0, __m512& a1) {
  avx3::SmallHalf<false, 0>(block + kQ2_KQs, nullptr, sm, sm + 16, x, a0, a1);
  avx3::SmallHalf<false, 1>(block + kQ2_KQs, nullptr, sm, sm + 16, x, a0, a1);
}

HWY_INLINE void SuperBlockDotScaled(IQ4_XSFormat, const uint8_t* block, const float* x,
                                    const float* sm, __m512& a0, __m512& a1) {
  const __m512 levels = _mm512_setr_ps(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25,
                                       38, 53, 69, 89, 113);
  const uint8_t* qs = block + kIQ4_XSQs;
  for (size_t k = 0; k < 8; ++k) {
    // The 16 weights a nibble can select in sub-block k: level * d * (ls - 32)
    // (exact: 7 + 6 + 11 significant bits).
    const __m512 table = _mm512_mul_ps(levels, _mm512_set1_ps(sm[k]));
    const __m512i p = avx3::Bytes16(qs + 16 * k);
    a0 = _mm512_fmadd_ps(_mm512_permutexvar_ps(p, table), _mm512_loadu_ps(x + 32 * k), a0);
    a1 = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(p, 4), table),
                         _mm512_loadu_ps(x + 32 * k + 16), a1);
  }
}

#endif  // HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_KQUANT_DOT_AVX3_INL_H_
