// Per-target streaming read for the bandwidth probe (read_stream.h): the widest vector loads the
// CPU has, eight independent accumulators.
//
// Per-target code (Highway "toggle" include guard).

#if defined(CORTIQ_TOOLS_CORTIQ_BENCH_READ_STREAM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CORTIQ_TOOLS_CORTIQ_BENCH_READ_STREAM_INL_H_
#undef CORTIQ_TOOLS_CORTIQ_BENCH_READ_STREAM_INL_H_
#else
#define CORTIQ_TOOLS_CORTIQ_BENCH_READ_STREAM_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// XOR of every 64-bit word of data[0, words). Eight accumulators so that the loop is bound by
// the loads (one XOR per vector is far below any core's load throughput), not by a dependency
// chain; aligned loads where the buffer allows (it is page-aligned in the probe).
// With kIntoL2, every 64-byte line is also prefetched into L2 kIntoL2Bytes ahead, as the decode
// kernels do where they prefetch into L2 (ops/cpu_features.h DecodePrefetchIntoL2; addresses
// past the buffer are harmless, a prefetch never faults). A fixed distance, not whole passes:
// the probe reads one stream, not rows side by side; the kernels' least distance
// (ops::kIntoL2PrefetchMinBytes, not included here to keep the probe free of the ops library).
constexpr size_t kIntoL2Bytes = 12288;
template <bool kIntoL2>
HWY_INLINE uint64_t XorWordsLoop(const uint64_t* HWY_RESTRICT data, size_t words) {
  const hn::ScalableTag<uint64_t> d;
  const size_t n = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  size_t i = 0;
  for (; i + 8 * n <= words; i += 8 * n) {
    if constexpr (kIntoL2) {
      for (size_t line = 0; line < 8 * n * sizeof(uint64_t); line += 64) {
        __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(data + i) +
                                                         line + kIntoL2Bytes),
                           /*rw=*/0, /*locality=*/2);
      }
    }
    a0 = hn::Xor(a0, hn::LoadU(d, data + i + 0 * n));
    a1 = hn::Xor(a1, hn::LoadU(d, data + i + 1 * n));
    a2 = hn::Xor(a2, hn::LoadU(d, data + i + 2 * n));
    a3 = hn::Xor(a3, hn::LoadU(d, data + i + 3 * n));
    a4 = hn::Xor(a4, hn::LoadU(d, data + i + 4 * n));
    a5 = hn::Xor(a5, hn::LoadU(d, data + i + 5 * n));
    a6 = hn::Xor(a6, hn::LoadU(d, data + i + 6 * n));
    a7 = hn::Xor(a7, hn::LoadU(d, data + i + 7 * n));
  }
  a0 = hn::Xor(hn::Xor(hn::Xor(a0, a1), hn::Xor(a2, a3)),
               hn::Xor(hn::Xor(a4, a5), hn::Xor(a6, a7)));
  HWY_ALIGN uint64_t lanes[HWY_MAX_BYTES / sizeof(uint64_t)];
  hn::Store(a0, d, lanes);
  uint64_t x = 0;
  for (size_t k = 0; k < n; ++k) x ^= lanes[k];
  for (; i < words; ++i) x ^= data[i];
  return x;
}

HWY_NOINLINE uint64_t XorWords(const uint64_t* HWY_RESTRICT data, size_t words) {
  return XorWordsLoop<false>(data, words);
}
HWY_NOINLINE uint64_t XorWordsIntoL2(const uint64_t* HWY_RESTRICT data, size_t words) {
  return XorWordsLoop<true>(data, words);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#endif  // toggle include guard
