// MatMulBF16BF16Activations (ops/matmul_bf16_activations.h).
//
// Layout: lanes are output rows, as in ops/matmul_q8_activations.cc. A row block's weights are
// copied once per column chunk and token block into groups of 16 rows interleaved by column
// pairs (one 64-byte vector holds the bf16 pair (2p, 2p + 1) of 16 rows), so one vdpbf16ps
// multiplies them by a token's activation pair broadcast from memory and adds both products
// into each row's f32 lane: 16 rows x 2 columns per instruction, no horizontal sums, and each
// lane is exactly the formula's chain for its (row, token). A tile is 4 groups (64 rows) x 6
// tokens: 24 accumulators, enough independent chains to cover the instruction's latency.
//
// Dispatch by hand, not Highway: Highway 1.0.3 (Debian 12) has no target with AVX-512 BF16.
// The AVX-512 BF16 functions carry their own target attribute and run when the CPU reports
// AVX-512 F/BW/BF16; the portable functions compute the same bits.
#include "ops/matmul_bf16_activations.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "ops/amx.h"
#include "ops/matmul.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define CORTIQ_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define CORTIQ_AMX_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16")))
#endif

namespace cortiq {
namespace ops {
namespace {

constexpr size_t kChunk = 256;             // columns per chunk (128 pairs)
constexpr size_t kChunkPairs = kChunk / 2;
constexpr size_t kTokenBlock = 256;        // tokens whose converted chunk every row block reuses
constexpr size_t kGroupRows = 16;          // rows per group: one f32 lane each
constexpr size_t kGroups = 4;              // groups per row block (and per tile)
constexpr size_t kRowBlock = kGroups * kGroupRows;
constexpr size_t kTileTokens = 6;          // tokens per tile

// A row block's weights for one column chunk: [group][pair][row in group], each a uint32 holding
// the bf16 of column 2p (low half) and 2p + 1 (high half); 32 KiB.
struct InterleavedWeights {
  alignas(64) uint32_t pair[kGroups][kChunkPairs][kGroupRows];
};

// A token block's activations for one column chunk, rounded to bf16: [token][pair], as above;
// 128 KiB.
struct BF16Activations {
  alignas(64) uint32_t pair[kTokenBlock][kChunkPairs];
};

float BF16ToF32(uint32_t bits16) {
  const uint32_t bits = bits16 << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

// Copies block rows [first, kRowBlock) of chunk [k0, k0 + n) into `out` as column pairs (a
// missing column cols, when cols is odd, as 0): rows r0 + i for i < num_rows, zeros after them
// (which add nothing to lanes that are not stored).
void InterleaveRows(const uint16_t* w, size_t cols, size_t r0, size_t first, size_t num_rows,
                    size_t k0, size_t n, InterleavedWeights* out) {
  const size_t pairs = (n + 1) / 2;
  const size_t full_pairs = n / 2;
  for (size_t i = first; i < kRowBlock; ++i) {
    const size_t g = i / kGroupRows, lane = i % kGroupRows;
    if (i >= num_rows) {
      for (size_t p = 0; p < pairs; ++p) out->pair[g][p][lane] = 0;
      continue;
    }
    const uint16_t* row = w + (r0 + i) * cols + k0;
    for (size_t p = 0; p < full_pairs; ++p) {
      uint32_t v;
      memcpy(&v, row + 2 * p, sizeof(v));
      out->pair[g][p][lane] = v;
    }
    if (pairs != full_pairs) out->pair[g][full_pairs][lane] = row[2 * full_pairs];
  }
}

// Rows [r0, r0 + num_rows) (num_rows <= 64) of chunk [k0, k0 + n), the block's 64 rows padded.
void InterleaveRowBlock(const uint16_t* w, size_t cols, size_t r0, size_t num_rows, size_t k0,
                        size_t n, InterleavedWeights* out) {
  InterleaveRows(w, cols, r0, 0, num_rows, k0, n, out);
}

// ---------------------------------------------------------------------------
// Portable versions (the same bits as the AVX-512 BF16 ones).

// Flush-to-zero of a subnormal result (and DAZ of a subnormal input), keeping the sign.
float FlushSubnormal(float v) { return fabsf(v) < FLT_MIN ? copysignf(0.0f, v) : v; }

void ConvertPortable(const float* x, size_t n, uint32_t* pairs) {
  for (size_t p = 0; p < (n + 1) / 2; ++p) {
    const uint32_t lo = RoundToBF16(x[2 * p]);
    const uint32_t hi = 2 * p + 1 < n ? RoundToBF16(x[2 * p + 1]) : 0;
    pairs[p] = lo | hi << 16;
  }
}

// One vdpbf16ps lane: acc + (odd product) + (even product), each step rounded and flushed.
float DotPairPortable(float acc, uint32_t w, uint32_t x) {
  const float w0 = FlushSubnormal(BF16ToF32(w & 0xFFFF));
  const float w1 = FlushSubnormal(BF16ToF32(w >> 16));
  const float x0 = FlushSubnormal(BF16ToF32(x & 0xFFFF));
  const float x1 = FlushSubnormal(BF16ToF32(x >> 16));
  acc = FlushSubnormal(FlushSubnormal(acc) + w1 * x1);
  return FlushSubnormal(acc + w0 * x0);
}

void TilePortable(const InterleavedWeights& w, const BF16Activations& a, size_t t,
                  size_t tokens, size_t pairs, float* y, size_t y_stride, size_t num_rows,
                  bool accumulate) {
  for (size_t j = 0; j < tokens; ++j) {
    for (size_t i = 0; i < num_rows; ++i) {
      const size_t g = i / kGroupRows, lane = i % kGroupRows;
      float acc = accumulate ? y[j * y_stride + i] : 0.0f;
      for (size_t p = 0; p < pairs; ++p) {
        acc = DotPairPortable(acc, w.pair[g][p][lane], a.pair[t + j][p]);
      }
      y[j * y_stride + i] = acc;
    }
  }
}

// ---------------------------------------------------------------------------
// AVX-512 BF16 versions.

#if defined(__x86_64__)

CORTIQ_BF16_TARGET void ConvertAvx512Bf16(const float* x, size_t n, uint32_t* pairs) {
  size_t c = 0;
  for (; c + 32 <= n; c += 32) {
    const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + c + 16), _mm512_loadu_ps(x + c));
    memcpy(pairs + c / 2, &v, 64);
  }
  if (c < n) ConvertPortable(x + c, n - c, pairs + c / 2);
}

// 16 x 16 transpose of 32-bit words: r[i] (row i's words 0..15) becomes r[j] (word j of rows
// 0..15), by the usual unpack / 128-bit-lane shuffle network.
CORTIQ_BF16_TARGET void Transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  // Now r[4a + b] holds, in each 128-bit lane L, words 4L + (b order) of rows 4a .. 4a + 3.
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xDD);
    r[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xDD);
  }
}

