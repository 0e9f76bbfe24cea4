// MatMulQ8_0Q8Activations / MatMulQ4_0Q8Activations (ops/matmul_q8_activations.h).
//
// Layout: lanes are output rows. A row block's weights are decoded once per column chunk and
// token block into groups of 16 rows, interleaved by 4 columns (one 64-byte vector holds 4
// consecutive quants of 16 rows, as unsigned bytes: Q8_0 q + 128, Q4_0 the nibble), so one
// vpdpbusd multiplies them by 4 activation quants broadcast from memory and adds the 4 products
// of each row into its lane: 16 rows x 4 columns per instruction, no horizontal sums. After the
// 8 instructions of a 32-column block the lane holds sum(u * q_x) = isum + offset * sum(q_x)
// (offset 128 or 8), corrected by starting the lane at -offset * sum(q_x); then one conversion
// and one FMA with the block's scales add it to the f32 accumulator of (row, token).
//
// Dispatch by hand, not Highway: Highway 1.0.3 (Debian 12) has VNNI only in its AVX3_DL target,
// whose target string omits avx512vnni and which is off unless HWY_WANT_AVX3_DL. The VNNI
// functions carry their own target attribute and run when the CPU reports AVX-512 F/BW/VL/VNNI;
// the portable functions compute the same bits (the integer sums are exact, the f32 steps are the
// same operations in the same order).
#include "ops/matmul_q8_activations.h"

#include <math.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include "ops/amx.h"
#include "ops/cpu_features.h"
#include "ops/quantize.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q8_0x16.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define CORTIQ_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#define CORTIQ_AMX_INT8_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,amx-tile,amx-int8")))
#endif

