// XXH3-64 with AVX-512F (compiled with -mavx512f; only called where the CPU has it, base/xxh3.cc).
#define CORTIQ_XXH3_FUNCTION Xxh3_64Avx512
#include "base/xxh3-inl.h"
