// Per-target matrix-vector product over a row range (LinearRows<WT>), shared by
// the f32 and bf16 translation units linear_f32.cc / linear_bf16.cc, which each
// instantiate one WT. Public API: ops/linear.h.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_LINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_LINEAR_INL_H_
#undef CORTIQ_OPS_LINEAR_INL_H_
#else
#define CORTIQ_OPS_LINEAR_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/base.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/cpu_features.h"  // DecodePrefetchIntoL2, WholePassesAhead
#include "ops/dot-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y[r] = sum_c w[r * cols + c] * x[c] for r in [row_begin, row_end); WT is
// float, hwy::bfloat16_t or hwy::float16_t. Contract and precision as
// LinearF32 / LinearBF16 / LinearF16 in ops/linear.h. Rows go four at a time
// (x loaded once per four rows) through DotRows4 (for 16-bit weights with the
// prefetch wrapping to the next group of rows);
// the < 4 leftover rows use DotRows1, which computes a row exactly as
// DotRows4 does, so every y[r] is independent of row_begin / row_end (of how
// the rows are split between threads).
//
// Prefetch (measured, E4B shapes from DRAM, this machine, interleaved runs):
// DotRows4's wrap to the next group (kPrefetchNextGroup) raised bf16 from 20-26 to 26-28 GB/s
// with one thread (2560x2048: 22 -> 27) and from 42-55 to 52-61 GB/s with two;
// for f32 (rows of 8-40 KiB, so the wrap matters less) it measured the same or
// ~5% slower, so f32 keeps DotRows4. Distance: kPrefetchBytes (2 KiB); 1 KiB
// and 3 KiB measured 3-10% slower for bf16 (one and two threads).
//
// Where DecodePrefetchIntoL2() (Zen 4), 16-bit rows (bf16, f16) are
// prefetched into L2 whole groups of 4 rows, >= kIntoL2PrefetchMinBytes,
// ahead instead. Session 37, Zen 4 VM, 2 threads, from DRAM, interleaved: bf16
// 10240 x 2560 25.0-25.9 -> 31.2-44.4 GB/s; E2B bf16 decode 5.35-5.68 ->
// 6.89-9.14 tok/s (f16 shares the code path, unmeasured).
template <typename WT>
HWY_INLINE void LinearRows(const WT* HWY_RESTRICT w,
                           const float* HWY_RESTRICT x, float* HWY_RESTRICT y,
                           size_t rows, size_t cols, size_t row_begin,
                           size_t row_end) {
  HWY_DASSERT(row_begin <= row_end && row_end <= rows && cols >= 1);
  (void)rows;
  const hn::ScalableTag<float> df;
  size_t r = row_begin;
  if (sizeof(WT) == 2 && DecodePrefetchIntoL2()) {
    const size_t pass_ahead = WholePassesAhead(4 * cols * sizeof(WT), kIntoL2PrefetchMinBytes);
    for (; r + 4 <= row_end; r += 4) {
      DotRows4</*kPrefetchNextGroup=*/false, /*kIntoL2=*/true>(df, w + r * cols, cols, x, cols,
                                                               y + r, pass_ahead);
    }
  }
  for (; r + 4 <= row_end; r += 4) {
    DotRows4</*kPrefetchNextGroup=*/sizeof(WT) == 2>(df, w + r * cols, cols, x, cols,
                                                    y + r);
  }
  for (; r < row_end; ++r) {
    y[r] = DotRows1(df, w + r * cols, x, cols);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_LINEAR_INL_H_
