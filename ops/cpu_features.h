// What the CPU offers the hand-dispatched kernels (those outside Highway's
// targets: ops/matmul_q8_activations.cc, ops/linear_vnni.cc).
#ifndef CORTIQ_OPS_CPU_FEATURES_H_
#define CORTIQ_OPS_CPU_FEATURES_H_

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
// ops/linear-inl.h, ops/linear_vnni_internal.h), unless a test has set it
// (SetDecodePrefetchIntoL2ForTest). Cached; cheap to call per matrix.
bool DecodePrefetchIntoL2();

// Tests: 1 forces DecodePrefetchIntoL2() true, 0 false, -1 restores the CPU's
// choice. Every choice gives the same bits (a prefetch changes no result).
void SetDecodePrefetchIntoL2ForTest(int choice);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_CPU_FEATURES_H_
