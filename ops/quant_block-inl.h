// Per-target decoding of llama.cpp's 32-weight blocks Q8_0, Q4_0
// (ops/quantize.h), Q4_1, Q5_0, Q5_1 (ops/quantize_legacy.h) and IQ4_NL
// (ops/quantize_iq4.h) in registers: the quants of a block as f32 lanes, its
// f16 scale (and offset), and a whole block decoded (and scaled) into 32
// floats. Shared by the quantized linear kernels (ops/linear_quant-inl.h),
// the matrix-matrix kernels (ops/matmul-inl.h) and row gathers
// (ops/gather-inl.h).
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_QUANT_BLOCK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_QUANT_BLOCK_INL_H_
#undef CORTIQ_OPS_QUANT_BLOCK_INL_H_
#else
#define CORTIQ_OPS_QUANT_BLOCK_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "ops/quantize.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_legacy.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The f32 vector type the quantized kernels use: at most 16 lanes, so a lane
// count always divides the 16 nibble bytes of a Q4_0 block and the 32 quants
// of a Q8_0 block (x86 tops out at 16 f32 lanes anyway).
using QuantDF = hn::CappedTag<float, 16>;

// Format tags selecting the overloads below. kBlockWeights: weights per block;
// kBlockBytes: bytes per block; kHasMin: the block has an f16 offset m after
// its scale d (w = d * q + m), which the linear kernels add as m * sum(x).
struct Q8_0Format {
  static constexpr size_t kBlockWeights = kQuantBlockSize;
  static constexpr size_t kBlockBytes = kQ8_0BlockBytes;
  static constexpr bool kHasMin = false;
};
struct Q4_0Format {
  static constexpr size_t kBlockWeights = kQuantBlockSize;
  static constexpr size_t kBlockBytes = kQ4_0BlockBytes;
  static constexpr bool kHasMin = false;
};
struct Q4_1Format {
  static constexpr size_t kBlockWeights = kQuantBlockSize;
  static constexpr size_t kBlockBytes = kQ4_1BlockBytes;
  static constexpr bool kHasMin = true;
};
struct Q5_0Format {
  static constexpr size_t kBlockWeights = kQuantBlockSize;
  static constexpr size_t kBlockBytes = kQ5_0BlockBytes;
  static constexpr bool kHasMin = false;
};
struct Q5_1Format {
  static constexpr size_t kBlockWeights = kQuantBlockSize;
  static constexpr size_t kBlockBytes = kQ5_1BlockBytes;
  static constexpr bool kHasMin = true;
};
struct IQ4_NLFormat {
  static constexpr size_t kBlockWeights = kQuantBlockSize;
  static constexpr size_t kBlockBytes = kIQ4_NLBlockBytes;
  static constexpr bool kHasMin = false;
};

// The block's scale d (its first two bytes, f16, unaligned) as f32, exactly.
HWY_INLINE float BlockScale(const uint8_t* block) {
  uint16_t d;
  memcpy(&d, block, sizeof(d));
  return F16BitsToF32(d);
}

// Set(df, BlockScale(block)): the block's f16 scale converted exactly and
// broadcast to every lane. On x86 targets with F16C (AVX2, AVX3) by a 16-bit
// broadcast load and vcvtph2ps (2 vector instructions instead of ~12 scalar
// ones and a move); elsewhere through BlockScale (whose inf/NaN handling the
// emulated Highway conversion lacks).
template <class DF>
HWY_INLINE hn::VFromD<DF> BroadcastBlockScale(DF df, const uint8_t* block) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  const hn::Rebind<uint16_t, DF> du16;
  const hn::Rebind<hwy::float16_t, DF> df16;
  uint16_t bits;
  memcpy(&bits, block, sizeof(bits));
  return hn::PromoteTo(df, hn::BitCast(df16, hn::Set(du16, bits)));
#else
  return hn::Set(df, BlockScale(block));
#endif
}

// Quants [k, k + Lanes(df)) of the Q8_0 block at `block` as f32 (exact:
// int8 -> int32 -> f32). k + Lanes(df) <= 32.
template <class DF>
HWY_INLINE hn::VFromD<DF> Q8_0Quants(DF df, const uint8_t* block, size_t k) {
  const hn::Rebind<int8_t, DF> d8;
  const hn::Rebind<int32_t, DF> di;
  const int8_t* qs = reinterpret_cast<const int8_t*>(block + 2);
  return hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, qs + k)));
}

