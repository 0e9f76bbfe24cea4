// CpuHasAvx512Vnni, CpuSplitsAvx512, DecodePrefetchIntoL2 (ops/cpu_features.h).
#include "ops/cpu_features.h"

#include <stdlib.h>
#include <string.h>

#include <atomic>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

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

bool CpuSplitsAvx512() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
  char vendor[13] = {};
  memcpy(vendor, &ebx, 4);
  memcpy(vendor + 4, &edx, 4);
  memcpy(vendor + 8, &ecx, 4);
  if (strcmp(vendor, "AuthenticAMD") != 0) return false;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  // Family: the base field (bits 8-11), plus the extended field (bits 20-27) when the base is
  // 0xF (Intel SDM and AMD APM, CPUID Fn0000_0001_EAX).
  unsigned family = (eax >> 8) & 0xF;
  if (family == 0xF) family += (eax >> 20) & 0xFF;
  __builtin_cpu_init();
  return family == 0x19 && __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

namespace {
std::atomic<int> g_prefetch_into_l2_for_test{-1};

// CORTIQ_DECODE_PREFETCH=l1|l2 in the environment, else the CPU's choice.
bool DecodePrefetchIntoL2ForCpu() {
  const char* choice = getenv("CORTIQ_DECODE_PREFETCH");
  if (choice != nullptr && strcmp(choice, "l1") == 0) return false;
  if (choice != nullptr && strcmp(choice, "l2") == 0) return true;
  return CpuSplitsAvx512();
}
}  // namespace

bool DecodePrefetchIntoL2() {
  static const bool for_cpu = DecodePrefetchIntoL2ForCpu();
  const int forced = g_prefetch_into_l2_for_test.load(std::memory_order_relaxed);
  return forced < 0 ? for_cpu : forced != 0;
}

void SetDecodePrefetchIntoL2ForTest(int choice) {
  g_prefetch_into_l2_for_test.store(choice, std::memory_order_relaxed);
}

}  // namespace ops
}  // namespace cortiq
