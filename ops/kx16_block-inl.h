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
#include "ops/vec_util-inl.h"  // ReduceSum

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

static_assert(kQ4_Kx16Mins == kQ5_Kx16Mins && kQ4_Kx16Quants == kQ5_Kx16Quants,
              "Q5_Kx16 puts its mins and low quant bits where Q4_Kx16 does");

// Format tag of Q4_Kx16: 512-weight blocks of 296 bytes.
struct Q4_Kx16Format {
  static constexpr size_t kBlockWeights = kQ4_Kx16BlockWeights;
  static constexpr size_t kBlockBytes = kQ4_Kx16BlockBytes;
};

// The 16 sub-blocks' d sc_j and -(dmin m_j) of a Q4_Kx16 / Q5_Kx16 block
// (d and dmin of super-block j / 8 at super_scales + 4 (j / 8); the scale and
// min bytes read as 6 bits, as every kernel does). d sc_j is exact in f32.
HWY_INLINE void KX16ScaleMins(const uint8_t* block, size_t super_scales, float* HWY_RESTRICT scale,
                              float* HWY_RESTRICT min) {
  float dm[4];
  for (size_t k = 0; k < 4; ++k) {
    uint16_t h;
    memcpy(&h, block + super_scales + 2 * k, 2);
    dm[k] = F16BitsToF32(h);
  }
  for (size_t j = 0; j < kQ4_Kx16SubBlocks; ++j) {
    scale[j] = dm[2 * (j / 8)] * static_cast<float>(block[j] & 63);
    min[j] = -(dm[2 * (j / 8) + 1] * static_cast<float>(block[kQ4_Kx16Mins + j] & 63));
  }
}

// out[0, 512) = the block's f32 weights in row order, exactly
// DequantizeRowQ4_Kx16's / DequantizeRowQ5_Kx16's values (llama.cpp's
// dequantizer on the super-blocks it was made from): per sub-block j,
// w = (d sc_j) q - dmin m_j, where d sc_j and d sc_j q are exact in f32, so
// the one FMA rounds the exact weight once. Sub-block j's 16 quant bytes are
// the four 4-byte runs at 32 + 64 z + 4 j: low nibbles weights 0..15, high
// 16..31; kFifthBit (Q5_Kx16): its 32 fifth bits gathered from the 8 masks
// (bit 16 h + 4 z + b: weight 16 h + 4 z + b, row order) and added as 16
// through a lane mask (LoadMaskBits). Once per weight row and token panel in
// the prompt's product, vectorized with the scales converted once per block:
// a byte shuffle per weight, or an f16 conversion per sub-block, cost 4-9% of
// E2B's pp512 (session 39). out needs no alignment.
template <bool kFifthBit>
HWY_INLINE void DecodeKX16Block(const uint8_t* block, float* HWY_RESTRICT out) {
  const QuantDF df;
  const hn::RebindToUnsigned<QuantDF> du;
  const hn::RebindToSigned<QuantDF> di;
  const hn::Rebind<uint8_t, QuantDF> d8;
  const size_t N = hn::Lanes(df);  // divides 16
  float scale[kQ4_Kx16SubBlocks], min[kQ4_Kx16SubBlocks];
  KX16ScaleMins(block, kFifthBit ? kQ5_Kx16SuperScales : kQ4_Kx16SuperScales, scale, min);
  uint64_t masks[4][2] = {};
  if constexpr (kFifthBit) {
    for (size_t z = 0; z < 4; ++z) {
      for (size_t h = 0; h < 2; ++h) {
        const uint8_t* bytes = block + kQ5_Kx16HighBits + 16 * z + 8 * h;
        for (size_t i = 0; i < 8; ++i) masks[z][h] |= static_cast<uint64_t>(bytes[i]) << (8 * i);
      }
    }
  }
  const auto fifteen = hn::Set(du, 15u), sixteen = hn::Set(du, 16u);
  for (size_t j = 0; j < kQ4_Kx16SubBlocks; ++j) {
    uint64_t fifth = 0;  // 64 bits: the shifts below reach 24 + 12
    if constexpr (kFifthBit) {
      for (size_t z = 0; z < 4; ++z) {
        for (size_t h = 0; h < 2; ++h) {
          fifth |= ((masks[z][h] >> (4 * j)) & 15) << (16 * h + 4 * z);
        }
      }
    }
    const auto vs = hn::Set(df, scale[j]), vm = hn::Set(df, min[j]);
    uint8_t bytes[16];
    for (size_t z = 0; z < 4; ++z) memcpy(bytes + 4 * z, block + kQ4_Kx16Quants + 64 * z + 4 * j, 4);
    for (size_t i = 0; i < 16; i += N) {
      const auto q = hn::PromoteTo(du, hn::LoadU(d8, bytes + i));
      auto lo = hn::And(q, fifteen), hi = hn::ShiftRight<4>(q);
      if constexpr (kFifthBit) {
        // LoadMaskBits may read 8 bytes (Highway 1.0.3); lanes i .. i + N - 1 take 2 at most.
        const uint8_t low_bits[8] = {static_cast<uint8_t>(fifth >> i),
                                     static_cast<uint8_t>(fifth >> (i + 8))};
        const uint8_t high_bits[8] = {static_cast<uint8_t>(fifth >> (16 + i)),
                                      static_cast<uint8_t>(fifth >> (24 + i))};
        lo = hn::Add(lo, hn::IfThenElseZero(hn::LoadMaskBits(du, low_bits), sixteen));
        hi = hn::Add(hi, hn::IfThenElseZero(hn::LoadMaskBits(du, high_bits), sixteen));
      }
      hn::StoreU(hn::MulAdd(hn::ConvertTo(df, hn::BitCast(di, lo)), vs, vm), df,
                 out + 32 * j + i);
      hn::StoreU(hn::MulAdd(hn::ConvertTo(df, hn::BitCast(di, hi)), vs, vm), df,
                 out + 32 * j + 16 + i);
    }
  }
}