// InterleaveRowBlock for full groups of 16 rows and full 16-pair column blocks, the rest by it.
CORTIQ_BF16_TARGET void InterleaveRowBlockAvx512(const uint16_t* w, size_t cols, size_t r0,
                                                 size_t num_rows, size_t k0, size_t n,
                                                 InterleavedWeights* out) {
  const size_t full_groups = num_rows / kGroupRows;
  const size_t vector_pairs = n / 32 * 16;  // pairs in whole 16-pair (32-column) blocks
  if (full_groups == 0 || vector_pairs == 0) {
    InterleaveRowBlock(w, cols, r0, num_rows, k0, n, out);
    return;
  }
  for (size_t g = 0; g < full_groups; ++g) {
    const uint16_t* rows = w + (r0 + g * kGroupRows) * cols + k0;
    for (size_t p = 0; p < vector_pairs; p += 16) {
      __m512i r[16];
      for (size_t i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(rows + i * cols + 2 * p);
      Transpose16x16(r);
      for (size_t j = 0; j < 16; ++j) _mm512_store_si512(out->pair[g][p + j], r[j]);
    }
  }
  // The remaining columns of the full groups, and the remaining rows (and padding).
  const size_t pairs = (n + 1) / 2;
  if (vector_pairs < pairs) {
    for (size_t i = 0; i < full_groups * kGroupRows; ++i) {
      const size_t g = i / kGroupRows, lane = i % kGroupRows;
      const uint16_t* row = w + (r0 + i) * cols + k0;
      for (size_t p = vector_pairs; p < pairs; ++p) {
        const uint32_t lo = row[2 * p];
        const uint32_t hi = 2 * p + 1 < n ? row[2 * p + 1] : 0;
        out->pair[g][p][lane] = lo | hi << 16;
      }
    }
  }
  InterleaveRows(w, cols, r0, full_groups * kGroupRows, num_rows, k0, n, out);
}

// The f32 values of the lower (upper) 16 bf16 of v, the first (second) operand of the
// _mm512_cvtne2ps_pbh that made it: bf16 -> f32 is a 16-bit shift.
CORTIQ_BF16_TARGET inline __m512 WidenLowerHalf(__m512bh v) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(
      _mm512_cvtepu16_epi32(_mm512_castsi512_si256(reinterpret_cast<__m512i>(v))), 16));
}
CORTIQ_BF16_TARGET inline __m512 WidenUpperHalf(__m512bh v) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(
      _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(reinterpret_cast<__m512i>(v), 1)), 16));
}

