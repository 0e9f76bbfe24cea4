// The hash functions of the tokenizer section's tables (tokenizer_section.h). They are part of
// the file format: changing one changes where every key sits, so it takes a new section version.
#ifndef CORTIQ_RUNTIME_TEXT_HASH_H_
#define CORTIQ_RUNTIME_TEXT_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace cortiq::text {

// 64-bit finalizer of MurmurHash3 (fmix64): a bijection that spreads every input bit.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Hash of a vocabulary piece: FNV-1a 64 over the bytes, then Mix64 (FNV alone leaves the low
// bits, which pick the slot, weak for short keys).
inline uint64_t HashPiece(std::string_view piece) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : piece) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return Mix64(h);
}

// Hash of a merge's pair of ids.
inline uint64_t HashPair(uint32_t left, uint32_t right) {
  return Mix64((static_cast<uint64_t>(left) << 32) | right);
}

// Key of a character bigram (a, b) in the bigram hash: never 0 (the empty slot).
inline uint64_t BigramKey(char32_t a, char32_t b) {
  return ((static_cast<uint64_t>(a) << 21) | b) + 1;
}

// Checksum of the section body: four interleaved lanes of a multiply-rotate hash over 8-byte
// little-endian words (so it runs at memory speed, ~1 ms per 10 MB), the tail zero-padded,
// combined with the length. Not cryptographic: it catches truncation and corruption.
inline uint64_t ChecksumBytes(const uint8_t* data, size_t size) {
  constexpr uint64_t kPrime = 0x9E3779B97F4A7C15ull;
  uint64_t lane[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                      0x082EFA98EC4E6C89ull};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, data + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kPrime;
      lane[k] = (lane[k] << 31) | (lane[k] >> 33);
    }
  }
  uint8_t tail[32] = {0};
  std::memcpy(tail, data + i, size - i);
  for (int k = 0; k < 4; ++k) {
    uint64_t w;
    std::memcpy(&w, tail + 8 * k, 8);
    lane[k] = (lane[k] ^ w) * kPrime;
  }
  return Mix64(lane[0] ^ Mix64(lane[1] ^ Mix64(lane[2] ^ Mix64(lane[3] ^ size))));
}

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_HASH_H_
