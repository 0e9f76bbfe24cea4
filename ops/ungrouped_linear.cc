// LinearByUngrouping and LinearRowsByRowBlocks (see ungrouped_linear.h).
#include "ops/ungrouped_linear.h"

#include <stdint.h>
#include <stdlib.h>

#include <algorithm>

#include "hwy/base.h"

namespace cortiq {
namespace ops {
namespace {

// A per-thread buffer of at least `bytes` (reused; not the digit kernels'
// scratch, which `linear` may take while this one holds its rows).
uint8_t* UngroupScratch(size_t bytes) {
  struct Buffer {
    uint8_t* data = nullptr;
    size_t size = 0;
    ~Buffer() { free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    free(buffer.data);
    const size_t size = (bytes + 63) / 64 * 64;
    buffer.data = static_cast<uint8_t*>(aligned_alloc(64, size));
    HWY_ASSERT(buffer.data != nullptr);
    buffer.size = size;
  }
  return buffer.data;
}

}  // namespace

void LinearByUngrouping(UngroupFn ungroup, size_t regrouped_row_bytes, size_t plain_row_bytes,
                        PlainLinearFn linear, const void* w, const float* x, float* y,
                        size_t rows, size_t cols, size_t row_begin, size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  (void)rows;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  uint8_t* plain = UngroupScratch(kUngroupRows * plain_row_bytes);
  for (size_t r0 = row_begin; r0 < row_end; r0 += kUngroupRows) {
    const size_t n = std::min(row_end, r0 + kUngroupRows) - r0;
    // Rows are whole groups, so n rows ungroup as one run of n * cols weights.
    ungroup(base + r0 * regrouped_row_bytes, n * cols, plain);
    linear(plain, x, y + r0, n, cols, 0, n);
  }
}

void LinearRowsByRowBlocks(PlainLinearFn linear, const void* w, const float* x, size_t x_stride,
                           float* y, size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end) {
  constexpr size_t kRowsPerBlock = 16;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowsPerBlock) {
    const size_t r1 = std::min(row_end, r0 + kRowsPerBlock);
    for (size_t t = 0; t < batch; ++t) {
      linear(w, x + t * x_stride, y + t * y_stride, rows, cols, r0, r1);
    }
  }
}

}  // namespace ops
}  // namespace cortiq
