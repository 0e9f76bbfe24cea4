// Per-target scaled row gather (GatherRow<T> for f32 / bf16 / f16 tables,
// GatherRowQuant<Format> for the block formats); API: ops/gather.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_GATHER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_GATHER_INL_H_
#undef CORTIQ_OPS_GATHER_INL_H_
#else
#define CORTIQ_OPS_GATHER_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/base.h"
#include "hwy/highway.h"
#include "ops/quant_block-inl.h"
#include "ops/quantize.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y[j] = scale * f32(table[row * cols + col_begin + j]), j < count; T is float
// or bfloat16_t.
template <typename T>
HWY_INLINE void GatherRow(const T* HWY_RESTRICT table, size_t cols, size_t row,
                          size_t col_begin, size_t count, float scale,
                          float* HWY_RESTRICT y) {
  HWY_DASSERT(col_begin + count <= cols);
  const hn::ScalableTag<float> df;
  const auto vs = hn::Set(df, scale);
  TransformUnary(df, table + row * cols + col_begin, y, count,
                 [vs](auto d, auto v) HWY_ATTR {
                   (void)d;
                   return hn::Mul(v, vs);
                 });
}

inline void GatherRowF32(const float* table, size_t cols, size_t row,
                         size_t col_begin, size_t count, float scale,
                         float* y) {
  GatherRow(table, cols, row, col_begin, count, scale, y);
}
inline void GatherRowBF16(const hwy::bfloat16_t* table, size_t cols, size_t row,
                          size_t col_begin, size_t count, float scale,
                          float* y) {
  GatherRow(table, cols, row, col_begin, count, scale, y);
}

// y[j] = scale * w(row, col_begin + j), j < count, for a table of Format
// blocks (cols a multiple of Format::kBlockWeights). Whole blocks are decoded
// straight into y; a block only partly inside [col_begin, col_begin + count)
// is decoded into a stack buffer and the needed part copied, so nothing
// outside y[0, count) is written. Same rounding either way
// (DecodeBlockScaled: the f32 weight times scale, rounded once).
template <class Format>
HWY_INLINE void GatherRowQuant(Format tag, const void* HWY_RESTRICT table,
                               size_t cols, size_t row, size_t col_begin,
                               size_t count, float scale,
                               float* HWY_RESTRICT y) {
  constexpr size_t kB = Format::kBlockWeights;
  HWY_DASSERT(cols % kB == 0 && col_begin + count <= cols);
  const QuantDF df;
  const uint8_t* row_blocks = static_cast<const uint8_t*>(table) +
                              row * (cols / kB) * Format::kBlockBytes;
  const size_t end = col_begin + count;
  for (size_t c = col_begin; c < end;) {
    const size_t offset = c % kB;
    const size_t take = HWY_MIN(kB - offset, end - c);
    const uint8_t* block = row_blocks + c / kB * Format::kBlockBytes;
    if (take == kB) {
      DecodeBlockScaled(tag, df, block, scale, y);
    } else {
      float buf[kB];
      DecodeBlockScaled(tag, df, block, scale, buf);
      memcpy(y, buf + offset, take * sizeof(float));
    }
    c += take;
    y += take;
  }
}

inline void GatherRowQ8_0(const void* table, size_t cols, size_t row,
                          size_t col_begin, size_t count, float scale,
                          float* y) {
  GatherRowQuant(Q8_0Format(), table, cols, row, col_begin, count, scale, y);
}
inline void GatherRowQ4_0(const void* table, size_t cols, size_t row,
                          size_t col_begin, size_t count, float scale,
                          float* y) {
  GatherRowQuant(Q4_0Format(), table, cols, row, col_begin, count, scale, y);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_GATHER_INL_H_
