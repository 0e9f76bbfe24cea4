// SplitMix64 and xoshiro256** (see xoshiro256.h for the sources).
#include "runtime/sampling/xoshiro256.h"

namespace cortiq {
namespace sampling {
namespace {

inline uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

Xoshiro256StarStar::Xoshiro256StarStar(uint64_t seed) {
  // SplitMix64 is a bijection of its counter, so four consecutive outputs are never all zero
  // (the one state xoshiro must avoid).
  for (uint64_t& word : state_) word = SplitMix64(&seed);
}

bool Xoshiro256StarStar::set_state(const std::array<uint64_t, 4>& state) {
  if ((state[0] | state[1] | state[2] | state[3]) == 0) return false;
  state_ = state;
  return true;
}

uint64_t Xoshiro256StarStar::Next() {
  uint64_t* s = state_.data();
  const uint64_t result = RotateLeft(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = RotateLeft(s[3], 45);
  return result;
}

}  // namespace sampling
}  // namespace cortiq
