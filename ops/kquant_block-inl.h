// Per-target decoding of llama.cpp's 256-weight super-block formats Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K (ops/quantize_k.h) and IQ4_XS (ops/quantize_iq4.h)
// in registers: the sub-block scales of a super-block, its quants as f32
// lanes, the contribution of one super-block to a row's dot product
// (SuperBlockDot, for ops/linear_superblock-inl.h) and the block decoded to
// its f32 weights (DecodeBlock, for ops/matmul-inl.h and ops/gather-inl.h).
//
// Vectors have N = Lanes(QuantDF) <= 16 f32 lanes; N divides 16, the length
// of the runs of consecutive weights that read consecutive bytes in every
// format here, so a group of N weights is one load of N bytes per bit field.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_KQUANT_BLOCK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_KQUANT_BLOCK_INL_H_
#undef CORTIQ_OPS_KQUANT_BLOCK_INL_H_
#else
#define CORTIQ_OPS_KQUANT_BLOCK_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "ops/quant_block-inl.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_k.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How a format's linear kernel uses precomputed sums of the activations
// (ops/block_sums-inl.h), 16 floats per super-block:
// kSums16: factor * (sum of each sub-block of 16), 16 sub-blocks;
// kSumsUpper32: 8 zeros, then factor * (sum of each sub-block of 32);
// kNoSums: none.
enum class SumLayout { kNoSums, kSums16, kSumsUpper32 };

// AVX-512 targets decode super-blocks to exact weights through per-sub-block
// tables (ops/kquant_dot_avx3-inl.h) and need no sums; the portable code
// below uses them.
#undef CORTIQ_KQUANT_TABLE_DOT
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define CORTIQ_KQUANT_TABLE_DOT 1
#else
#define CORTIQ_KQUANT_TABLE_DOT 0
#endif
constexpr bool kTableDot = CORTIQ_KQUANT_TABLE_DOT;

// Format tags. kSumFactor multiplies the sums: the kernel adds, per
// super-block, sum_k coef_k * kSumFactor * (sum of x over sub-block k), with
// coef_k the second half of the scales vector (mins) or the scales themselves
// (a constant bias of the quants: Q3_K q - 4, Q6_K q - 32).
struct Q2_KFormat {
  static constexpr size_t kBlockWeights = kSuperBlockSize;
  static constexpr size_t kBlockBytes = kQ2_KBlockBytes;
  static constexpr SumLayout kSums = kTableDot ? SumLayout::kNoSums : SumLayout::kSums16;
  static constexpr float kSumFactor = -1.0f;  // - dmin * m * sum
};
struct Q3_KFormat {
  static constexpr size_t kBlockWeights = kSuperBlockSize;
  static constexpr size_t kBlockBytes = kQ3_KBlockBytes;
  static constexpr SumLayout kSums = kTableDot ? SumLayout::kNoSums : SumLayout::kSums16;
  static constexpr float kSumFactor = -4.0f;  // the quants' bias of -4
};
struct Q4_KFormat {
  static constexpr size_t kBlockWeights = kSuperBlockSize;
  static constexpr size_t kBlockBytes = kQ4_KBlockBytes;
  static constexpr SumLayout kSums = kTableDot ? SumLayout::kNoSums : SumLayout::kSumsUpper32;
  static constexpr float kSumFactor = -1.0f;  // - dmin * m * sum
};
struct Q5_KFormat {
  static constexpr size_t kBlockWeights = kSuperBlockSize;
  static constexpr size_t kBlockBytes = kQ5_KBlockBytes;
  static constexpr SumLayout kSums = kTableDot ? SumLayout::kNoSums : SumLayout::kSumsUpper32;
  static constexpr float kSumFactor = -1.0f;
};
struct Q6_KFormat {
  static constexpr size_t kBlockWeights = kSuperBlockSize;
  static constexpr size_t kBlockBytes = kQ6_KBlockBytes;
  static constexpr SumLayout kSums = kTableDot ? SumLayout::kNoSums : SumLayout::kSums16;
  static constexpr float kSumFactor = -32.0f;  // the quants' bias of -32
};
struct IQ4_XSFormat {
  static constexpr size_t kBlockWeights = kSuperBlockSize;
  static constexpr size_t kBlockBytes = kIQ4_XSBlockBytes;
  static constexpr SumLayout kSums = SumLayout::kNoSums;
  static constexpr float kSumFactor = 0.0f;
};