// x[0, n) as three bf16 terms whose sum is x exactly (MatMulSplitAmx): hi = bf16(x), mid =
// bf16(x - hi), lo = bf16(x - hi - mid), each difference exact in f32; pairs as ConvertPortable,
// zero-padded up to `padded_pairs`.
CORTIQ_BF16_TARGET void ConvertSplitAvx512Bf16(const float* x, size_t n, size_t padded_pairs,
                                               uint32_t* hi, uint32_t* mid, uint32_t* lo) {
  alignas(64) float tail[32];
  for (size_t c = 0; c < n; c += 32) {
    const float* src = x + c;
    if (n - c < 32) {
      memset(tail, 0, sizeof(tail));
      memcpy(tail, x + c, (n - c) * sizeof(float));
      src = tail;
    }
    const __m512 x0 = _mm512_loadu_ps(src), x1 = _mm512_loadu_ps(src + 16);
    const __m512bh h = _mm512_cvtne2ps_pbh(x1, x0);
    const __m512 r0 = _mm512_sub_ps(x0, WidenLowerHalf(h));
    const __m512 r1 = _mm512_sub_ps(x1, WidenUpperHalf(h));
    const __m512bh m = _mm512_cvtne2ps_pbh(r1, r0);
    const __m512bh l = _mm512_cvtne2ps_pbh(_mm512_sub_ps(r1, WidenUpperHalf(m)),
                                           _mm512_sub_ps(r0, WidenLowerHalf(m)));
    memcpy(hi + c / 2, &h, 64);
    memcpy(mid + c / 2, &m, 64);
    memcpy(lo + c / 2, &l, 64);
  }
  const size_t pairs = (n + 1) / 2;
  for (uint32_t* part : {hi, mid, lo}) std::fill(part + pairs, part + padded_pairs, 0u);
}

// Rows of the 4 groups (rows[g] of each stored) x kTokens tokens.
template <size_t kTokens>
CORTIQ_BF16_TARGET void TileAvx512Bf16(const InterleavedWeights& w, const BF16Activations& a,
                                       size_t t, size_t pairs, float* y, size_t y_stride,
                                       const size_t (&rows)[kGroups], bool accumulate) {
  __mmask16 mask[kGroups];
  #pragma GCC unroll 8
  for (size_t g = 0; g < kGroups; ++g) mask[g] = static_cast<__mmask16>((1u << rows[g]) - 1);
  __m512 acc[kTokens][kGroups];
  #pragma GCC unroll 8
  for (size_t j = 0; j < kTokens; ++j) {
    #pragma GCC unroll 8
    for (size_t g = 0; g < kGroups; ++g) {
      acc[j][g] = accumulate ? _mm512_maskz_loadu_ps(mask[g], y + j * y_stride + g * kGroupRows)
                             : _mm512_setzero_ps();
    }
  }
  for (size_t p = 0; p < pairs; ++p) {
    __m512bh wv[kGroups];
    #pragma GCC unroll 8
    for (size_t g = 0; g < kGroups; ++g) {
      wv[g] = reinterpret_cast<__m512bh>(_mm512_load_si512(w.pair[g][p]));
    }
    #pragma GCC unroll 8
    for (size_t j = 0; j < kTokens; ++j) {
      const __m512bh xv = reinterpret_cast<__m512bh>(
          _mm512_set1_epi32(static_cast<int32_t>(a.pair[t + j][p])));
      #pragma GCC unroll 8
      for (size_t g = 0; g < kGroups; ++g) acc[j][g] = _mm512_dpbf16_ps(acc[j][g], wv[g], xv);
    }
  }
  #pragma GCC unroll 8
  for (size_t j = 0; j < kTokens; ++j) {
    #pragma GCC unroll 8
    for (size_t g = 0; g < kGroups; ++g) {
      if (rows[g] != 0) {
        _mm512_mask_storeu_ps(y + j * y_stride + g * kGroupRows, mask[g], acc[j][g]);
      }
    }
  }
}

