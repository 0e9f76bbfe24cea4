// Per-target sums of the activations over the blocks of a row, for the linear
// kernels of block formats with an offset or bias per (sub-)block: since
// w = d q + m, sum_c w_c x_c = d sum q x + m sum x, the kernel adds m times a
// precomputed block sum instead of m to every weight.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_OPS_BLOCK_SUMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_OPS_BLOCK_SUMS_INL_H_
#undef CORTIQ_OPS_BLOCK_SUMS_INL_H_
#else
#define CORTIQ_OPS_BLOCK_SUMS_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include <memory>

#include "hwy/highway.h"
#include "ops/vec_util-inl.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// factor * sum_{j < group} x[j] (group a multiple of Lanes(d) or < it: whole
// vectors of at most 16 lanes are added lane-wise, then the lanes pairwise), the
// same bits whatever the caller (so a row's result does not depend on the row
// range a thread computes).
HWY_INLINE float GroupSum(const float* x, size_t group, float factor) {
  const hn::CappedTag<float, 16> d;
  const size_t N = hn::Lanes(d);
  auto s = hn::LoadU(d, x);
  for (size_t j = N; j < group; j += N) s = hn::Add(s, hn::LoadU(d, x + j));
  return ReduceSum(d, s) * factor;
}

// Sums of the activations of one matrix-vector product, in the layout a
// kernel reads: kInlineFloats on the stack (cols / 16 of them cover rows of up
// to 65536 weights), more on the heap (allocated once per call).
class BlockSums {
 public:
  static constexpr size_t kInlineFloats = 4096;

  // data()[g] = factor * (sum of x[g * group, (g + 1) * group)), g < groups.
  void Compute(const float* x, size_t groups, size_t group, float factor) {
    float* out = Allocate(groups);
    for (size_t g = 0; g < groups; ++g) {
      out[g] = GroupSum(x + g * group, group, factor);
    }
  }

  // For 256-weight super-blocks with 8 sub-blocks of 32: data()[16 b + k] = 0
  // and data()[16 b + 8 + k] = factor * (sum of sub-block k of super-block b),
  // k < 8, b < super_blocks (the sums line up with lanes 8..15 of a 16-lane
  // vector whose lanes 0..7 hold the sub-block scales).
  void ComputeUpper32(const float* x, size_t super_blocks, float factor) {
    float* out = Allocate(super_blocks * 16);
    for (size_t b = 0; b < super_blocks; ++b) {
      for (size_t k = 0; k < 8; ++k) {
        out[16 * b + k] = 0.0f;
        out[16 * b + 8 + k] = GroupSum(x + 256 * b + 32 * k, 32, factor);
      }
    }
  }

  const float* data() const { return data_; }

 private:
  float* Allocate(size_t n) {
    if (n > kInlineFloats) {
      heap_.reset(new float[n]);
      data_ = heap_.get();
    } else {
      data_ = inline_;
    }
    return data_;
  }

  alignas(64) float inline_[kInlineFloats];
  std::unique_ptr<float[]> heap_;
  float* data_ = nullptr;
};

// Stands in for BlockSums in kernels of formats that need none.
struct NoBlockSums {
  void Compute(const float*, size_t, size_t, float) {}
  const float* data() const { return nullptr; }
};

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // CORTIQ_OPS_BLOCK_SUMS_INL_H_