// Quants (nibble - 8) of the Q4_0 block at `block` as f32 (exact): `lo` gets
// weights [k, k + N) (low nibbles of bytes k..), `hi` weights [16 + k, 16 + k +
// N) (their high nibbles), N = Lanes(df), k + N <= 16.
template <class DF>
HWY_INLINE void Q4_0Quants(DF df, const uint8_t* block, size_t k,
                           hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  const hn::Rebind<uint8_t, DF> d8;
  const hn::Rebind<int32_t, DF> di;
  const auto packed = hn::PromoteTo(di, hn::LoadU(d8, block + 2 + k));
  const auto eight = hn::Set(di, 8);
  lo = hn::ConvertTo(df, hn::Sub(hn::And(packed, hn::Set(di, 0xF)), eight));
  hi = hn::ConvertTo(df, hn::Sub(hn::ShiftRight<4>(packed), eight));
}

// As Q4_0Quants, faster on AVX-512: each nibble indexes a 16-entry f32 table
// {-8, ..., 7} (vpermps uses only the low 4 bits of each 32-bit index, so the
// low nibbles need no mask and the -8 and the int -> f32 conversion are in the
// table). Same values as Q4_0Quants (exact).
template <class DF>
HWY_INLINE void Q4_0QuantsLut(DF df, const uint8_t* block, size_t k,
                              hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {
    const __m512i packed = _mm512_cvtepu8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + k)));
    const __m512 table =
        _mm512_setr_ps(-8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f,
                       0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
    lo = hn::VFromD<DF>{_mm512_permutexvar_ps(packed, table)};
    hi = hn::VFromD<DF>{
        _mm512_permutexvar_ps(_mm512_srli_epi32(packed, 4), table)};
    return;
  }
#endif
  Q4_0Quants(df, block, k, lo, hi);
}

// The N = Lanes(df) bytes at p, zero-extended to i32 lanes.
template <class DF>
HWY_INLINE hn::VFromD<hn::Rebind<int32_t, DF>> BytesAsI32(DF /*df*/,
                                                          const uint8_t* p) {
  const hn::Rebind<uint8_t, DF> d8;
  const hn::Rebind<int32_t, DF> di;
  return hn::PromoteTo(di, hn::LoadU(d8, p));
}

// lo = f32(b & 15) + kOffset, hi = f32(b >> 4) + kOffset for the N bytes b at
// p (exact). On AVX-512 one vpermps per vector: each nibble indexes the table
// {kOffset, ..., kOffset + 15} (vpermps reads only the low 4 bits of an
// index, so the low nibbles need no mask), as Q4_0QuantsLut.
template <int kOffset, class DF>
HWY_INLINE void NibblesLinear(DF df, const uint8_t* p, hn::VFromD<DF>& lo,
                              hn::VFromD<DF>& hi) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {
    const __m512i packed =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    constexpr float o = static_cast<float>(kOffset);
    const __m512 table = _mm512_setr_ps(
        o + 0, o + 1, o + 2, o + 3, o + 4, o + 5, o + 6, o + 7, o + 8, o + 9,
        o + 10, o + 11, o + 12, o + 13, o + 14, o + 15);
    lo = hn::VFromD<DF>{_mm512_permutexvar_ps(packed, table)};
    hi = hn::VFromD<DF>{_mm512_permutexvar_ps(_mm512_srli_epi32(packed, 4), table)};
    return;
  }
#endif
  const hn::Rebind<int32_t, DF> di;
  const auto packed = BytesAsI32(df, p);
  lo = hn::ConvertTo(df, hn::And(packed, hn::Set(di, 0xF)));
  hi = hn::ConvertTo(df, hn::ShiftRight<4>(packed));
  if constexpr (kOffset != 0) {
    lo = hn::Add(lo, hn::Set(df, static_cast<float>(kOffset)));
    hi = hn::Add(hi, hn::Set(df, static_cast<float>(kOffset)));
  }
}