// Byte offsets of the fields (ggml-common.h struct order).
constexpr size_t kQ2_KQs = 16, kQ2_KD = 80, kQ2_KDmin = 82;
constexpr size_t kQ3_KQs = 32, kQ3_KScales = 96, kQ3_KD = 108;
constexpr size_t kQ4_KScales = 4, kQ4_KQs = 16;
constexpr size_t kQ5_KScales = 4, kQ5_KQh = 16, kQ5_KQs = 48;
constexpr size_t kQ6_KQh = 128, kQ6_KScales = 192, kQ6_KD = 208;
constexpr size_t kIQ4_XSScalesH = 2, kIQ4_XSScalesL = 4, kIQ4_XSQs = 8;

// ---------------------------------------------------------------------------
// Sub-block scales, decoded once per super-block into 16 aligned floats (all
// products exact in f32: an f16 value times an integer of at most 8 bits).

// out[i] = coef(i) * f32(bytes[i]) + bias * coef(i), i < 16, where coef(i) is
// lo for i < 8 and hi for i >= 8 (exact for the small integers here).
template <class DF>
HWY_INLINE void ScaleBytes(DF df, const uint8_t* bytes, int bias,
                           hn::VFromD<DF> lo, hn::VFromD<DF> hi,
                           float* HWY_RESTRICT out) {
  const size_t N = hn::Lanes(df);
  const hn::Rebind<int32_t, DF> di;
  for (size_t k = 0; k < 16; k += N) {
    auto v = BytesAsI32(df, bytes + k);
    if (bias != 0) v = hn::Add(v, hn::Set(di, bias));
    const auto f = hn::ConvertTo(df, v);
    hn::VFromD<DF> coef;
    if (N == 16) {
      coef = hn::IfThenElse(hn::FirstN(df, 8), lo, hi);
    } else {
      coef = k < 8 ? lo : hi;
    }
    hn::Store(hn::Mul(f, coef), df, out + k);
  }
}

// Q4_K / Q5_K: out[k] = d * sc_k, out[8 + k] = dmin * m_k (k < 8), from the 12
// scale bytes at `scales` (ops/quantize_k.h KScaleMin, four at a time: bytes
// 0..3 are sc 0..3, 4..7 m 0..3, and the high 2 bits of sc / m 4..7 are bits
// 6, 7 of bytes 0..3 / 4..7).
//
// AVX2 (8 lanes): the same bytes built in one register and widened from it.
// The portable form stores the words as scalars and reloads them as bytes, a
// load that spans several stores and so waits for them to retire (no store
// forwarding); on a Zen 2 host that round trip was ~15% of Q4_K's decode.
template <class DF>
HWY_INLINE void KScaleMins(DF df, const uint8_t* block, size_t scales_offset,
                           float* HWY_RESTRICT out) {
  const uint8_t* sc = block + scales_offset;
#if HWY_TARGET == HWY_AVX2
  if constexpr (hn::MaxLanes(DF()) == 8) {
    // v = [a, b, c, (4 bytes past the scales, unused)]; lanes of the words:
    // [a & 3F, (c & 0F) | ((a >> 2) & 30), b & 3F, ((c >> 4) & 0F) | ((b >> 2) & 30)].
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc));
    const __m128i x = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));  // [a, c, b, c]
    const __m128i y = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));  // [a, a, b, b]
    const __m128i low = _mm_and_si128(
        _mm_srlv_epi32(x, _mm_setr_epi32(0, 0, 0, 4)),
        _mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F));
    const __m128i high =
        _mm_and_si128(_mm_srli_epi32(y, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
    const __m128i bytes = _mm_or_si128(low, high);
    using V = hn::VFromD<DF>;
    const V scales{_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes))};
    const V mins{_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(bytes, bytes)))};
    hn::Store(hn::Mul(scales, BroadcastBlockScale(df, block)), df, out);
    hn::Store(hn::Mul(mins, BroadcastBlockScale(df, block + 2)), df, out + 8);
    return;
  }
