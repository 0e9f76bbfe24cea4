// XXH3-64: xxHash's 64-bit XXH3 hash with seed 0 (Yann Collet; the algorithm is defined by
// doc/xxhash_spec.md of github.com/Cyan4973/xxHash), from Debian's libxxhash-dev used header-only
// (XXH_INLINE_ALL) and compiled here once per x86 vector width — SSE2, AVX2, AVX-512 — the widest
// the CPU runs chosen at the first call. The Debian shared library is built for SSE2 only, which
// hashes 12 GB/s on one core where AVX2 does 29 (bench/hash_benchmark.cc). Every variant returns
// the same value for the same bytes (the specification fixes it), so hashes written on one
// machine verify on any other.
#ifndef CORTIQ_BASE_XXH3_H_
#define CORTIQ_BASE_XXH3_H_

#include <cstddef>
#include <cstdint>

namespace cortiq {

// XXH3_64bits of the `size` bytes at `data` (any alignment; data may be null when size is 0).
uint64_t Xxh3_64(const void* data, size_t size);

// The variant Xxh3_64 runs on this CPU: "avx512", "avx2", "sse2" (x86-64), or "portable" (other
// architectures: xxHash's own choice for the compiler's target).
const char* Xxh3Variant();

}  // namespace cortiq

#endif  // CORTIQ_BASE_XXH3_H_
