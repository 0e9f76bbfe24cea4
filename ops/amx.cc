// ops/amx.h.
#include "ops/amx.h"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace cortiq {
namespace ops {
namespace {

#if defined(__x86_64__)
__attribute__((target("xsave"))) uint64_t ReadXcr0() { return _xgetbv(0); }

struct AmxFeatures {
  bool bf16 = false;
  bool int8 = false;
};

AmxFeatures Detect() {
  AmxFeatures none;
  unsigned eax, ebx, ecx, edx;
  // OSXSAVE: XGETBV is available.
  if (!__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx) || (ecx & (1u << 27)) == 0) return none;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return none;
  if ((edx & (1u << 24)) == 0) return none;  // AMX-TILE
  constexpr uint64_t kXtileMask = (uint64_t{1} << 17) | (uint64_t{1} << 18);
  if ((ReadXcr0() & kXtileMask) != kXtileMask) return none;
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return none;
#else
  return none;
#endif
  AmxFeatures features;
  features.bf16 = (edx & (1u << 22)) != 0;
  features.int8 = (edx & (1u << 25)) != 0;
  return features;
}
#else
struct AmxFeatures {
  bool bf16 = false;
  bool int8 = false;
};
AmxFeatures Detect() { return {}; }
#endif

const AmxFeatures& Features() {
  static const AmxFeatures features = Detect();
  return features;
}

}  // namespace

bool AmxBf16Available() { return Features().bf16; }
bool AmxInt8Available() { return Features().int8; }

}  // namespace ops
}  // namespace cortiq