CORTIQ_BF16_TARGET void TileAvx512Bf16Tail(size_t tokens, const InterleavedWeights& w,
                                           const BF16Activations& a, size_t t, size_t pairs,
                                           float* y, size_t y_stride,
                                           const size_t (&rows)[kGroups], bool accumulate) {
  switch (tokens) {
    case 1: return TileAvx512Bf16<1>(w, a, t, pairs, y, y_stride, rows, accumulate);
    case 2: return TileAvx512Bf16<2>(w, a, t, pairs, y, y_stride, rows, accumulate);
    case 3: return TileAvx512Bf16<3>(w, a, t, pairs, y, y_stride, rows, accumulate);
    case 4: return TileAvx512Bf16<4>(w, a, t, pairs, y, y_stride, rows, accumulate);
    default: return TileAvx512Bf16<5>(w, a, t, pairs, y, y_stride, rows, accumulate);
  }
}

// ---------------------------------------------------------------------------
// AMX-BF16 versions: TDPBF16PS multiplies a 16 x 32 bf16 tile A (16 tokens' activations, one
// 64-byte row each: BF16Activations rows as they are) by a 16 x 16 pair tile B (16 column
// pairs of 16 weight rows: InterleavedWeights as it is) into a 16 x 16 f32 tile C (tokens x
// rows: a block of y itself, loaded and stored with y's stride).

// A C tile's part of y: `tokens` x `rows` floats at y (stride y_stride), the rest of the tile
// unused.
struct CBlock {
  float* y;
  size_t tokens, rows;
  bool full() const { return tokens == kGroupRows && rows == kGroupRows; }
};

// Partial C blocks go through a full 16 x 16 buffer.
using CTemp = float[kGroupRows][kGroupRows];

void CopyToTemp(const CBlock& c, size_t y_stride, CTemp& temp) {
  memset(temp, 0, sizeof(temp));
  for (size_t t = 0; t < c.tokens; ++t) memcpy(temp[t], c.y + t * y_stride, c.rows * 4);
}

void CopyFromTemp(const CBlock& c, size_t y_stride, const CTemp& temp) {
  for (size_t t = 0; t < c.tokens; ++t) memcpy(c.y + t * y_stride, temp[t], c.rows * 4);
}

// LoadC##TILE: C tile TILE from y (accumulate) or zero (not accumulate, or an unused block);
// StoreC##TILE: back into y (a used block). GCC's tile intrinsics paste the tile number into
// the instruction's text, so it must be a literal: one function per tile.
#define CORTIQ_C_TILE_FUNCTIONS(TILE)                                                         \
  CORTIQ_AMX_TARGET void LoadC##TILE(const CBlock& c, bool used, size_t y_stride,              \
                                     bool accumulate, CTemp& temp) {                          \
    if (!used || !accumulate) {                                                               \
      _tile_zero(TILE);                                                                       \
    } else if (c.full()) {                                                                    \
      _tile_loadd(TILE, c.y, y_stride * sizeof(float));                                       \
    } else {                                                                                  \
      CopyToTemp(c, y_stride, temp);                                                          \
      _tile_loadd(TILE, temp, sizeof(temp[0]));                                               \
    }                                                                                         \
  }                                                                                           \
  CORTIQ_AMX_TARGET void StoreC##TILE(const CBlock& c, bool used, size_t y_stride,             \
                                      CTemp& temp) {                                          \
    if (!used) return;                                                                        \
    if (c.full()) {                                                                           \
      _tile_stored(TILE, c.y, y_stride * sizeof(float));                                      \
    } else {                                                                                  \
      _tile_stored(TILE, temp, sizeof(temp[0]));                                              \
      CopyFromTemp(c, y_stride, temp);                                                        \
    }                                                                                         \
  }
CORTIQ_C_TILE_FUNCTIONS(0)
CORTIQ_C_TILE_FUNCTIONS(1)
CORTIQ_C_TILE_FUNCTIONS(2)
CORTIQ_C_TILE_FUNCTIONS(3)
#undef CORTIQ_C_TILE_FUNCTIONS

