// XXH3-64 with AVX2 (compiled with -mavx2; only called where the CPU has it, base/xxh3.cc).
#define CORTIQ_XXH3_FUNCTION Xxh3_64Avx2
#include "base/xxh3-inl.h"
