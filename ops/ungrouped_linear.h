// The decode product of a regrouped K-quant format (Q4_Kx16, Q5_Kx16:
// ops/quantize_q4_kx16.h, ops/quantize_q5_kx16.h) where the CPU has no integer
// digit kernel for it (DecodeLinearPath::kFloat, ops/linear_vnni.h): its rows
// turned back into the GGUF super-blocks they were made from, a few at a time,
// and multiplied by that format's Linear, with its bits.
#ifndef CORTIQ_OPS_UNGROUPED_LINEAR_H_
#define CORTIQ_OPS_UNGROUPED_LINEAR_H_

#include <stddef.h>

namespace cortiq {
namespace ops {

// Turns the regrouped blocks of n weights at `in` back into GGUF super-blocks
// at `out` (Q4_Kx16ToQ4_K, Q5_Kx16ToQ5_K).
using UngroupFn = void (*)(const void* in, size_t n, void* out);
// A Linear kernel of ops/linear.h.
using PlainLinearFn = void (*)(const void* w, const float* x, float* y, size_t rows, size_t cols,
                               size_t row_begin, size_t row_end);

// Rows turned back per call of `linear` (which sets up per call: digits or
// sums of x), so that many rows share that.
inline constexpr size_t kUngroupRows = 32;

// y[r] for r in [row_begin, row_end) of the regrouped matrix w (rows of
// regrouped_row_bytes, cols a multiple of 512): kUngroupRows rows at a time
// ungrouped into a per-thread buffer (kUngroupRows * plain_row_bytes bytes;
// aborts if it cannot be allocated) and multiplied by `linear`. Each row's
// result is `linear`'s on the GGUF row, bit for bit.
void LinearByUngrouping(UngroupFn ungroup, size_t regrouped_row_bytes, size_t plain_row_bytes,
                        PlainLinearFn linear, const void* w, const float* x, float* y,
                        size_t rows, size_t cols, size_t row_begin, size_t row_end);

// `linear` (a regrouped format's Linear) for `batch` tokens (x [batch, cols]
// with stride x_stride, y [batch, rows] with stride y_stride) on blocks of 16
// rows for every token: LinearRows (ops/linear_rows.h) where there is no
// batched kernel, each output `linear`'s bits on its row.
void LinearRowsByRowBlocks(PlainLinearFn linear, const void* w, const float* x, size_t x_stride,
                           float* y, size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_UNGROUPED_LINEAR_H_