// The row block's groups (rows[g] rows each, groups in pairs) x `tokens` tokens over k_steps
// steps of 16 column pairs; the activation rows past `tokens` (up to the next 32) and the
// weight lanes past rows[g] only reach C entries that are not stored.
// The rounded option's products: one bf16 term of weights and activations, tiles of 2 x 2
// C blocks (two token tiles by two row groups) so that each A and B tile feeds two products.
CORTIQ_AMX_TARGET void RowBlockAmx(const InterleavedWeights& w, const BF16Activations& a,
                                   size_t tokens, size_t k_steps, float* y, size_t y_stride,
                                   const size_t (&rows)[kGroups], bool accumulate) {
  alignas(64) CTemp temp;
  constexpr size_t kAStride = sizeof(BF16Activations::pair[0]);
  constexpr size_t kBStride = sizeof(InterleavedWeights::pair[0][0]);
  for (size_t t = 0; t < tokens; t += 2 * kGroupRows) {
    const size_t tokens0 = std::min(kGroupRows, tokens - t);
    const size_t tokens1 = tokens - t > kGroupRows ? std::min(kGroupRows, tokens - t - kGroupRows)
                                                   : 0;
    for (size_t g = 0; g < kGroups && rows[g] != 0; g += 2) {
      float* yt = y + t * y_stride + g * kGroupRows;
      const CBlock c[4] = {
          {yt, tokens0, rows[g]},
          {yt + kGroupRows, tokens0, rows[g + 1]},
          {yt + kGroupRows * y_stride, tokens1, rows[g]},
          {yt + kGroupRows * y_stride + kGroupRows, tokens1, rows[g + 1]},
      };
      // An empty block (no tokens or rows) is computed, not loaded or stored.
      const bool used[4] = {true, rows[g + 1] != 0, tokens1 != 0,
                            tokens1 != 0 && rows[g + 1] != 0};
      LoadC0(c[0], used[0], y_stride, accumulate, temp);
      LoadC1(c[1], used[1], y_stride, accumulate, temp);
      LoadC2(c[2], used[2], y_stride, accumulate, temp);
      LoadC3(c[3], used[3], y_stride, accumulate, temp);
      for (size_t s = 0; s < k_steps; ++s) {
        _tile_loadd(4, a.pair[t] + 16 * s, kAStride);
        _tile_loadd(5, a.pair[t + kGroupRows] + 16 * s, kAStride);
        _tile_loadd(6, w.pair[g][16 * s], kBStride);
        _tile_loadd(7, w.pair[g + 1][16 * s], kBStride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      StoreC0(c[0], used[0], y_stride, temp);
      StoreC1(c[1], used[1], y_stride, temp);
      StoreC2(c[2], used[2], y_stride, temp);
      StoreC3(c[3], used[3], y_stride, temp);
    }
  }
}

// y += C_main + C_correction for one C block (16 x 16 floats each, rows of 16), in f32.
void AddCorrection(const CBlock& c, size_t y_stride, const CTemp& main, const CTemp& correction) {
  for (size_t t = 0; t < c.tokens; ++t) {
    for (size_t r = 0; r < c.rows; ++r) c.y[t * y_stride + r] = main[t][r] + correction[t][r];
  }
}

// The exact split's products: weight term i (num_w of them) by activation term j (three) for
// i + j <= 2, for one token tile by two row groups. The leading products (i = j = 0) go to the
// main C tiles (0, 1, which start from y), the others, smaller by 2^-8 and more, to correction
// tiles (2, 3, from zero): so the main sums take one rounding per 32 columns, as a single
// product's would, and the corrections' roundings are 2^-8 smaller; y = main + correction at
// the end. Tiles: 4 A (the term's 16 tokens), 6-7 B (the term's two row groups).
CORTIQ_AMX_TARGET void RowBlockSplitAmx(const InterleavedWeights* const* w_terms, size_t num_w,
                                        const BF16Activations* const* x_terms, size_t tokens,
                                        size_t k_steps, float* y, size_t y_stride,
                                        const size_t (&rows)[kGroups], bool accumulate) {
  alignas(64) CTemp temp, main[2], correction[2];
  constexpr size_t kAStride = sizeof(BF16Activations::pair[0]);
  constexpr size_t kBStride = sizeof(InterleavedWeights::pair[0][0]);
  for (size_t t = 0; t < tokens; t += kGroupRows) {
    const size_t tile_tokens = std::min(kGroupRows, tokens - t);
    for (size_t g = 0; g < kGroups && rows[g] != 0; g += 2) {
      float* yt = y + t * y_stride + g * kGroupRows;
      const CBlock c[2] = {{yt, tile_tokens, rows[g]}, {yt + kGroupRows, tile_tokens, rows[g + 1]}};
      const bool used[2] = {true, rows[g + 1] != 0};
      LoadC0(c[0], used[0], y_stride, accumulate, temp);
      LoadC1(c[1], used[1], y_stride, accumulate, temp);
      _tile_zero(2);
      _tile_zero(3);
      for (size_t s = 0; s < k_steps; ++s) {
        for (size_t i = 0; i < num_w; ++i) {
          _tile_loadd(6, w_terms[i]->pair[g][16 * s], kBStride);
          _tile_loadd(7, w_terms[i]->pair[g + 1][16 * s], kBStride);
          for (size_t j = 0; i + j <= 2; ++j) {
            _tile_loadd(4, x_terms[j]->pair[t] + 16 * s, kAStride);
            if (i == 0 && j == 0) {
              _tile_dpbf16ps(0, 4, 6);
              _tile_dpbf16ps(1, 4, 7);
            } else {
              _tile_dpbf16ps(2, 4, 6);
              _tile_dpbf16ps(3, 4, 7);
            }
          }
        }
      }
      _tile_stored(0, main[0], sizeof(main[0][0]));
      _tile_stored(1, main[1], sizeof(main[1][0]));
      _tile_stored(2, correction[0], sizeof(correction[0][0]));
      _tile_stored(3, correction[1], sizeof(correction[1][0]));
      for (size_t k = 0; k < 2; ++k) {
        if (used[k]) AddCorrection(c[k], y_stride, main[k], correction[k]);
      }
    }
  }
}

CORTIQ_AMX_TARGET void ConfigureTiles() {
  // All 8 tiles 16 rows x 64 bytes. RowBlockAmx: 0-3 C (token tile i, group j at 2i + j), 4-5
  // A, 6-7 B; RowBlockSplitAmx: 0-1 C main, 2-3 C correction, 4 A, 6-7 B.
  static const AmxTileConfig config = AmxTileConfig().Set(0, 7, 16, 64);
  _tile_loadconfig(&config);
}

CORTIQ_AMX_TARGET void ReleaseTiles() { _tile_release(); }

bool CpuHasAvx512Bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
}
#else
bool CpuHasAvx512Bf16() { return false; }
#endif

std::atomic<int> g_best_allowed{static_cast<int>(BF16ActivationsPath::kAmx)};

BF16ActivationsPath Dispatched() {
  static const BF16ActivationsPath best =
      !CpuHasAvx512Bf16() ? BF16ActivationsPath::kPortable
      : AmxBf16Available() ? BF16ActivationsPath::kAmx
                          : BF16ActivationsPath::kAvx512Bf16;
  // The enum's order is fastest first.
  return static_cast<BF16ActivationsPath>(
      std::max(static_cast<int>(best), g_best_allowed.load(std::memory_order_relaxed)));
}

// Scratch of the calling thread (a session's pool threads each have theirs): allocated on the
// first call, ~600 KiB.
struct Scratch {
  InterleavedWeights weights;
  BF16Activations activations;
  BF16Activations split[2];  // the mid and lo terms of the exact split (hi in activations)
  // MatMulSplitAmx's decoded weights: a row's chunk in f32, its terms as bf16 rows, and the
  // terms after the first interleaved (the first in `weights`).
  alignas(64) float decoded[kChunk];
  alignas(64) uint32_t term_rows[3][kRowBlock][kChunkPairs];
  InterleavedWeights weight_terms[2];
};
Scratch& ThreadScratch() {
  thread_local std::unique_ptr<Scratch> scratch(new Scratch);
  return *scratch;
}

}  // namespace

