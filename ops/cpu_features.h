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

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_CPU_FEATURES_H_
