// Xoshiro256StarStar: the sampler's pseudo-random generator, specified bit for bit so that the
// same seed draws the same numbers on every machine and standard library (std::mt19937 is
// specified too, but std::uniform_real_distribution is not: libstdc++ and libc++ turn the same
// bits into different doubles).
#ifndef CORTIQ_RUNTIME_SAMPLING_XOSHIRO256_H_
#define CORTIQ_RUNTIME_SAMPLING_XOSHIRO256_H_

#include <array>
#include <cstdint>

namespace cortiq {
namespace sampling {

// SplitMix64 (Steele, Lea, Flood 2014; https://prng.di.unimi.it/splitmix64.c): advances
// `*state` by 0x9E3779B97F4A7C15 and returns the mixed value. Used only to expand a seed.
uint64_t SplitMix64(uint64_t* state);

// xoshiro256** 1.0 (Blackman and Vigna 2018, "Scrambled linear pseudorandom number generators";
// https://prng.di.unimi.it/xoshiro256starstar.c): 256 bits of state, period 2^256 - 1, 64-bit
// outputs. Seeded as the authors recommend: the four state words are the first four outputs of
// SplitMix64 started at `seed` (never all zero). Copyable: a copy continues the same sequence.
class Xoshiro256StarStar {
 public:
  explicit Xoshiro256StarStar(uint64_t seed);

  // The next 64-bit output.
  uint64_t Next();

  // A double uniform in [0, 1): the top 53 bits of Next() times 2^-53 (exact; every multiple
  // of 2^-53 in [0, 1) equally likely). Consumes one output.
  double NextUniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // The state words (tests, and saving a sampler's state).
  const std::array<uint64_t, 4>& state() const { return state_; }
  // Continues from `state` (one state() returned). False, leaving the generator as it was, for
  // the all-zero state, from which xoshiro would output only zeros.
  bool set_state(const std::array<uint64_t, 4>& state);

 private:
  std::array<uint64_t, 4> state_;
};

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_XOSHIRO256_H_
