// Macros that define a weight format's Linear, MatMul and GatherRow kernels
// (ops/linear.h, ops/matmul.h, ops/gather.h; for the regrouped x16 formats
// also LinearRows, ops/linear_rows.h) in its translation unit
// ops/kernels_<format>.cc: the per-target entry points and their Highway
// dynamic dispatch, so that each format's file holds only its name and tag.

#ifndef CORTIQ_OPS_KERNEL_DISPATCH_H_
#define CORTIQ_OPS_KERNEL_DISPATCH_H_

// Inside `namespace HWY_NAMESPACE` (re-included per target): LinearNAME,
// MatMulNAME and GatherRowNAME for the block format tag FORMAT
// (ops/block_kernels-inl.h).
#define CORTIQ_BLOCK_FORMAT_KERNELS(NAME, FORMAT)                            \
  void Linear##NAME(const void* w, const float* x, float* y, size_t rows,    \
                    size_t cols, size_t row_begin, size_t row_end) {         \
    LinearBlockRows(FORMAT(), w, x, y, rows, cols, row_begin, row_end);      \
  }                                                                          \
  void MatMul##NAME(const void* w, const float* x, size_t x_stride, float* y, \
                    size_t y_stride, size_t batch, size_t rows, size_t cols, \
                    size_t row_begin, size_t row_end) {                      \
    MatMulBlockRows(FORMAT(), w, x, x_stride, y, y_stride, batch, rows,      \
                    cols, row_begin, row_end);                               \
  }                                                                          \
  void GatherRow##NAME(const void* table, size_t cols, size_t row,           \
                       size_t col_begin, size_t count, float scale,          \
                       float* y) {                                           \
    GatherRowQuant(FORMAT(), table, cols, row, col_begin, count, scale, y);  \
  }

// In the file's `#if HWY_ONCE` part, inside namespace cortiq::ops: exports
// MatMulNAME and GatherRowNAME and defines the public ones (weights of type
// const WT*) that dispatch to the best target: the part CORTIQ_EXPORT_KERNELS
// and CORTIQ_EXPORT_X16_KERNELS share.
#define CORTIQ_EXPORT_MATMUL_GATHER(NAME, WT)                                \
  HWY_EXPORT(MatMul##NAME);                                                  \
  HWY_EXPORT(GatherRow##NAME);                                               \
  void MatMul##NAME(const WT* w, const float* x, size_t x_stride, float* y,  \
                    size_t y_stride, size_t batch, size_t rows, size_t cols, \
                    size_t row_begin, size_t row_end) {                      \
    HWY_DYNAMIC_DISPATCH(MatMul##NAME)(w, x, x_stride, y, y_stride, batch,   \
                                       rows, cols, row_begin, row_end);      \
  }                                                                          \
  void GatherRow##NAME(const WT* table, size_t cols, size_t row,             \
                       size_t col_begin, size_t count, float scale,          \
                       float* y) {                                           \
    HWY_DYNAMIC_DISPATCH(GatherRow##NAME)(table, cols, row, col_begin,       \
                                          count, scale, y);                  \
  }

// In the file's `#if HWY_ONCE` part, inside namespace cortiq::ops: exports the
// three per-target functions and defines the public ones (weights of type
// const WT*) that dispatch to the best target.
#define CORTIQ_EXPORT_KERNELS(NAME, WT)                                      \
  HWY_EXPORT(Linear##NAME);                                                  \
  void Linear##NAME(const WT* w, const float* x, float* y, size_t rows,      \
                    size_t cols, size_t row_begin, size_t row_end) {         \
    HWY_DYNAMIC_DISPATCH(Linear##NAME)(w, x, y, rows, cols, row_begin,       \
                                       row_end);                             \
  }                                                                          \
  CORTIQ_EXPORT_MATMUL_GATHER(NAME, WT)

// As CORTIQ_EXPORT_KERNELS (weights const void*) for the regrouped formats
// (Q4_0x16, Q8_0x16), plus LinearRowsNAME: LinearNAME and LinearRowsNAME take
// the exact integer path of ops/linear_vnni.h (LinearNAMEDigits,
// LinearRowsNAMEDigits) where the CPU has one for the format, both the same, so
// LinearRows keeps Linear's bits; MatMul, the prompt's product, stays f32.
// The including file includes ops/linear_vnni.h and ops/linear_rows.h.
#define CORTIQ_EXPORT_X16_KERNELS(NAME)                                        \
  HWY_EXPORT(Linear##NAME);                                                    \
  HWY_EXPORT(LinearRows##NAME);                                                \
  void Linear##NAME(const void* w, const float* x, float* y, size_t rows,      \
                    size_t cols, size_t row_begin, size_t row_end) {           \
    if (Linear##NAME##Digits(w, x, y, rows, cols, row_begin, row_end)) {      \
      return;                                                                  \
    }                                                                          \
    HWY_DYNAMIC_DISPATCH(Linear##NAME)(w, x, y, rows, cols, row_begin,         \
                                       row_end);                               \
  }                                                                            \
  CORTIQ_EXPORT_MATMUL_GATHER(NAME, void)                                      \
  void LinearRows##NAME(const void* w, const float* x, size_t x_stride,        \
                        float* y, size_t y_stride, size_t batch, size_t rows,  \
                        size_t cols, size_t row_begin, size_t row_end) {       \
    if (LinearRows##NAME##Digits(w, x, x_stride, y, y_stride, batch, rows,     \
                                 cols, row_begin, row_end)) {                  \
      return;                                                                  \
    }                                                                          \
    HWY_DYNAMIC_DISPATCH(LinearRows##NAME)(w, x, x_stride, y, y_stride, batch, \
                                           rows, cols, row_begin, row_end);    \
  }

#endif  // CORTIQ_OPS_KERNEL_DISPATCH_H_
