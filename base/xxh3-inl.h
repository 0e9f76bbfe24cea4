// The body of one XXH3-64 variant: included by xxh3_sse2.cc, xxh3_avx2.cc and xxh3_avx512.cc,
// each compiled with its own -m flags (base/CMakeLists.txt) so that xxhash.h selects its vector
// code (XXH_VECTOR) for that width, and each defining CORTIQ_XXH3_FUNCTION as its function's
// name. XXH_INLINE_ALL makes every xxHash symbol static to the translation unit, so the three
// copies never clash.
#ifndef CORTIQ_XXH3_FUNCTION
#error "define CORTIQ_XXH3_FUNCTION before including base/xxh3-inl.h"
#endif

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cortiq {
namespace xxh3_internal {

uint64_t CORTIQ_XXH3_FUNCTION(const void* data, size_t size) {
  return XXH3_64bits(data, size);
}

}  // namespace xxh3_internal
}  // namespace cortiq