#endif
  const uint32_t a = LoadU32(sc), b = LoadU32(sc + 4), c = LoadU32(sc + 8);
  const uint32_t words[4] = {
      a & 0x3F3F3F3Fu, (c & 0x0F0F0F0Fu) | ((a >> 2) & 0x30303030u),
      b & 0x3F3F3F3Fu, ((c >> 4) & 0x0F0F0F0Fu) | ((b >> 2) & 0x30303030u)};
  uint8_t bytes[16];
  memcpy(bytes, words, sizeof(bytes));  // little-endian: byte i of word i / 4
  ScaleBytes(df, bytes, 0, BroadcastBlockScale(df, block),
             BroadcastBlockScale(df, block + 2), out);
}

// Q6_K: out[k] = d * scales[k] (int8), k < 16.
template <class DF>
HWY_INLINE void Q6_KScales(DF df, const uint8_t* block,
                           float* HWY_RESTRICT out) {
  const size_t N = hn::Lanes(df);
  const hn::Rebind<int8_t, DF> d8;
  const hn::Rebind<int32_t, DF> di;
  const auto vd = BroadcastBlockScale(df, block + kQ6_KD);
  const int8_t* sc = reinterpret_cast<const int8_t*>(block + kQ6_KScales);
  for (size_t k = 0; k < 16; k += N) {
    const auto f = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, sc + k)));
    hn::Store(hn::Mul(f, vd), df, out + k);
  }
}

// Q3_K: out[k] = d * (s_k - 32), k < 16 (ops/quantize_k.h Q3_KScale, four at
// a time as llama.cpp's dequantize_row_q3_K unpacks them).
template <class DF>
HWY_INLINE void Q3_KScales(DF df, const uint8_t* block,
                           float* HWY_RESTRICT out) {
  const uint8_t* sc = block + kQ3_KScales;
  const uint32_t a = LoadU32(sc), b = LoadU32(sc + 4), t = LoadU32(sc + 8);
  const uint32_t m4 = 0x0F0F0F0Fu, m2 = 0x03030303u;
  const uint32_t words[4] = {(a & m4) | (((t >> 0) & m2) << 4),
                             (b & m4) | (((t >> 2) & m2) << 4),
                             ((a >> 4) & m4) | (((t >> 4) & m2) << 4),
                             ((b >> 4) & m4) | (((t >> 6) & m2) << 4)};
  uint8_t bytes[16];
  memcpy(bytes, words, sizeof(bytes));
  const auto vd = BroadcastBlockScale(df, block + kQ3_KD);
  ScaleBytes(df, bytes, -32, vd, vd, out);
}

// Q2_K: sc[k] = d * (scales[k] & 15), mins[k] = dmin * (scales[k] >> 4).
template <class DF>
HWY_INLINE void Q2_KScales(DF df, const uint8_t* block, float* HWY_RESTRICT sc,
                           float* HWY_RESTRICT mins) {
  const size_t N = hn::Lanes(df);
  const hn::Rebind<int32_t, DF> di;
  const auto vd = BroadcastBlockScale(df, block + kQ2_KD);
  const auto vm = BroadcastBlockScale(df, block + kQ2_KDmin);
  for (size_t k = 0; k < 16; k += N) {
    const auto v = BytesAsI32(df, block + k);
    hn::Store(hn::Mul(hn::ConvertTo(df, hn::And(v, hn::Set(di, 0xF))), vd), df,
              sc + k);
    hn::Store(hn::Mul(hn::ConvertTo(df, hn::ShiftRight<4>(v)), vm), df,
              mins + k);
  }
}

