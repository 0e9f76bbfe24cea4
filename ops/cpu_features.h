// What the CPU offers the hand-dispatched kernels (those outside Highway's
// targets: ops/matmul_q8_activations.cc, ops/linear_vnni.cc).
#ifndef CORTIQ_OPS_CPU_FEATURES_H_
#define CORTIQ_OPS_CPU_FEATURES_H_

#include <stddef.h>

namespace cortiq {
namespace ops {

// True when the CPU (and OS: __builtin_cpu_supports checks that the AVX-512
// state is saved) has AVX-512 F, BW, VL, DQ and VNNI, the instruction sets the
// CORTIQ_VNNI_TARGET functions are compiled for; false off x86-64.
bool CpuHasAvx512Vnni();

// True on an AMD family 19h CPU with AVX-512 (Zen 4: "znver4"), which executes each 512-bit
// instruction on its 256-bit units in two halves (AMD's Software Optimization Guide for family
// 19h, "AVX-512"): the integer decode kernels, compute-bound there, lose to the f32 ones on
// short rows (ops/linear_vnni.h, DecodeWithFloat). False elsewhere and off x86-64.
bool CpuSplitsAvx512();

// Whether the decode kernels that stream weight rows from DRAM prefetch them
// into L2 whole passes ahead (ops/dot-inl.h PrefetchIntoL2At) rather than into
// L1 a few KiB ahead: true where CpuSplitsAvx512() (Zen 4, measured there:
// ops/linear-inl.h, ops/linear_vnni_internal.h, ops/linear_digits_k.cc,
// ops/linear_digits_q6_k.cc). CORTIQ_DECODE_PREFETCH=l1 or =l2 in the
// environment overrides the CPU's choice (to compare the two on another CPU);
// a test overrides both (SetDecodePrefetchIntoL2ForTest). Cached; cheap to
// call per matrix. Either choice gives the same bits.
bool DecodePrefetchIntoL2();

// Bytes at least ahead of its reads that a decode kernel prefetching into L2
// targets (DotRows4 kIntoL2 in ops/dot-inl.h, the VNNI kernels' passes of
// four rows). Measured on a Zen 4 VM (session 37, 2 threads, from DRAM): 12
// KiB and 24 KiB alike, 6 KiB and less slower.
inline constexpr size_t kIntoL2PrefetchMinBytes = 12288;

// The smallest multiple of pass_bytes that is >= min_bytes (and >= one pass):
// where a kernel that reads passes of pass_bytes consecutive bytes (several
// rows side by side) prefetches into L2, so that each row's prefetch lands at
// the same place of a later pass's row. pass_bytes > 0.
inline size_t WholePassesAhead(size_t pass_bytes, size_t min_bytes) {
  const size_t passes = (min_bytes + pass_bytes - 1) / pass_bytes;
  return (passes == 0 ? 1 : passes) * pass_bytes;
}

// Tests: 1 forces DecodePrefetchIntoL2() true, 0 false, -1 restores the CPU's
// choice. Every choice gives the same bits (a prefetch changes no result).
void SetDecodePrefetchIntoL2ForTest(int choice);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_CPU_FEATURES_H_
