// XXH3-64 for the compiler's baseline target (SSE2 on x86-64; xxHash's own choice elsewhere).
#define CORTIQ_XXH3_FUNCTION Xxh3_64Baseline
#include "base/xxh3-inl.h"