// IQ4_XS: out[k] = d * (ls_k - 32), k < 8; out[8, 16) = 0.
template <class DF>
HWY_INLINE void IQ4_XSScales(DF df, const uint8_t* block,
                             float* HWY_RESTRICT out) {
  uint16_t high;
  memcpy(&high, block + kIQ4_XSScalesH, sizeof(high));
  const uint32_t low = LoadU32(block + kIQ4_XSScalesL);
  uint8_t bytes[16] = {0};
  for (size_t k = 0; k < 8; ++k) {
    bytes[k] = static_cast<uint8_t>(((low >> (4 * k)) & 0xF) |
                                    (((high >> (2 * k)) & 3) << 4));
  }
  const auto vd = BroadcastBlockScale(df, block);
  ScaleBytes(df, bytes, -32, vd, hn::Zero(df), out);
}

// ---------------------------------------------------------------------------
// Quants of N consecutive weights as f32 (exact small integers, or IQ4
// levels), by format.

// The i32 lanes v with bit `bit` set get +add (as f32) in f.
template <class DF>
HWY_INLINE hn::VFromD<DF> AddIfLaneBit(DF df, hn::VFromD<DF> f,
                                       hn::VFromD<hn::Rebind<int32_t, DF>> v,
                                       int32_t bit, float add) {
  const hn::Rebind<int32_t, DF> di;
  const auto set = hn::TestBit(v, hn::Set(di, bit));
  return hn::IfThenElse(hn::RebindMask(df, set), hn::Add(f, hn::Set(df, add)), f);
}

// Q4_K: lo = q of weights 64 c + h + [0, N), hi = q of 64 c + 32 + h + [0, N)
// (h + N <= 32).
template <class DF>
HWY_INLINE void Q4_KQuants(DF df, const uint8_t* block, size_t c, size_t h,
                           hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  NibblesLinear<0>(df, block + kQ4_KQs + 32 * c + h, lo, hi);
}

// Q5_K: as Q4_K plus 16 where bit 2c (lo) / 2c + 1 (hi) of qh[h + i] is set.
template <class DF>
HWY_INLINE void Q5_KQuants(DF df, const uint8_t* block, size_t c, size_t h,
                           hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  NibblesLinear<0>(df, block + kQ5_KQs + 32 * c + h, lo, hi);
  const auto high = BytesAsI32(df, block + kQ5_KQh + h);
  lo = AddIfLaneBit(df, lo, high, 1 << (2 * c), 16.0f);
  hi = AddIfLaneBit(df, hi, high, 2 << (2 * c), 16.0f);
}

// Q6_K: q[t] = the unsigned 6-bit quants (0..63) of weights 128 h + 32 t + l +
// [0, N), t < 4 (l + N <= 32).
template <class DF>
HWY_INLINE void Q6_KQuants(DF df, const uint8_t* block, size_t h, size_t l,
                           hn::VFromD<DF>* q) {
  const hn::Rebind<int32_t, DF> di;
  const uint8_t* ql = block + 64 * h + l;
  const auto a = BytesAsI32(df, ql);
  const auto b = BytesAsI32(df, ql + 32);
  const auto qh = BytesAsI32(df, block + kQ6_KQh + 32 * h + l);
  const auto m4 = hn::Set(di, 0x0F), m30 = hn::Set(di, 0x30);
  q[0] = hn::ConvertTo(df, hn::Or(hn::And(a, m4), hn::And(hn::ShiftLeft<4>(qh), m30)));
  q[1] = hn::ConvertTo(df, hn::Or(hn::And(b, m4), hn::And(hn::ShiftLeft<2>(qh), m30)));
  q[2] = hn::ConvertTo(df, hn::Or(hn::ShiftRight<4>(a), hn::And(qh, m30)));
  q[3] = hn::ConvertTo(df, hn::Or(hn::ShiftRight<4>(b), hn::And(hn::ShiftRight<2>(qh), m30)));
}