namespace cortiq {
namespace ops {
namespace {

constexpr size_t kBlock = 32;           // columns per Q8_0 / Q4_0 block
constexpr size_t kChunk = 512;          // columns per chunk: 16 blocks
constexpr size_t kChunkBlocks = kChunk / kBlock;
constexpr size_t kTokenBlock = 256;     // tokens whose quantized chunk is reused by every row
constexpr size_t kGroupRows = 16;       // rows per group: one int32 lane each
constexpr size_t kGroupsPerBlock = 4;   // row block of 64 rows decoded at a time
constexpr size_t kTileTokens = 6;       // tokens per micro-tile (x 2 row groups)

// A row block's decoded weights for one column chunk.
struct DecodedWeights {
  // [group][column / 4][row in group][4]: the unsigned quants.
  alignas(64) uint8_t q[kGroupsPerBlock][kChunk / 4][kGroupRows][4];
  // [group][block][row in group]: the blocks' scales (0 for rows past the range).
  alignas(64) float d[kGroupsPerBlock][kChunkBlocks][kGroupRows];
};

// The quantized activations of a token block for one column chunk.
struct QuantizedActivations {
  alignas(64) int8_t q[kTokenBlock][kChunk];
  alignas(64) float d[kTokenBlock][kChunkBlocks];
  alignas(64) int32_t sum[kTokenBlock][kChunkBlocks];
};

float Scale(const uint8_t* block) {
  uint16_t bits;
  memcpy(&bits, block, sizeof(bits));
  return F16BitsToF32(bits);
}

// Where the 32-weight block b of a row is and how its quants read as unsigned bytes: Scale(row,
// b) is the block's f16 scale, Unsigned(row, b, u) its 32 quants in column order, shifted by
// kOffset to be unsigned.
struct Q8_0Layout {
  static constexpr size_t kBlockBytes = kQ8_0BlockBytes;
  static constexpr int32_t kOffset = 128;
  static size_t RowBytes(size_t cols) { return Q8_0RowBytes(cols); }
  static float Scale(const uint8_t* row, size_t b) {
    return ::cortiq::ops::Scale(row + b * kBlockBytes);
  }
  // The block's 32 quants as unsigned bytes q + 128.
  static void Unsigned(const uint8_t* row, size_t b, uint8_t* u) {
    const uint8_t* block = row + b * kBlockBytes;
    for (size_t j = 0; j < kBlock; ++j) u[j] = block[2 + j] ^ 0x80;
  }
};
struct Q4_0Layout {
  static constexpr size_t kBlockBytes = kQ4_0BlockBytes;
  static constexpr int32_t kOffset = 8;
  static size_t RowBytes(size_t cols) { return Q4_0RowBytes(cols); }
  static float Scale(const uint8_t* row, size_t b) {
    return ::cortiq::ops::Scale(row + b * kBlockBytes);
  }
  // The block's 32 nibbles (weights 0-15 in the low nibbles, 16-31 in the high ones).
  static void Unsigned(const uint8_t* row, size_t b, uint8_t* u) {
    const uint8_t* block = row + b * kBlockBytes;
    for (size_t j = 0; j < 16; ++j) {
      u[j] = block[2 + j] & 0x0F;
      u[j + 16] = block[2 + j] >> 4;
    }
  }
};
// The regrouped layout of Plain's blocks (Q4_0x16, Q8_0x16: ops/quantize_q4_0x16.h,
// ops/quantize_q8_0x16.h), the same bytes per row: block b is block j = b % 16 of the row's
// group b / 16 of 16 blocks, its scale at byte 2 j of the group and its quant byte k at 32 +
// 64 (k / 4) + 4 j + k % 4. Unsigned reassembles the plain block and reads it as Plain does, so
// the bits are those of the Plain rows the groups were made from.
template <class Plain>
struct X16Layout {
  static constexpr size_t kGroupBytes = 16 * Plain::kBlockBytes;
  static constexpr int32_t kOffset = Plain::kOffset;
  static size_t RowBytes(size_t cols) { return Plain::RowBytes(cols); }
  static float Scale(const uint8_t* row, size_t b) {
    return ::cortiq::ops::Scale(row + b / 16 * kGroupBytes + 2 * (b % 16));
  }
  static void Unsigned(const uint8_t* row, size_t b, uint8_t* u) {
    const uint8_t* group = row + b / 16 * kGroupBytes;
    const size_t j = b % 16;
    uint8_t block[Plain::kBlockBytes];
    memcpy(block, group + 2 * j, 2);
    for (size_t k = 0; k + 2 < Plain::kBlockBytes; ++k) {
      block[2 + k] = group[32 + 64 * (k / 4) + 4 * j + k % 4];
    }
    Plain::Unsigned(block, 0, u);
  }
};
using Q4_0x16Layout = X16Layout<Q4_0Layout>;
using Q8_0x16Layout = X16Layout<Q8_0Layout>;
static_assert(Q4_0x16Layout::kGroupBytes == kQ4_0x16BlockBytes &&
                  Q8_0x16Layout::kGroupBytes == kQ8_0x16BlockBytes,
              "the groups of the x16 formats");

// Decodes rows [r0, r0 + num_rows) (num_rows <= 64) of chunk [k0, k0 + n) into `out`; the
// rows after them up to the end of their pair of groups (the VNNI tile runs two groups and reads
// both) get zero quants and scales, so they add nothing.
template <class Layout>
void DecodeRowBlock(const uint8_t* w, size_t row_bytes, size_t r0, size_t num_rows, size_t k0,
                    size_t n, DecodedWeights* out) {
  const size_t blocks = n / kBlock;
  constexpr size_t kPairRows = 2 * kGroupRows;
  const size_t padded_rows = (num_rows + kPairRows - 1) / kPairRows * kPairRows;
  for (size_t i = 0; i < padded_rows; ++i) {
    const size_t g = i / kGroupRows, lane = i % kGroupRows;
    if (i >= num_rows) {
      for (size_t b = 0; b < blocks; ++b) {
        out->d[g][b][lane] = 0.0f;
        for (size_t k = 0; k < kBlock / 4; ++k) memset(out->q[g][b * 8 + k][lane], 0, 4);
      }
      continue;
    }
    const uint8_t* row = w + (r0 + i) * row_bytes;
    for (size_t b = 0; b < blocks; ++b) {
      out->d[g][b][lane] = Layout::Scale(row, k0 / kBlock + b);
      uint8_t u[kBlock];
      Layout::Unsigned(row, k0 / kBlock + b, u);
      for (size_t k = 0; k < kBlock / 4; ++k) memcpy(out->q[g][b * 8 + k][lane], u + 4 * k, 4);
    }
  }
}

// ---------------------------------------------------------------------------
// Portable versions (the same bits as the VNNI ones).

void QuantizePortable(const float* x, size_t n, int8_t* q, float* d, int32_t* sum) {
  for (size_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.0f;
    for (size_t j = 0; j < kBlock; ++j) amax = std::max(amax, fabsf(xb[j]));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    d[b] = amax / 127.0f;
    int32_t s = 0;
    for (size_t j = 0; j < kBlock; ++j) {
      const int32_t v = static_cast<int32_t>(nearbyintf(xb[j] * id));
      q[b * kBlock + j] = static_cast<int8_t>(v);
      s += v;
    }
    sum[b] = s;
  }
}

// y rows of group g for tokens [t, t + tokens) of the token block, blocks [0, blocks).
void TilePortable(const DecodedWeights& w, size_t g, const QuantizedActivations& a, size_t t,
                  size_t tokens, size_t blocks, int32_t offset, float* y, size_t y_stride,
                  size_t num_rows, bool accumulate) {
  for (size_t j = 0; j < tokens; ++j) {
    for (size_t lane = 0; lane < num_rows; ++lane) {
      float acc = accumulate ? y[j * y_stride + lane] : 0.0f;
      for (size_t b = 0; b < blocks; ++b) {
        int32_t isum = -offset * a.sum[t + j][b];
        for (size_t k = 0; k < kBlock; ++k) {
          isum += static_cast<int32_t>(w.q[g][b * 8 + k / 4][lane][k % 4]) *
                  a.q[t + j][b * kBlock + k];
        }
        acc = fmaf(w.d[g][b][lane] * a.d[t + j][b], static_cast<float>(isum), acc);
      }
      y[j * y_stride + lane] = acc;
    }
  }
}

// ---------------------------------------------------------------------------
// AVX-512 VNNI versions.

#if defined(__x86_64__)

CORTIQ_VNNI_TARGET void QuantizeVnni(const float* x, size_t n, int8_t* q, float* d,
                                     int32_t* sum) {
  const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  for (size_t b = 0; b < n / kBlock; ++b) {
    const __m512 x0 = _mm512_loadu_ps(x + b * kBlock);
    const __m512 x1 = _mm512_loadu_ps(x + b * kBlock + 16);
    const float amax = _mm512_reduce_max_ps(
        _mm512_max_ps(_mm512_and_ps(x0, sign), _mm512_and_ps(x1, sign)));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    d[b] = amax / 127.0f;
    // cvtps2dq rounds to nearest even (the default MXCSR mode), as nearbyintf does.
    const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(x0, _mm512_set1_ps(id)));
    const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(x1, _mm512_set1_ps(id)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + b * kBlock), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + b * kBlock + 16), _mm512_cvtepi32_epi8(q1));
    sum[b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
  }
}

// Two row groups (g, g + 1) x kTokens tokens: 2 x kTokens int32 and f32 accumulators.
template <size_t kTokens>
CORTIQ_VNNI_TARGET void TileVnni(const DecodedWeights& w, size_t g, const QuantizedActivations& a,
                                 size_t t, size_t blocks, int32_t offset, float* y,
                                 size_t y_stride, size_t rows0, size_t rows1, bool accumulate) {
  const __mmask16 mask0 = static_cast<__mmask16>((1u << rows0) - 1);
  const __mmask16 mask1 = static_cast<__mmask16>((1u << rows1) - 1);
  __m512 f0[kTokens], f1[kTokens];
  for (size_t j = 0; j < kTokens; ++j) {
    f0[j] = accumulate ? _mm512_maskz_loadu_ps(mask0, y + j * y_stride) : _mm512_setzero_ps();
    f1[j] = accumulate ? _mm512_maskz_loadu_ps(mask1, y + j * y_stride + kGroupRows)
                       : _mm512_setzero_ps();
  }
  for (size_t b = 0; b < blocks; ++b) {
    __m512i i0[kTokens], i1[kTokens];
    for (size_t j = 0; j < kTokens; ++j) {
      i0[j] = _mm512_set1_epi32(-offset * a.sum[t + j][b]);
      i1[j] = i0[j];
    }
    for (size_t k = 0; k < kBlock / 4; ++k) {
      const __m512i w0 = _mm512_load_si512(w.q[g][b * 8 + k]);
      const __m512i w1 = _mm512_load_si512(w.q[g + 1][b * 8 + k]);
      for (size_t j = 0; j < kTokens; ++j) {
        int32_t four;
        memcpy(&four, &a.q[t + j][b * kBlock + 4 * k], 4);
        const __m512i xq = _mm512_set1_epi32(four);
        i0[j] = _mm512_dpbusd_epi32(i0[j], w0, xq);
        i1[j] = _mm512_dpbusd_epi32(i1[j], w1, xq);
      }
    }
    const __m512 d0 = _mm512_load_ps(w.d[g][b]);
    const __m512 d1 = _mm512_load_ps(w.d[g + 1][b]);
    for (size_t j = 0; j < kTokens; ++j) {
      const __m512 dx = _mm512_set1_ps(a.d[t + j][b]);
      f0[j] = _mm512_fmadd_ps(_mm512_mul_ps(d0, dx), _mm512_cvtepi32_ps(i0[j]), f0[j]);
      f1[j] = _mm512_fmadd_ps(_mm512_mul_ps(d1, dx), _mm512_cvtepi32_ps(i1[j]), f1[j]);
    }
  }
  for (size_t j = 0; j < kTokens; ++j) {
    _mm512_mask_storeu_ps(y + j * y_stride, mask0, f0[j]);
    if (rows1 != 0) _mm512_mask_storeu_ps(y + j * y_stride + kGroupRows, mask1, f1[j]);
  }
}

CORTIQ_VNNI_TARGET void TileVnniTail(size_t tokens, const DecodedWeights& w, size_t g,
                                     const QuantizedActivations& a, size_t t, size_t blocks,
                                     int32_t offset, float* y, size_t y_stride, size_t rows0,
                                     size_t rows1, bool accumulate) {
  switch (tokens) {
    case 1: return TileVnni<1>(w, g, a, t, blocks, offset, y, y_stride, rows0, rows1, accumulate);
    case 2: return TileVnni<2>(w, g, a, t, blocks, offset, y, y_stride, rows0, rows1, accumulate);
    case 3: return TileVnni<3>(w, g, a, t, blocks, offset, y, y_stride, rows0, rows1, accumulate);
    case 4: return TileVnni<4>(w, g, a, t, blocks, offset, y, y_stride, rows0, rows1, accumulate);
    case 5: return TileVnni<5>(w, g, a, t, blocks, offset, y, y_stride, rows0, rows1, accumulate);
    default: return TileVnni<6>(w, g, a, t, blocks, offset, y, y_stride, rows0, rows1, accumulate);
  }
}

// ---------------------------------------------------------------------------
// AMX-INT8 version: per 32-column block, TDPBSUD multiplies a 16 x 32 tile of 16 tokens'
// activation quants (signed; QuantizedActivations rows as they are) by an 8 x 64 tile of one
// group's unsigned weight quants (DecodedWeights as it is: 4 columns of 16 rows per 64 bytes)
// into a 16 x 16 int32 tile (tokens x rows), the block's exact integer sums, which the same f32
// steps as the VNNI tile then add to the accumulators: the same bits. Two C tiles alternate
// between consecutive blocks so that one block's products overlap the other's f32 steps.

CORTIQ_AMX_INT8_TARGET void ConfigureInt8Tiles() {
  // Tiles 0-1: C (int32, 16 x 64 bytes); 2-3: A (16 x 32 bytes); 4-5: B (8 x 64 bytes).
  static const AmxTileConfig config =
      AmxTileConfig().Set(0, 1, 16, 64).Set(2, 3, 16, 32).Set(4, 5, 8, 64);
  _tile_loadconfig(&config);
}

CORTIQ_AMX_INT8_TARGET void ReleaseTiles() { _tile_release(); }

// acc[j] += (d_w * d_x[t + j]) * (isum[j] - offset * sum_x[t + j]) for the 16 token rows of a
// stored C tile, as TileVnni's f32 steps.
CORTIQ_AMX_INT8_TARGET inline void AddBlock(const int32_t (&c)[kGroupRows][kGroupRows],
                                            const DecodedWeights& w, size_t g,
                                            const QuantizedActivations& a, size_t t, size_t b,
                                            int32_t offset, size_t tokens,
                                            __m512 (&acc)[kGroupRows]) {
  const __m512 dw = _mm512_load_ps(w.d[g][b]);
  // Only the tile's real tokens: the rows after them hold no quantized activations.
  for (size_t j = 0; j < tokens; ++j) {
    const __m512i isum = _mm512_add_epi32(_mm512_load_si512(c[j]),
                                          _mm512_set1_epi32(-offset * a.sum[t + j][b]));
    acc[j] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(a.d[t + j][b])),
                             _mm512_cvtepi32_ps(isum), acc[j]);
  }
}

