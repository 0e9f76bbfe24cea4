// Per-target scaled row gather (GatherRow<T>); API: ops/gather.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_GATHER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_GATHER_INL_H_
#undef CORTIQ_OPS_GATHER_INL_H_
#else
#define CORTIQ_OPS_GATHER_INL_H_
#endif

#include <stddef.h>

#include "hwy/base.h"
#include "hwy/highway.h"
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

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_GATHER_INL_H_
