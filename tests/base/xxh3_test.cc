// Xxh3_64 (base/xxh3.h): every variant this CPU runs against Debian's separately built
// libxxhash.so (an independent compilation of the reference implementation), over every length
// class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, the long-input loop with a partial last
// stripe and block), at unaligned starts.
#include "base/xxh3.h"

#include <xxhash.h>  // the shared library's XXH3_64bits (not inlined here)

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cortiq {
namespace xxh3_internal {
uint64_t Xxh3_64Baseline(const void* data, size_t size);
#if defined(__x86_64__)
uint64_t Xxh3_64Avx2(const void* data, size_t size);
uint64_t Xxh3_64Avx512(const void* data, size_t size);
#endif
}  // namespace xxh3_internal
namespace {

using Hash = uint64_t (*)(const void*, size_t);

std::vector<std::pair<std::string, Hash>> Variants() {
  std::vector<std::pair<std::string, Hash>> variants = {
      {"dispatched", Xxh3_64}, {"baseline", xxh3_internal::Xxh3_64Baseline}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) variants.push_back({"avx2", xxh3_internal::Xxh3_64Avx2});
  if (__builtin_cpu_supports("avx512f")) {
    variants.push_back({"avx512", xxh3_internal::Xxh3_64Avx512});
  }
#endif
  return variants;
}

std::vector<uint8_t> Bytes(size_t n) {
  std::vector<uint8_t> bytes(n);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint8_t& b : bytes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<uint8_t>(x >> 24);
  }
  return bytes;
}

TEST(Xxh3Test, EmptyInputIsTheSpecificationsValue) {
  // XXH3_64bits of no bytes with seed 0 (xxhash.h's documentation and sanity tests).
  for (const auto& [name, hash] : Variants()) {
    EXPECT_EQ(hash(nullptr, 0), 0x2D06800538D394C2ull) << name;
  }
}

TEST(Xxh3Test, EveryVariantMatchesTheSharedLibrary) {
  const std::vector<uint8_t> data = Bytes((1 << 20) + 64);
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {1023, 1024, 1025, 4096, 65535, 100000, 1 << 20}) sizes.push_back(n);
  for (const auto& [name, hash] : Variants()) {
    for (size_t offset : {0, 1, 7, 33}) {
      for (size_t n : sizes) {
        ASSERT_EQ(hash(data.data() + offset, n), XXH3_64bits(data.data() + offset, n))
            << name << ": " << n << " bytes at offset " << offset;
      }
    }
  }
}

TEST(Xxh3Test, VariantIsNamed) {
  const std::string variant = Xxh3Variant();
  EXPECT_TRUE(variant == "avx512" || variant == "avx2" || variant == "sse2" ||
              variant == "portable")
      << variant;
}

}  // namespace
}  // namespace cortiq