// Group g's rows (rows of them) x tokens [t, t + tokens) (at most 16) over `blocks` blocks; the
// token rows past `tokens` compute values that are not stored.
CORTIQ_AMX_INT8_TARGET void TileAmx(const DecodedWeights& w, size_t g,
                                    const QuantizedActivations& a, size_t t, size_t tokens,
                                    size_t blocks, int32_t offset, float* y, size_t y_stride,
                                    size_t rows, bool accumulate) {
  const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
  __m512 acc[kGroupRows];
  for (size_t j = 0; j < kGroupRows; ++j) {
    acc[j] = accumulate && j < tokens ? _mm512_maskz_loadu_ps(mask, y + j * y_stride)
                                      : _mm512_setzero_ps();
  }
  alignas(64) int32_t c[kGroupRows][kGroupRows];
  constexpr size_t kAStride = sizeof(a.q[0]);
  constexpr size_t kBStride = sizeof(w.q[0][0]);
  size_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_loadd(2, &a.q[t][b * kBlock], kAStride);
    _tile_loadd(4, w.q[g][b * 8], kBStride);
    _tile_dpbsud(0, 2, 4);
    _tile_loadd(3, &a.q[t][(b + 1) * kBlock], kAStride);
    _tile_loadd(5, w.q[g][(b + 1) * 8], kBStride);
    _tile_dpbsud(1, 3, 5);
    _tile_stored(0, c, sizeof(c[0]));
    AddBlock(c, w, g, a, t, b, offset, tokens, acc);
    _tile_stored(1, c, sizeof(c[0]));
    AddBlock(c, w, g, a, t, b + 1, offset, tokens, acc);
  }
  if (b < blocks) {
    _tile_zero(0);
    _tile_loadd(2, &a.q[t][b * kBlock], kAStride);
    _tile_loadd(4, w.q[g][b * 8], kBStride);
    _tile_dpbsud(0, 2, 4);
    _tile_stored(0, c, sizeof(c[0]));
    AddBlock(c, w, g, a, t, b, offset, tokens, acc);
  }
  for (size_t j = 0; j < tokens; ++j) _mm512_mask_storeu_ps(y + j * y_stride, mask, acc[j]);
}