uint16_t RoundToBF16(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040);
  if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;  // DAZ
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

namespace {

// The weights' first term (all of a BF16 matrix) of row block [r0, r0 + block_rows) and chunk
// [k0, k0 + n) into scratch.weights, and for a decoded format (decode != null) its other terms
// into scratch.weight_terms; the pairs after the chunk's, up to `padded_pairs`, zero.
CORTIQ_AMX_TARGET void WeightTermsAmx(const void* w_bytes, WeightRowDecoder decode,
                                      size_t num_w, size_t cols, size_t r0, size_t block_rows,
                                      size_t k0, size_t n, size_t padded_pairs,
                                      Scratch* scratch) {
  InterleavedWeights* const terms[3] = {&scratch->weights, &scratch->weight_terms[0],
                                        &scratch->weight_terms[1]};
  if (decode == nullptr) {
    InterleaveRowBlockAvx512(static_cast<const uint16_t*>(w_bytes), cols, r0, block_rows, k0, n,
                             terms[0]);
  } else {
    for (size_t i = 0; i < block_rows; ++i) {
      decode(w_bytes, cols, r0 + i, k0, n, scratch->decoded);
      ConvertSplitAvx512Bf16(scratch->decoded, n, kChunkPairs, scratch->term_rows[0][i],
                             scratch->term_rows[1][i], scratch->term_rows[2][i]);
    }
    for (size_t term = 0; term < num_w; ++term) {
      InterleaveRowBlockAvx512(reinterpret_cast<const uint16_t*>(scratch->term_rows[term]),
                               kChunk, 0, block_rows, 0, n, terms[term]);
    }
  }
  const size_t pairs = (n + 1) / 2;
  for (size_t term = 0; term < num_w; ++term) {
    for (size_t g = 0; g < kGroups; ++g) {
      for (size_t p = pairs; p < padded_pairs; ++p) {
        std::fill(terms[term]->pair[g][p], terms[term]->pair[g][p] + kGroupRows, 0u);
      }
    }
  }
}

// The products of the public functions: `split` (MatMulSplitAmx, AMX only) multiplies the
// three-term split of the activations by the num_w terms of the weights (decoded by `decode`,
// or BF16 as they are when null), else the activations' rounding to bf16 by BF16 weights on
// `path`.
void MatMulImpl(const void* w_bytes, const float* x, size_t x_stride, float* y, size_t y_stride,
                size_t batch, size_t cols, size_t row_begin, size_t row_end,
                BF16ActivationsPath path, bool split, WeightRowDecoder decode = nullptr,
                size_t num_w = 1) {
  if (row_begin >= row_end || batch == 0 || cols == 0) return;
  const uint16_t* w = static_cast<const uint16_t*>(w_bytes);
  Scratch& scratch = ThreadScratch();
  InterleavedWeights& iw = scratch.weights;
  BF16Activations& xa = scratch.activations;
  const BF16Activations* const parts[3] = {&xa, &scratch.split[0], &scratch.split[1]};
  const bool fast = path != BF16ActivationsPath::kPortable;
#if defined(__x86_64__)
  const bool amx = path == BF16ActivationsPath::kAmx;
  if (amx) ConfigureTiles();
#endif
  for (size_t t0 = 0; t0 < batch; t0 += kTokenBlock) {
    const size_t tokens = std::min(kTokenBlock, batch - t0);
    for (size_t k0 = 0; k0 < cols; k0 += kChunk) {
      const size_t n = std::min(kChunk, cols - k0);
      const size_t pairs = (n + 1) / 2;
      // AMX runs whole steps of 16 pairs: the pairs after the chunk's are zero in both operands.
      const size_t k_steps = (pairs + 15) / 16;
      const bool accumulate = k0 != 0;
      for (size_t t = 0; t < tokens; ++t) {
#if defined(__x86_64__)
        if (split) {
          ConvertSplitAvx512Bf16(x + (t0 + t) * x_stride + k0, n, 16 * k_steps, xa.pair[t],
                                 scratch.split[0].pair[t], scratch.split[1].pair[t]);
          continue;
        }
        if (fast) {
          ConvertAvx512Bf16(x + (t0 + t) * x_stride + k0, n, xa.pair[t]);
          if (amx) std::fill(xa.pair[t] + pairs, xa.pair[t] + 16 * k_steps, 0u);
          continue;
        }
#endif
        ConvertPortable(x + (t0 + t) * x_stride + k0, n, xa.pair[t]);
      }
      for (size_t r0 = row_begin; r0 < row_end; r0 += kRowBlock) {
        const size_t block_rows = std::min(kRowBlock, row_end - r0);
        float* yb = y + t0 * y_stride + r0;
#if defined(__x86_64__)
        if (fast) {
          size_t group_rows[kGroups];
          for (size_t g = 0; g < kGroups; ++g) {
            const size_t first = g * kGroupRows;
            group_rows[g] = first < block_rows ? std::min(kGroupRows, block_rows - first) : 0;
          }
          if (amx) {
            WeightTermsAmx(w_bytes, decode, num_w, cols, r0, block_rows, k0, n, 16 * k_steps,
                           &scratch);
            if (split) {
              const InterleavedWeights* const w_terms[3] = {&iw, &scratch.weight_terms[0],
                                                            &scratch.weight_terms[1]};
              RowBlockSplitAmx(w_terms, num_w, parts, tokens, k_steps, yb, y_stride, group_rows,
                               accumulate);
            } else {
              RowBlockAmx(iw, xa, tokens, k_steps, yb, y_stride, group_rows, accumulate);
            }
            continue;
          }
          InterleaveRowBlockAvx512(w, cols, r0, block_rows, k0, n, &iw);
          size_t t = 0;
          for (; t + kTileTokens <= tokens; t += kTileTokens) {
            TileAvx512Bf16<kTileTokens>(iw, xa, t, pairs, yb + t * y_stride, y_stride,
                                        group_rows, accumulate);
          }
          if (t < tokens) {
            TileAvx512Bf16Tail(tokens - t, iw, xa, t, pairs, yb + t * y_stride, y_stride,
                               group_rows, accumulate);
          }
          continue;
        }
#endif
        InterleaveRowBlock(w, cols, r0, block_rows, k0, n, &iw);
        TilePortable(iw, xa, 0, tokens, pairs, yb, y_stride, block_rows, accumulate);
      }
    }
  }
#if defined(__x86_64__)
  if (amx) ReleaseTiles();
#endif
}

}  // namespace