// Q2_K: q[t] = the 2-bit quants of weights 128 h + 32 t + l + [0, N).
template <class DF>
HWY_INLINE void Q2_KQuants(DF df, const uint8_t* block, size_t h, size_t l,
                           hn::VFromD<DF>* q) {
  const hn::Rebind<int32_t, DF> di;
  const auto b = BytesAsI32(df, block + kQ2_KQs + 32 * h + l);
  const auto m3 = hn::Set(di, 3);
  q[0] = hn::ConvertTo(df, hn::And(b, m3));
  q[1] = hn::ConvertTo(df, hn::And(hn::ShiftRight<2>(b), m3));
  q[2] = hn::ConvertTo(df, hn::And(hn::ShiftRight<4>(b), m3));
  q[3] = hn::ConvertTo(df, hn::ShiftRight<6>(b));
}

// Q3_K: q[t] = the unsigned 3-bit quants (0..7, value q - 4) of weights 128 h
// + 32 t + l + [0, N): Q2_K's low bits plus 4 where bit 4h + t of hmask[l + i]
// is set.
template <class DF>
HWY_INLINE void Q3_KQuants(DF df, const uint8_t* block, size_t h, size_t l,
                           hn::VFromD<DF>* q) {
  const hn::Rebind<int32_t, DF> di;
  const auto b = BytesAsI32(df, block + kQ3_KQs + 32 * h + l);
  const auto m = BytesAsI32(df, block + l);
  const auto m3 = hn::Set(di, 3);
  q[0] = hn::ConvertTo(df, hn::And(b, m3));
  q[1] = hn::ConvertTo(df, hn::And(hn::ShiftRight<2>(b), m3));
  q[2] = hn::ConvertTo(df, hn::And(hn::ShiftRight<4>(b), m3));
  q[3] = hn::ConvertTo(df, hn::ShiftRight<6>(b));
  for (size_t t = 0; t < 4; ++t) {
    q[t] = AddIfLaneBit(df, q[t], m, 1 << (4 * h + t), 4.0f);
  }
}

// IQ4_XS: lo / hi = the levels of weights 32 k + j + [0, N) / 32 k + 16 + j +
// [0, N) (j + N <= 16).
template <class DF>
HWY_INLINE void IQ4_XSQuants(DF df, const uint8_t* block, size_t k, size_t j,
                             hn::VFromD<DF>& lo, hn::VFromD<DF>& hi) {
  NibblesIQ4(df, block + kIQ4_XSQs + 16 * k + j, lo, hi);
}

// ---------------------------------------------------------------------------
// One super-block's contribution to a row's dot product: adds the block's
// sum_i w_i x_i as lane-wise partial sums to acc0 (and acc1), for the 256
// activations x of the block and its 16 precomputed sums xs (SumLayout).
//
// Per sub-block k the quants are dotted with x in f32 (s_k, lane-wise), then
// one FMA adds scale_k * s_k; the mins (Q2_K, Q4_K, Q5_K) and the constant
// biases of the quants (Q3_K, Q6_K) enter as one 16-lane FMA of the scales
// vector with xs. The operations and their order depend only on the block
// and x, not on the row or the rows computed with it.

#if !CORTIQ_KQUANT_TABLE_DOT
// The portable SuperBlockDot (AVX-512: ops/kquant_dot_avx3-inl.h). acc +=
// the super-block's contribution; the second accumulator is unused here.

// acc += sum_{i < 16} coef[i] * xs[i].
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE V AddSums(DF df, const float* HWY_RESTRICT coef,
                     const float* HWY_RESTRICT xs, V acc) {
  const size_t N = hn::Lanes(df);
  for (size_t k = 0; k < 16; k += N) {
    acc = hn::MulAdd(hn::Load(df, coef + k), hn::LoadU(df, xs + k), acc);
  }
  return acc;
}

