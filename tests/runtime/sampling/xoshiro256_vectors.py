#!/usr/bin/env python3
"""Prints the expected values of tests/runtime/sampling/xoshiro256_test.cc.

An independent implementation (Python integers) of SplitMix64 and xoshiro256** as published by
Blackman and Vigna (https://prng.di.unimi.it/splitmix64.c, https://prng.di.unimi.it/xoshiro256starstar.c),
seeded as the authors recommend (the four state words are the first four SplitMix64 outputs), and
of the uniform double in [0, 1) from the top 53 bits ((x >> 11) * 2^-53, as in the authors' note
"Generating uniform doubles in the unit interval").

    python3 tests/runtime/sampling/xoshiro256_vectors.py
"""

MASK = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro256StarStar:
    def __init__(self, seed):
        self.s = []
        state = seed & MASK
        for _ in range(4):
            state, z = splitmix64(state)
            self.s.append(z)

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result


def main():
    state = 0
    outs = []
    for _ in range(3):
        state, z = splitmix64(state)
        outs.append(z)
    print("splitmix64(0):", ", ".join("0x%016X" % z for z in outs))
    for seed in (0, 42, 0xFFFFFFFFFFFFFFFF):
        g = Xoshiro256StarStar(seed)
        print("seed %d state:" % seed, ", ".join("0x%016X" % w for w in g.s))
        print("seed %d next x5:" % seed, ", ".join("0x%016X" % g.next() for _ in range(5)))
    g = Xoshiro256StarStar(42)
    for _ in range(999):
        g.next()
    print("seed 42 output 1000: 0x%016X" % g.next())
    g = Xoshiro256StarStar(7)
    print("seed 7 uniform x3:", ", ".join(repr((g.next() >> 11) * 2.0**-53) for _ in range(3)))


if __name__ == "__main__":
    main()
