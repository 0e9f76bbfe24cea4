// GatherRowF32 / GatherRowBF16 / GatherRowQ8_0 / GatherRowQ4_0 (ops/gather.h):
// per-target compilation of ops/gather-inl.h and the dispatch.

#include "ops/gather.h"

#include <stddef.h>

#include "hwy/base.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/gather.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/gather-inl.h"

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(GatherRowF32);
HWY_EXPORT(GatherRowBF16);
HWY_EXPORT(GatherRowQ8_0);
HWY_EXPORT(GatherRowQ4_0);

void GatherRowF32(const float* table, size_t cols, size_t row, size_t col_begin,
                  size_t count, float scale, float* y) {
  HWY_DYNAMIC_DISPATCH(GatherRowF32)
  (table, cols, row, col_begin, count, scale, y);
}
void GatherRowBF16(const hwy::bfloat16_t* table, size_t cols, size_t row,
                   size_t col_begin, size_t count, float scale, float* y) {
  HWY_DYNAMIC_DISPATCH(GatherRowBF16)
  (table, cols, row, col_begin, count, scale, y);
}

void GatherRowQ8_0(const void* table, size_t cols, size_t row, size_t col_begin,
                   size_t count, float scale, float* y) {
  HWY_DYNAMIC_DISPATCH(GatherRowQ8_0)
  (table, cols, row, col_begin, count, scale, y);
}
void GatherRowQ4_0(const void* table, size_t cols, size_t row, size_t col_begin,
                   size_t count, float scale, float* y) {
  HWY_DYNAMIC_DISPATCH(GatherRowQ4_0)
  (table, cols, row, col_begin, count, scale, y);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