// s += q * x over one group (s = q * x for the first group of a sub-block).
template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE V DotStep(DF df, bool first, V q, const float* x, V s) {
  return first ? hn::Mul(q, hn::LoadU(df, x)) : hn::MulAdd(q, hn::LoadU(df, x), s);
}

template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void SuperBlockDot(Q4_KFormat /*tag*/, DF df, const uint8_t* block,
                           const float* HWY_RESTRICT x,
                           const float* HWY_RESTRICT xs, V& acc, V& /*acc1*/) {
  const size_t N = hn::Lanes(df);
  HWY_ALIGN float sm[16];
  KScaleMins(df, block, kQ4_KScales, sm);
  acc = AddSums(df, sm, xs, acc);
  for (size_t c = 0; c < 4; ++c) {
    V s0 = hn::Zero(df), s1 = hn::Zero(df);
    for (size_t h = 0; h < 32; h += N) {
      V lo, hi;
      Q4_KQuants(df, block, c, h, lo, hi);
      s0 = DotStep(df, h == 0, lo, x + 64 * c + h, s0);
      s1 = DotStep(df, h == 0, hi, x + 64 * c + 32 + h, s1);
    }
    acc = hn::MulAdd(s0, hn::Set(df, sm[2 * c]), acc);
    acc = hn::MulAdd(s1, hn::Set(df, sm[2 * c + 1]), acc);
  }
}

template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void SuperBlockDot(Q5_KFormat /*tag*/, DF df, const uint8_t* block,
                           const float* HWY_RESTRICT x,
                           const float* HWY_RESTRICT xs, V& acc, V& /*acc1*/) {
  const size_t N = hn::Lanes(df);
  HWY_ALIGN float sm[16];
  KScaleMins(df, block, kQ5_KScales, sm);
  acc = AddSums(df, sm, xs, acc);
  for (size_t c = 0; c < 4; ++c) {
    V s0 = hn::Zero(df), s1 = hn::Zero(df);
    for (size_t h = 0; h < 32; h += N) {
      V lo, hi;
      Q5_KQuants(df, block, c, h, lo, hi);
      s0 = DotStep(df, h == 0, lo, x + 64 * c + h, s0);
      s1 = DotStep(df, h == 0, hi, x + 64 * c + 32 + h, s1);
    }
    acc = hn::MulAdd(s0, hn::Set(df, sm[2 * c]), acc);
    acc = hn::MulAdd(s1, hn::Set(df, sm[2 * c + 1]), acc);
  }
}

// Q6_K, Q3_K, Q2_K: sub-blocks of 16; weights 128 h + 32 t + l for l in
// [lh, lh + 16) form sub-block 8 h + 2 t + lh / 16.
template <class Format, class DF, class V = hn::VFromD<DF>>
HWY_INLINE V Dot16(Format /*tag*/, DF df, const uint8_t* block,
                   const float* HWY_RESTRICT x, const float* HWY_RESTRICT sm,
                   V acc) {
  const size_t N = hn::Lanes(df);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t lh = 0; lh < 32; lh += 16) {
      V s[4] = {hn::Zero(df), hn::Zero(df), hn::Zero(df), hn::Zero(df)};
      for (size_t l = lh; l < lh + 16; l += N) {
        V q[4];
        if constexpr (hwy::IsSame<Format, Q6_KFormat>()) {
          Q6_KQuants(df, block, h, l, q);
        } else if constexpr (hwy::IsSame<Format, Q3_KFormat>()) {
          Q3_KQuants(df, block, h, l, q);
        } else {
          Q2_KQuants(df, block, h, l, q);
        }
        for (size_t t = 0; t < 4; ++t) {
          s[t] = DotStep(df, l == lh, q[t], x + 128 * h + 32 * t + l, s[t]);
        }
      }
      for (size_t t = 0; t < 4; ++t) {
        acc = hn::MulAdd(s[t], hn::Set(df, sm[8 * h + 2 * t + lh / 16]), acc);
      }
    }
  }
  return acc;
}

