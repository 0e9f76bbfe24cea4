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

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_CPU_FEATURES_H_