void MatMulBF16BF16Activations(const void* w, const float* x, size_t x_stride, float* y,
                               size_t y_stride, size_t batch, size_t rows, size_t cols,
                               size_t row_begin, size_t row_end) {
  (void)rows;
  MatMulImpl(w, x, x_stride, y, y_stride, batch, cols, row_begin, row_end, Dispatched(),
             /*split=*/false);
}

bool BF16x3Available() { return AmxBf16Available() && CpuHasAvx512Bf16(); }

namespace {

// MatMulSplitAmx without AMX: the rows decoded to f32 (BF16 widened when decode is null), 64 at
// a time, and multiplied by MatMulF32 (exact f32 FMAs).
void MatMulDecodedF32(WeightRowDecoder decode, const void* w, const float* x, size_t x_stride,
                      float* y, size_t y_stride, size_t batch, size_t rows, size_t cols,
                      size_t row_begin, size_t row_end) {
  (void)rows;
  std::vector<float> block(kRowBlock * cols);
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowBlock) {
    const size_t n = std::min(kRowBlock, row_end - r0);
    for (size_t i = 0; i < n; ++i) {
      float* out = block.data() + i * cols;
      if (decode != nullptr) {
        decode(w, cols, r0 + i, 0, cols, out);
      } else {
        const uint16_t* row = static_cast<const uint16_t*>(w) + (r0 + i) * cols;
        for (size_t c = 0; c < cols; ++c) out[c] = BF16ToF32(row[c]);
      }
    }
    MatMulF32(block.data(), x, x_stride, y + r0, y_stride, batch, n, cols, 0, n);
  }
}

}  // namespace

