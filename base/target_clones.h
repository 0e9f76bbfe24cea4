// CORTIQ_TARGET_CLONES: put before a function whose plain C++ loops the compiler vectorizes, to
// have it compiled once per x86-64 vector width — AVX-512 (x86-64-v4), AVX2 (x86-64-v3) and the
// SSE2 baseline — and the widest the CPU runs picked when the program loads (GCC/Clang function
// multiversioning, resolved through an ifunc). For loops that are not worth a Highway kernel in
// ops/ (the sampler's passes over the vocabulary).
//
// The clones compute the same values: they differ in vector width only, and IEEE-754 additions,
// multiplications, divisions and conversions round the same in any lane. That holds only while
// the compiler may not fuse or reorder floating-point operations — build such code with
// -ffp-contract=off and without -ffast-math (runtime/sampling does), else the AVX2/AVX-512 clones
// could contract a multiply and an add into an FMA that the baseline has no instruction for.
//
// Empty (one ordinary function) off x86-64, and where multiversioning does not work: without
// GNU ifunc support, or under the sanitizers (whose runtime runs before the resolver could).
#ifndef CORTIQ_BASE_TARGET_CLONES_H_
#define CORTIQ_BASE_TARGET_CLONES_H_

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(CORTIQ_NO_TARGET_CLONES)
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define CORTIQ_NO_TARGET_CLONES 1
#endif
#endif
#endif

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(CORTIQ_NO_TARGET_CLONES)
#define CORTIQ_TARGET_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CORTIQ_TARGET_CLONES
#endif

#endif  // CORTIQ_BASE_TARGET_CLONES_H_