// lo = kIQ4NLValues[b & 15], hi = kIQ4NLValues[b >> 4] as f32 for the N bytes
// b at p (exact). AVX-512: vpermps over the 16 levels; other vector targets:
// a pshufb byte lookup (the levels are int8), widened and converted.
template <class DF>
HWY_INLINE void NibblesIQ4(DF df, const uint8_t* p, hn::VFromD<DF>& lo,
                           hn::VFromD<DF>& hi) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {
    const __m512i packed =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m512 table = _mm512_setr_ps(-127, -104, -83, -65, -49, -35, -22, -10,
                                        1, 13, 25, 38, 53, 69, 89, 113);
    lo = hn::VFromD<DF>{_mm512_permutexvar_ps(packed, table)};
    hi = hn::VFromD<DF>{_mm512_permutexvar_ps(_mm512_srli_epi32(packed, 4), table)};
    return;
  }
#endif
#if HWY_TARGET == HWY_SCALAR
  lo = hn::Set(df, static_cast<float>(kIQ4NLValues[p[0] & 0xF]));
  hi = hn::Set(df, static_cast<float>(kIQ4NLValues[p[0] >> 4]));
#else
  const hn::Rebind<uint8_t, DF> d8;
  const hn::Rebind<int8_t, DF> ds8;
  const hn::Rebind<int32_t, DF> di;
  const hn::Full128<int8_t> dt;
  const auto table = hn::LoadU(dt, kIQ4NLValues);
  const auto bytes = hn::LoadU(d8, p);
  const auto lo_idx = hn::And(bytes, hn::Set(d8, 0xF));
  const auto hi_idx = hn::ShiftRight<4>(bytes);
  lo = hn::ConvertTo(
      df, hn::PromoteTo(di, hn::BitCast(ds8, hn::TableLookupBytes(table, lo_idx))));
  hi = hn::ConvertTo(
      df, hn::PromoteTo(di, hn::BitCast(ds8, hn::TableLookupBytes(table, hi_idx))));
#endif
}

// v + 16 in the lanes i (< N) whose bit first + i of `bits` is set, v
// elsewhere: the fifth quant bit of Q5_0 / Q5_1 (qh) and Q5_K.
template <class DF>
HWY_INLINE hn::VFromD<DF> AddSixteenIfBit(DF df, hn::VFromD<DF> v,
                                          uint32_t bits, size_t first) {
  const hn::Rebind<int32_t, DF> di;
  alignas(64) static constexpr int32_t kPow2[16] = {
      1 << 0, 1 << 1, 1 << 2,  1 << 3,  1 << 4,  1 << 5,  1 << 6,  1 << 7,
      1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15};
  const auto set = hn::TestBit(hn::Set(di, static_cast<int32_t>(bits >> first)),
                               hn::Load(di, kPow2));
  return hn::IfThenElse(hn::RebindMask(df, set), hn::Add(v, hn::Set(df, 16.0f)), v);
}

// The little-endian 32-bit word at p (the qh of Q5_0 / Q5_1).
HWY_INLINE uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

// Quants of weights [k, k + N) (lo) and [16 + k, 16 + k + N) (hi) of a
// 32-weight block as f32, k + N <= 16, for the formats below (the values the
// block's scale multiplies: Q5_0 q - 16, Q4_1 / Q5_1 the unsigned q, IQ4_NL the
// level). Exact.
template <class DF>
HWY_INLINE void BlockQuants(Q5_0Format /*tag*/, DF df, const uint8_t* block,
                            size_t k, hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  NibblesLinear<-16>(df, block + 6 + k, lo, hi);
  const uint32_t qh = LoadU32(block + 2);
  lo = AddSixteenIfBit(df, lo, qh, k);
  hi = AddSixteenIfBit(df, hi, qh, 16 + k);
}
template <class DF>
HWY_INLINE void BlockQuants(Q4_1Format /*tag*/, DF df, const uint8_t* block,
                            size_t k, hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  NibblesLinear<0>(df, block + 4 + k, lo, hi);
}
template <class DF>
HWY_INLINE void BlockQuants(Q5_1Format /*tag*/, DF df, const uint8_t* block,
                            size_t k, hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  NibblesLinear<0>(df, block + 8 + k, lo, hi);
  const uint32_t qh = LoadU32(block + 4);
  lo = AddSixteenIfBit(df, lo, qh, k);
  hi = AddSixteenIfBit(df, hi, qh, 16 + k);
}
template <class DF>
HWY_INLINE void BlockQuants(IQ4_NLFormat /*tag*/, DF df, const uint8_t* block,
                            size_t k, hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  NibblesIQ4(df, block + 2 + k, lo, hi);
}