#endif

std::atomic<int> g_fastest_allowed{static_cast<int>(Q8ActivationsPath::kAmx)};

Q8ActivationsPath Dispatched() {
  static const Q8ActivationsPath best = !CpuHasAvx512Vnni()        ? Q8ActivationsPath::kPortable
                                        : AmxInt8Available() ? Q8ActivationsPath::kAmx
                                                             : Q8ActivationsPath::kVnni;
  // The enum's order is fastest first.
  return static_cast<Q8ActivationsPath>(
      std::max(static_cast<int>(best), g_fastest_allowed.load(std::memory_order_relaxed)));
}

bool UseVnni() { return Dispatched() != Q8ActivationsPath::kPortable; }

void Quantize(const float* x, size_t n, int8_t* q, float* d, int32_t* sum) {
#if defined(__x86_64__)
  if (UseVnni()) return QuantizeVnni(x, n, q, d, sum);
#endif
  QuantizePortable(x, n, q, d, sum);
}

// Scratch of the calling thread (a session's pool threads each have theirs): allocated on the
// first call, ~300 KiB.
struct Scratch {
  DecodedWeights weights;
  QuantizedActivations activations;
};
Scratch& ThreadScratch() {
  thread_local std::unique_ptr<Scratch> scratch(new Scratch);
  return *scratch;
}