void MatMulSplitAmx(WeightRowDecoder decode, int weight_terms, const void* w, const float* x,
                    size_t x_stride, float* y, size_t y_stride, size_t batch, size_t rows,
                    size_t cols, size_t row_begin, size_t row_end) {
  if (!BF16x3Available()) {
    // (Also asks the OS for the tile state on the first call: no tile instruction before it.)
    MatMulDecodedF32(decode, w, x, x_stride, y, y_stride, batch, rows, cols, row_begin, row_end);
    return;
  }
  // Without a decoder w is BF16: one term, whatever weight_terms says.
  const size_t num_w = decode == nullptr ? 1 : static_cast<size_t>(std::clamp(weight_terms, 1, 3));
  MatMulImpl(w, x, x_stride, y, y_stride, batch, cols, row_begin, row_end,
             BF16ActivationsPath::kAmx, /*split=*/true, decode, num_w);
}

void MatMulBF16x3(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                  size_t batch, size_t rows, size_t cols, size_t row_begin, size_t row_end) {
  if (!BF16x3Available()) {
    MatMulBF16(static_cast<const hwy::bfloat16_t*>(w), x, x_stride, y, y_stride, batch, rows, cols,
               row_begin, row_end);
    return;
  }
  MatMulSplitAmx(nullptr, 1, w, x, x_stride, y, y_stride, batch, rows, cols, row_begin, row_end);
}

BF16ActivationsPath DispatchedBF16ActivationsPath() { return Dispatched(); }

const char* BF16ActivationsPathName(BF16ActivationsPath path) {
  switch (path) {
    case BF16ActivationsPath::kAmx:
      return "AMX-BF16";
    case BF16ActivationsPath::kAvx512Bf16:
      return "AVX-512 BF16";
    case BF16ActivationsPath::kPortable:
      return "portable";
  }
  return "unknown";
}

void LimitBF16ActivationsPathForTest(BF16ActivationsPath fastest) {
  g_best_allowed.store(static_cast<int>(fastest), std::memory_order_relaxed);
}

}  // namespace ops
}  // namespace cortiq
