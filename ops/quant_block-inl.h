// Per-target decoding of llama.cpp Q8_0 / Q4_0 blocks (ops/quantize.h) in
// registers: the quants of a block as f32 lanes, its f16 scale, and a whole
// block decoded and scaled into 32 floats. Shared by the quantized linear
// kernels (ops/linear_quant-inl.h) and row gathers (ops/gather-inl.h).
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

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The f32 vector type the quantized kernels use: at most 16 lanes, so a lane
// count always divides the 16 nibble bytes of a Q4_0 block and the 32 quants
// of a Q8_0 block (x86 tops out at 16 f32 lanes anyway).
using QuantDF = hn::CappedTag<float, 16>;

// Format tags selecting the overloads below.
struct Q8_0Format {
  static constexpr size_t kBlockBytes = kQ8_0BlockBytes;
};
struct Q4_0Format {
  static constexpr size_t kBlockBytes = kQ4_0BlockBytes;
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

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_QUANT_BLOCK_INL_H_