// out[0, 32) = the block's f32 weights, exactly the values of its
// DequantizeRow* (ops/quantize*.h): d * q is exact, and for Q4_1 / Q5_1
// MulAdd(q, d, m) rounds d * q + m once, as the dequantizer does (with or
// without a fused multiply-add, since d * q is exact). out needs no alignment.
HWY_INLINE void DecodeBlock(Q8_0Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  const QuantDF dq;
  const size_t N = hn::Lanes(dq);
  const auto vd = hn::Set(dq, BlockScale(block));
  for (size_t k = 0; k < kQuantBlockSize; k += N) {
    hn::StoreU(hn::Mul(Q8_0Quants(dq, block, k), vd), dq, out + k);
  }
}
HWY_INLINE void DecodeBlock(Q4_0Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  const QuantDF dq;
  const size_t N = hn::Lanes(dq);
  const auto vd = hn::Set(dq, BlockScale(block));
  for (size_t k = 0; k < kQuantBlockSize / 2; k += N) {
    hn::VFromD<QuantDF> lo, hi;
    Q4_0Quants(dq, block, k, lo, hi);
    hn::StoreU(hn::Mul(lo, vd), dq, out + k);
    hn::StoreU(hn::Mul(hi, vd), dq, out + kQuantBlockSize / 2 + k);
  }
}
template <class Format>
HWY_INLINE void DecodeBlock(Format tag, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  static_assert(Format::kBlockWeights == kQuantBlockSize,
                "32-weight formats only; super-block formats define their own");
  const QuantDF dq;
  const size_t N = hn::Lanes(dq);
  const auto vd = hn::Set(dq, BlockScale(block));
  for (size_t k = 0; k < kQuantBlockSize / 2; k += N) {
    hn::VFromD<QuantDF> lo, hi;
    BlockQuants(tag, dq, block, k, lo, hi);
    if constexpr (Format::kHasMin) {
      const auto vm = hn::Set(dq, BlockScale(block + 2));
      lo = hn::MulAdd(lo, vd, vm);
      hi = hn::MulAdd(hi, vd, vm);
    } else {
      lo = hn::Mul(lo, vd);
      hi = hn::Mul(hi, vd);
    }
    hn::StoreU(lo, dq, out + k);
    hn::StoreU(hi, dq, out + kQuantBlockSize / 2 + k);
  }
}

// out[j] = scale * (d * q_j) for the 32 weights of one block, each rounded
// once: d * q_j is exact in f32 (11-bit by <= 8-bit significands), so the only
// rounding is the multiply by scale, and the result equals the correctly
// rounded scale * w_j. out needs no alignment.
template <class DF>
HWY_INLINE void DecodeBlockScaled(Q8_0Format /*tag*/, DF df,
                                  const uint8_t* block, float scale,
                                  float* out) {
  const size_t N = hn::Lanes(df);
  const auto vd = hn::Set(df, BlockScale(block));
  const auto vs = hn::Set(df, scale);
  for (size_t k = 0; k < kQuantBlockSize; k += N) {
    hn::StoreU(hn::Mul(hn::Mul(Q8_0Quants(df, block, k), vd), vs), df, out + k);
  }
}
template <class DF>
HWY_INLINE void DecodeBlockScaled(Q4_0Format /*tag*/, DF df,
                                  const uint8_t* block, float scale,
                                  float* out) {
  const size_t N = hn::Lanes(df);
  const auto vd = hn::Set(df, BlockScale(block));
  const auto vs = hn::Set(df, scale);
  for (size_t k = 0; k < kQuantBlockSize / 2; k += N) {
    hn::VFromD<DF> lo, hi;
    Q4_0Quants(df, block, k, lo, hi);
    hn::StoreU(hn::Mul(hn::Mul(lo, vd), vs), df, out + k);
    hn::StoreU(hn::Mul(hn::Mul(hi, vd), vs), df, out + kQuantBlockSize / 2 + k);
  }
}

// As above for the other formats (any block size): the block decoded to its
// f32 weights (DecodeBlock), each then multiplied by scale once.
template <class Format, class DF>
HWY_INLINE void DecodeBlockScaled(Format tag, DF df, const uint8_t* block,
                                  float scale, float* out) {
  const size_t N = hn::Lanes(df);
  DecodeBlock(tag, block, out);
  const auto vs = hn::Set(df, scale);
  for (size_t k = 0; k < Format::kBlockWeights; k += N) {
    hn::StoreU(hn::Mul(hn::LoadU(df, out + k), vs), df, out + k);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_QUANT_BLOCK_INL_H_
