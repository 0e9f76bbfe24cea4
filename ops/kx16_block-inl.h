// Per-target format tags and block decodes of Q4_Kx16 and Q5_Kx16 weights
// (ops/quantize_q4_kx16.h, ops/quantize_q5_kx16.h), for the generic
// matrix-matrix product and row gather (ops/matmul-inl.h, ops/gather-inl.h):
// the prompt's kernels and the embedding lookup. The decode products are
// ops/linear_vnni.h's. Translation units: ops/kernels_q4_kx16.cc,
// ops/kernels_q5_kx16.cc.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_KX16_BLOCK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_KX16_BLOCK_INL_H_
#undef CORTIQ_OPS_KX16_BLOCK_INL_H_
#else
#define CORTIQ_OPS_KX16_BLOCK_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "ops/kquant_block-inl.h"
#include "ops/quantize.h"  // F16BitsToF32
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

// Format tag of Q4_Kx16: 512-weight blocks of 296 bytes.
struct Q4_Kx16Format {
  static constexpr size_t kBlockWeights = kQ4_Kx16BlockWeights;
  static constexpr size_t kBlockBytes = kQ4_Kx16BlockBytes;
};

// out[0, 512) = the block's f32 weights in row order, exactly
// DequantizeRowQ4_Kx16's values (DequantizeRowQ4_K's of the super-blocks it
// was made from): per sub-block j, w = (d sc_j) q - dmin m_j, where d sc_j
// and d sc_j q are exact in f32, so the one FMA rounds the exact weight once
// as llama.cpp's dequantizer does. Sub-block j's 16 quant bytes are the four
// 4-byte runs at 32 + 64 z + 4 j: low nibbles weights 0..15, high 16..31.
// Once per weight row and token panel in the prompt's product (vectorized: a
// byte shuffle per weight there costs ~8% of E2B's pp512, session 39). out
// needs no alignment.
HWY_INLINE void DecodeBlock(Q4_Kx16Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  const QuantDF df;
  const hn::RebindToUnsigned<QuantDF> du;
  const hn::RebindToSigned<QuantDF> di;
  const hn::Rebind<uint8_t, QuantDF> d8;
  const size_t N = hn::Lanes(df);  // divides 16
  for (size_t j = 0; j < kQ4_Kx16SubBlocks; ++j) {
    uint16_t d, dmin;
    memcpy(&d, block + kQ4_Kx16SuperScales + 4 * (j / 8), 2);
    memcpy(&dmin, block + kQ4_Kx16SuperScales + 4 * (j / 8) + 2, 2);
    const auto scale = hn::Set(df, F16BitsToF32(d) * static_cast<float>(block[j] & 63));
    const auto min =
        hn::Set(df, -(F16BitsToF32(dmin) * static_cast<float>(block[kQ4_Kx16Mins + j] & 63)));
    uint8_t bytes[16];
    for (size_t z = 0; z < 4; ++z) memcpy(bytes + 4 * z, block + kQ4_Kx16Quants + 64 * z + 4 * j, 4);
    for (size_t i = 0; i < 16; i += N) {
      const auto q = hn::PromoteTo(du, hn::LoadU(d8, bytes + i));
      const auto lo = hn::ConvertTo(df, hn::BitCast(di, hn::And(q, hn::Set(du, 15u))));
      const auto hi = hn::ConvertTo(df, hn::BitCast(di, hn::ShiftRight<4>(q)));
      hn::StoreU(hn::MulAdd(lo, scale, min), df, out + 32 * j + i);
      hn::StoreU(hn::MulAdd(hi, scale, min), df, out + 32 * j + 16 + i);
    }
  }
}

// Format tag of Q5_Kx16: 512-weight blocks of 360 bytes.
struct Q5_Kx16Format {
  static constexpr size_t kBlockWeights = kQ5_Kx16BlockWeights;
  static constexpr size_t kBlockBytes = kQ5_Kx16BlockBytes;
};

// As DecodeBlock(Q4_Kx16Format) with each quant's fifth bit: 16 added where
// the mask of its part and nibble half has its bit (kSpread turns the 4 bits
// of a sub-block's lane into 4 bytes of 0 or 16). Exactly
// DequantizeRowQ5_Kx16's values.
HWY_INLINE void DecodeBlock(Q5_Kx16Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  static constexpr uint32_t kSpread[16] = {
      0x00000000, 0x00000010, 0x00001000, 0x00001010, 0x00100000, 0x00100010,
      0x00101000, 0x00101010, 0x10000000, 0x10000010, 0x10001000, 0x10001010,
      0x10100000, 0x10100010, 0x10101000, 0x10101010};
  const QuantDF df;
  const hn::RebindToUnsigned<QuantDF> du;
  const hn::RebindToSigned<QuantDF> di;
  const hn::Rebind<uint8_t, QuantDF> d8;
  const size_t N = hn::Lanes(df);  // divides 16
  uint64_t masks[4][2];
  for (size_t z = 0; z < 4; ++z) {
    for (size_t h = 0; h < 2; ++h) {
      const uint8_t* bytes = block + kQ5_Kx16HighBits + 16 * z + 8 * h;
      masks[z][h] = 0;
      for (size_t i = 0; i < 8; ++i) masks[z][h] |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    }
  }
  for (size_t j = 0; j < kQ4_Kx16SubBlocks; ++j) {
    uint16_t d, dmin;
    memcpy(&d, block + kQ5_Kx16SuperScales + 4 * (j / 8), 2);
    memcpy(&dmin, block + kQ5_Kx16SuperScales + 4 * (j / 8) + 2, 2);
    const auto scale = hn::Set(df, F16BitsToF32(d) * static_cast<float>(block[j] & 63));
    const auto min = hn::Set(
        df, -(F16BitsToF32(dmin) * static_cast<float>(block[kQ5_Kx16Mins + j] & 63)));
    uint8_t bytes[16], fifth[32];
    for (size_t z = 0; z < 4; ++z) {
      memcpy(bytes + 4 * z, block + kQ5_Kx16Quants + 64 * z + 4 * j, 4);
      for (size_t h = 0; h < 2; ++h) {
        const uint32_t spread = kSpread[(masks[z][h] >> (4 * j)) & 15];
        const uint8_t four[4] = {static_cast<uint8_t>(spread), static_cast<uint8_t>(spread >> 8),
                                 static_cast<uint8_t>(spread >> 16),
                                 static_cast<uint8_t>(spread >> 24)};
        memcpy(fifth + 16 * h + 4 * z, four, 4);
      }
    }
    for (size_t i = 0; i < 16; i += N) {
      const auto q = hn::PromoteTo(du, hn::LoadU(d8, bytes + i));
      const auto lo = hn::Add(hn::And(q, hn::Set(du, 15u)), hn::PromoteTo(du, hn::LoadU(d8, fifth + i)));
      const auto hi = hn::Add(hn::ShiftRight<4>(q), hn::PromoteTo(du, hn::LoadU(d8, fifth + 16 + i)));
      hn::StoreU(hn::MulAdd(hn::ConvertTo(df, hn::BitCast(di, lo)), scale, min), df,
                 out + 32 * j + i);
      hn::StoreU(hn::MulAdd(hn::ConvertTo(df, hn::BitCast(di, hi)), scale, min), df,
                 out + 32 * j + 16 + i);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_KX16_BLOCK_INL_H_