template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void SuperBlockDot(Q6_KFormat tag, DF df, const uint8_t* block,
                           const float* HWY_RESTRICT x,
                           const float* HWY_RESTRICT xs, V& acc, V& /*acc1*/) {
  HWY_ALIGN float sm[16];
  Q6_KScales(df, block, sm);
  acc = AddSums(df, sm, xs, acc);  // the -32 of every quant
  acc = Dot16(tag, df, block, x, sm, acc);
}

template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void SuperBlockDot(Q3_KFormat tag, DF df, const uint8_t* block,
                           const float* HWY_RESTRICT x,
                           const float* HWY_RESTRICT xs, V& acc, V& /*acc1*/) {
  HWY_ALIGN float sm[16];
  Q3_KScales(df, block, sm);
  acc = AddSums(df, sm, xs, acc);  // the -4 of every quant
  acc = Dot16(tag, df, block, x, sm, acc);
}

template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void SuperBlockDot(Q2_KFormat tag, DF df, const uint8_t* block,
                           const float* HWY_RESTRICT x,
                           const float* HWY_RESTRICT xs, V& acc, V& /*acc1*/) {
  HWY_ALIGN float sm[16];
  HWY_ALIGN float mins[16];
  Q2_KScales(df, block, sm, mins);
  acc = AddSums(df, mins, xs, acc);  // - dmin * m * sum
  acc = Dot16(tag, df, block, x, sm, acc);
}

template <class DF, class V = hn::VFromD<DF>>
HWY_INLINE void SuperBlockDot(IQ4_XSFormat /*tag*/, DF df, const uint8_t* block,
                           const float* HWY_RESTRICT x,
                           const float* HWY_RESTRICT /*xs*/, V& acc, V& /*acc1*/) {
  const size_t N = hn::Lanes(df);
  HWY_ALIGN float sm[16];
  IQ4_XSScales(df, block, sm);
  for (size_t k = 0; k < 8; ++k) {
    V s = hn::Zero(df);
    for (size_t j = 0; j < 16; j += N) {
      V lo, hi;
      IQ4_XSQuants(df, block, k, j, lo, hi);
      s = DotStep(df, j == 0, lo, x + 32 * k + j, s);
      s = hn::MulAdd(hi, hn::LoadU(df, x + 32 * k + 16 + j), s);
    }
    acc = hn::MulAdd(s, hn::Set(df, sm[k]), acc);
  }
}

#endif  // !CORTIQ_KQUANT_TABLE_DOT

// ---------------------------------------------------------------------------
// out[0, 256) = the super-block's f32 weights, exactly the values of its
// DequantizeRow* (ops/quantize_k.h, ops/quantize_iq4.h): scale * q is exact;
// Q2_K / Q4_K / Q5_K round scale * q - min once (MulAdd, fused or not, since
// the product is exact); the biases of Q3_K / Q6_K are subtracted from the
// small integer quant first (exact). out needs no alignment.

HWY_INLINE void DecodeBlock(Q4_KFormat /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  const QuantDF df;
  const size_t N = hn::Lanes(df);
  HWY_ALIGN float sm[16];
  KScaleMins(df, block, kQ4_KScales, sm);
  for (size_t c = 0; c < 4; ++c) {
    const auto d0 = hn::Set(df, sm[2 * c]), m0 = hn::Set(df, -sm[8 + 2 * c]);
    const auto d1 = hn::Set(df, sm[2 * c + 1]), m1 = hn::Set(df, -sm[9 + 2 * c]);
    for (size_t h = 0; h < 32; h += N) {
      hn::VFromD<QuantDF> lo, hi;
      Q4_KQuants(df, block, c, h, lo, hi);
      hn::StoreU(hn::MulAdd(lo, d0, m0), df, out + 64 * c + h);
      hn::StoreU(hn::MulAdd(hi, d1, m1), df, out + 64 * c + 32 + h);
    }
  }
}

