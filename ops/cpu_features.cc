// CpuHasAvx512Vnni (ops/cpu_features.h).
#include "ops/cpu_features.h"

namespace cortiq {
namespace ops {

bool CpuHasAvx512Vnni() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

}  // namespace ops
}  // namespace cortiq
