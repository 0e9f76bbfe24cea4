// Xxh3_64: the variant for this CPU, chosen once (base/xxh3.h).
#include "base/xxh3.h"

#include <cstddef>
#include <cstdint>

namespace cortiq {
namespace xxh3_internal {
uint64_t Xxh3_64Baseline(const void* data, size_t size);
#if defined(__x86_64__)
uint64_t Xxh3_64Avx2(const void* data, size_t size);
uint64_t Xxh3_64Avx512(const void* data, size_t size);
#endif
}  // namespace xxh3_internal

namespace {

struct Variant {
  uint64_t (*hash)(const void*, size_t);
  const char* name;
};

// __builtin_cpu_supports also checks that the OS saves the registers (XCR0), not only CPUID.
Variant Choose() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return {xxh3_internal::Xxh3_64Avx512, "avx512"};
  if (__builtin_cpu_supports("avx2")) return {xxh3_internal::Xxh3_64Avx2, "avx2"};
  return {xxh3_internal::Xxh3_64Baseline, "sse2"};
#else
  return {xxh3_internal::Xxh3_64Baseline, "portable"};
#endif
}

const Variant& Chosen() {
  static const Variant variant = Choose();
  return variant;
}

}  // namespace

uint64_t Xxh3_64(const void* data, size_t size) { return Chosen().hash(data, size); }

const char* Xxh3Variant() { return Chosen().name; }

}  // namespace cortiq