HWY_INLINE void DecodeBlock(Q5_KFormat /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  const QuantDF df;
  const size_t N = hn::Lanes(df);
  HWY_ALIGN float sm[16];
  KScaleMins(df, block, kQ5_KScales, sm);
  for (size_t c = 0; c < 4; ++c) {
    const auto d0 = hn::Set(df, sm[2 * c]), m0 = hn::Set(df, -sm[8 + 2 * c]);
    const auto d1 = hn::Set(df, sm[2 * c + 1]), m1 = hn::Set(df, -sm[9 + 2 * c]);
    for (size_t h = 0; h < 32; h += N) {
      hn::VFromD<QuantDF> lo, hi;
      Q5_KQuants(df, block, c, h, lo, hi);
      hn::StoreU(hn::MulAdd(lo, d0, m0), df, out + 64 * c + h);
      hn::StoreU(hn::MulAdd(hi, d1, m1), df, out + 64 * c + 32 + h);
    }
  }
}

// Q6_K / Q3_K / Q2_K (sub-blocks of 16, Dot16's weight order).
template <class Format>
HWY_INLINE void Decode16(Format /*tag*/, const uint8_t* block,
                         float* HWY_RESTRICT out) {
  const QuantDF df;
  const size_t N = hn::Lanes(df);
  HWY_ALIGN float sm[16];
  HWY_ALIGN float mins[16];
  float bias = 0.0f;
  if constexpr (hwy::IsSame<Format, Q6_KFormat>()) {
    Q6_KScales(df, block, sm);
    bias = -32.0f;
  } else if constexpr (hwy::IsSame<Format, Q3_KFormat>()) {
    Q3_KScales(df, block, sm);
    bias = -4.0f;
  } else {
    Q2_KScales(df, block, sm, mins);
  }
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += N) {
      hn::VFromD<QuantDF> q[4];
      if constexpr (hwy::IsSame<Format, Q6_KFormat>()) {
        Q6_KQuants(df, block, h, l, q);
      } else if constexpr (hwy::IsSame<Format, Q3_KFormat>()) {
        Q3_KQuants(df, block, h, l, q);
      } else {
        Q2_KQuants(df, block, h, l, q);
      }
      for (size_t t = 0; t < 4; ++t) {
        const size_t k = 8 * h + 2 * t + l / 16;
        const auto d = hn::Set(df, sm[k]);
        hn::VFromD<QuantDF> w;
        if constexpr (hwy::IsSame<Format, Q2_KFormat>()) {
          w = hn::MulAdd(q[t], d, hn::Set(df, -mins[k]));
        } else {
          w = hn::Mul(hn::Add(q[t], hn::Set(df, bias)), d);
        }
        hn::StoreU(w, df, out + 128 * h + 32 * t + l);
      }
    }
  }
}
HWY_INLINE void DecodeBlock(Q6_KFormat tag, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  Decode16(tag, block, out);
}
HWY_INLINE void DecodeBlock(Q3_KFormat tag, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  Decode16(tag, block, out);
}
HWY_INLINE void DecodeBlock(Q2_KFormat tag, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  Decode16(tag, block, out);
}

HWY_INLINE void DecodeBlock(IQ4_XSFormat /*tag*/, const uint8_t* block,
                            float* HWY_RESTRICT out) {
  const QuantDF df;
  const size_t N = hn::Lanes(df);
  HWY_ALIGN float sm[16];
  IQ4_XSScales(df, block, sm);
  for (size_t k = 0; k < 8; ++k) {
    const auto d = hn::Set(df, sm[k]);
    for (size_t j = 0; j < 16; j += N) {
      hn::VFromD<QuantDF> lo, hi;
      IQ4_XSQuants(df, block, k, j, lo, hi);
      hn::StoreU(hn::Mul(lo, d), df, out + 32 * k + j);
      hn::StoreU(hn::Mul(hi, d), df, out + 32 * k + 16 + j);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_KQUANT_BLOCK_INL_H_