// Format tag of Q5_Kx16: 512-weight blocks of 360 bytes.
struct Q5_Kx16Format {
  static constexpr size_t kBlockWeights = kQ5_Kx16BlockWeights;
  static constexpr size_t kBlockBytes = kQ5_Kx16BlockBytes;
};

HWY_INLINE void DecodeBlock(Q4_Kx16Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  DecodeKX16Block<false>(block, out);
}
HWY_INLINE void DecodeBlock(Q5_Kx16Format /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  DecodeKX16Block<true>(block, out);
}

// y[r] = sum_c w_rc x_c for r in [row_begin, row_end) of Format's rows (cols
// a multiple of 512), in f32: each block decoded to its exact f32 weights
// (DecodeBlock) and multiplied into 4 chains of N-lane FMAs, reduced per row.
// The decode product where the CPU has no integer digit kernel (non-x86
// CPUs, x86 without AVX2): within the f32 bound of ops/linear.h with
// k ~ cols / (4 N) + 4 + log2 N; each row independent of the range.
template <class Format>
HWY_INLINE void LinearKX16Rows(Format tag, const void* w, const float* HWY_RESTRICT x,
                               float* HWY_RESTRICT y, size_t /*rows*/, size_t cols,
                               size_t row_begin, size_t row_end) {
  const QuantDF df;
  const size_t N = hn::Lanes(df);
  const size_t groups = cols / Format::kBlockWeights;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  HWY_ALIGN float decoded[Format::kBlockWeights];
  for (size_t r = row_begin; r < row_end; ++r) {
    auto a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
    for (size_t g = 0; g < groups; ++g) {
      DecodeBlock(tag, base + (r * groups + g) * Format::kBlockBytes, decoded);
      const float* xg = x + g * Format::kBlockWeights;
      for (size_t i = 0; i < Format::kBlockWeights; i += 4 * N) {
        a0 = hn::MulAdd(hn::Load(df, decoded + i), hn::LoadU(df, xg + i), a0);
        a1 = hn::MulAdd(hn::Load(df, decoded + i + N), hn::LoadU(df, xg + i + N), a1);
        a2 = hn::MulAdd(hn::Load(df, decoded + i + 2 * N), hn::LoadU(df, xg + i + 2 * N), a2);
        a3 = hn::MulAdd(hn::Load(df, decoded + i + 3 * N), hn::LoadU(df, xg + i + 3 * N), a3);
      }
    }
    y[r] = ReduceSum(df, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
  }
}

// LinearKX16Rows for `batch` tokens (x [batch, cols] with stride x_stride, y
// [batch, rows] with stride y_stride), blocks of 16 rows for every token (the
// rows' weights stay in cache across the tokens); each output the bits of
// LinearKX16Rows on its row.
template <class Format>
HWY_INLINE void LinearRowsKX16Rows(Format tag, const void* w, const float* x, size_t x_stride,
                                   float* y, size_t y_stride, size_t batch, size_t rows,
                                   size_t cols, size_t row_begin, size_t row_end) {
  constexpr size_t kRowsPerBlock = 16;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowsPerBlock) {
    const size_t r1 = HWY_MIN(row_end, r0 + kRowsPerBlock);
    for (size_t t = 0; t < batch; ++t) {
      LinearKX16Rows(tag, w, x + t * x_stride, y + t * y_stride, rows, cols, r0, r1);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_KX16_BLOCK_INL_H_
