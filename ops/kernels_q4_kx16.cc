// LinearQ4_Kx16, LinearRowsQ4_Kx16, MatMulQ4_Kx16 and GatherRowQ4_Kx16
// (ops/linear.h, ops/linear_rows.h, ops/matmul.h, ops/gather.h): the kernels
// of Q4_Kx16 weights (ops/quantize_q4_kx16.h). MatMul and GatherRow are
// compiled for every Highway target on the decoded Q4_K super-blocks; Linear
// and LinearRows take the VNNI digits (ops/linear_vnni.h) and elsewhere the
// Q4_K kernels on the rows turned back into Q4_K.

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <algorithm>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/linear_rows.h"
#include "ops/linear_vnni.h"
#include "ops/matmul.h"
#include "ops/quantize_q4_kx16.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q4_kx16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/q4_kx16_block-inl.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

void MatMulQ4_Kx16(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                   size_t batch, size_t rows, size_t cols, size_t row_begin, size_t row_end) {
  MatMulBlockRows(Q4_Kx16Format(), w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
                  row_end);
}
void GatherRowQ4_Kx16(const void* table, size_t cols, size_t row, size_t col_begin,
                      size_t count, float scale, float* y) {
  GatherRowQuant(Q4_Kx16Format(), table, cols, row, col_begin, count, scale, y);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

CORTIQ_EXPORT_MATMUL_GATHER(Q4_Kx16, void)

namespace {

// Rows turned back into Q4_K per LinearQ4_K call where there is no VNNI: the
// Q4_K kernels set up per call (digits or sums of x), so more rows share that.
constexpr size_t kUngroupRows = 32;

// A per-thread buffer of at least `bytes` (reused; not the digit kernels'
// scratch, which LinearQ4_K takes while this one holds its rows).
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

void LinearQ4_Kx16(const void* w, const float* x, float* y, size_t rows, size_t cols,
                   size_t row_begin, size_t row_end) {
  HWY_DASSERT(cols % kQ4_Kx16BlockWeights == 0);
  HWY_DASSERT(row_begin <= row_end && row_end <= rows);
  if (LinearQ4_Kx16Digits(w, x, y, rows, cols, row_begin, row_end)) return;
  const uint8_t* base = static_cast<const uint8_t*>(w);
  const size_t row_bytes = Q4_Kx16RowBytes(cols);
  uint8_t* q4_k = UngroupScratch(kUngroupRows * Q4_KRowBytes(cols));
  for (size_t r0 = row_begin; r0 < row_end; r0 += kUngroupRows) {
    const size_t n = std::min(row_end, r0 + kUngroupRows) - r0;
    Q4_Kx16ToQ4_K(base + r0 * row_bytes, n * cols, q4_k);
    LinearQ4_K(q4_k, x, y + r0, n, cols, 0, n);
  }
}

void LinearRowsQ4_Kx16(const void* w, const float* x, size_t x_stride, float* y,
                       size_t y_stride, size_t batch, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end) {
  if (LinearRowsQ4_Kx16Digits(w, x, x_stride, y, y_stride, batch, rows, cols, row_begin,
                              row_end)) {
    return;
  }
  constexpr size_t kRowsPerBlock = 16;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kRowsPerBlock) {
    const size_t r1 = std::min(row_end, r0 + kRowsPerBlock);
    for (size_t t = 0; t < batch; ++t) {
      LinearQ4_Kx16(w, x + t * x_stride, y + t * y_stride, rows, cols, r0, r1);
    }
  }
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
