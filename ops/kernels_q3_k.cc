// LinearQ3_K, MatMulQ3_K and GatherRowQ3_K (ops/linear.h, ops/matmul.h,
// ops/gather.h): the kernels of Q3_K weights, compiled for every Highway
// target, and their dispatch. One translation unit per weight format keeps
// compile time per file bounded.

#include <stddef.h>

#include "ops/gather.h"
#include "ops/linear.h"
#include "ops/matmul.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/kernels_q3_k.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/block_kernels-inl.h"
#include "ops/kernel_dispatch.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {

CORTIQ_BLOCK_FORMAT_KERNELS(Q3_K, Q3_KFormat)

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {

CORTIQ_EXPORT_KERNELS(Q3_K, void)

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