template <class Layout>
void MatMulQ8Activations(const void* w_bytes, const float* x, size_t x_stride, float* y,
                         size_t y_stride, size_t batch, size_t cols, size_t row_begin,
                         size_t row_end) {
  if (row_begin >= row_end || batch == 0 || cols == 0) return;
  const uint8_t* w = static_cast<const uint8_t*>(w_bytes);
  const size_t row_bytes = Layout::RowBytes(cols);
  Scratch& scratch = ThreadScratch();
  DecodedWeights& dw = scratch.weights;
  QuantizedActivations& qa = scratch.activations;
  const Q8ActivationsPath path = Dispatched();
  const bool vnni = path != Q8ActivationsPath::kPortable;
#if defined(__x86_64__)
  const bool amx = path == Q8ActivationsPath::kAmx;
  if (amx) ConfigureInt8Tiles();
#endif
  constexpr size_t kRowBlock = kGroupsPerBlock * kGroupRows;
  for (size_t t0 = 0; t0 < batch; t0 += kTokenBlock) {
    const size_t tokens = std::min(kTokenBlock, batch - t0);
    for (size_t k0 = 0; k0 < cols; k0 += kChunk) {
      const size_t n = std::min(kChunk, cols - k0);
      const size_t blocks = n / kBlock;
      const bool accumulate = k0 != 0;
      for (size_t t = 0; t < tokens; ++t) {
        Quantize(x + (t0 + t) * x_stride + k0, n, qa.q[t], qa.d[t], qa.sum[t]);
      }
      for (size_t r0 = row_begin; r0 < row_end; r0 += kRowBlock) {
        const size_t block_rows = std::min(kRowBlock, row_end - r0);
        DecodeRowBlock<Layout>(w, row_bytes, r0, block_rows, k0, n, &dw);
#if defined(__x86_64__)
        if (amx) {
          for (size_t g = 0; g * kGroupRows < block_rows; ++g) {
            const size_t rows = std::min(kGroupRows, block_rows - g * kGroupRows);
            float* yg = y + t0 * y_stride + r0 + g * kGroupRows;
            for (size_t t = 0; t < tokens; t += kGroupRows) {
              TileAmx(dw, g, qa, t, std::min(kGroupRows, tokens - t), blocks, Layout::kOffset,
                      yg + t * y_stride, y_stride, rows, accumulate);
            }
          }
          continue;
        }
#endif
        for (size_t g = 0; g * kGroupRows < block_rows; g += 2) {
          const size_t rows0 = std::min(kGroupRows, block_rows - g * kGroupRows);
          const size_t rows1 = (g + 1) * kGroupRows < block_rows
                                   ? std::min(kGroupRows, block_rows - (g + 1) * kGroupRows)
                                   : 0;
          float* yg = y + t0 * y_stride + r0 + g * kGroupRows;
#if defined(__x86_64__)
          if (vnni) {
            size_t t = 0;
            for (; t + kTileTokens <= tokens; t += kTileTokens) {
              TileVnni<kTileTokens>(dw, g, qa, t, blocks, Layout::kOffset, yg + t * y_stride,
                                    y_stride, rows0, rows1, accumulate);
            }
            if (t < tokens) {
              TileVnniTail(tokens - t, dw, g, qa, t, blocks, Layout::kOffset, yg + t * y_stride,
                           y_stride, rows0, rows1, accumulate);
            }
            continue;
          }
#endif
          (void)vnni;
          TilePortable(dw, g, qa, 0, tokens, blocks, Layout::kOffset, yg, y_stride, rows0,
                       accumulate);
          if (rows1 != 0) {
            TilePortable(dw, g + 1, qa, 0, tokens, blocks, Layout::kOffset, yg + kGroupRows,
                         y_stride, rows1, accumulate);
          }
        }
      }
    }
  }
#if defined(__x86_64__)
  if (amx) ReleaseTiles();
#endif
}

}  // namespace

void QuantizeActivationsQ8_0(const float* x, size_t n, int8_t* q, float* d, int32_t* sum) {
  Quantize(x, n, q, d, sum);
}

void MatMulQ8_0Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end) {
  (void)rows;
  MatMulQ8Activations<Q8_0Layout>(w, x, x_stride, y, y_stride, batch, cols, row_begin, row_end);
}

void MatMulQ4_0Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end) {
  (void)rows;
  MatMulQ8Activations<Q4_0Layout>(w, x, x_stride, y, y_stride, batch, cols, row_begin, row_end);
}

void MatMulQ8_0x16Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                                size_t y_stride, size_t batch, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  (void)rows;
  MatMulQ8Activations<Q8_0x16Layout>(w, x, x_stride, y, y_stride, batch, cols, row_begin,
                                     row_end);
}

void MatMulQ4_0x16Q8Activations(const void* w, const float* x, size_t x_stride, float* y,
                                size_t y_stride, size_t batch, size_t rows, size_t cols,
                                size_t row_begin, size_t row_end) {
  (void)rows;
  MatMulQ8Activations<Q4_0x16Layout>(w, x, x_stride, y, y_stride, batch, cols, row_begin,
                                     row_end);
}

Q8ActivationsPath DispatchedQ8ActivationsPath() { return Dispatched(); }

const char* Q8ActivationsPathName(Q8ActivationsPath path) {
  switch (path) {
    case Q8ActivationsPath::kAmx:
      return "AMX-INT8";
    case Q8ActivationsPath::kVnni:
      return "AVX-512 VNNI";
    case Q8ActivationsPath::kPortable:
      return "portable";
  }
  return "unknown";
}

void LimitQ8ActivationsPathForTest(Q8ActivationsPath fastest) {
  g_fastest_allowed.store(static_cast<int>(fastest), std::memory_order_relaxed);
}

}  // namespace ops
}  // namespace cortiq
