// The memory-read kernel of cortiq-bench's bandwidth probe (memory_bandwidth.h): a stream of the
// widest vector loads the CPU has, dispatched to the best Highway target like the model's kernels,
// so the probe reads memory the way the decode kernels do (scalar 64-bit loads understate it by
// ~1/3 on AVX-512 machines).
#ifndef CORTIQ_TOOLS_CORTIQ_BENCH_READ_STREAM_H_
#define CORTIQ_TOOLS_CORTIQ_BENCH_READ_STREAM_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {

// XOR of the 64-bit words data[0, words) (any alignment), read with vector loads. The result
// exists so that the reads cannot be optimized away; XorWordsReference computes the same value
// one word at a time.
uint64_t XorWords(const uint64_t* data, size_t words);
uint64_t XorWordsReference(const uint64_t* data, size_t words);

// XorWords with every 64-byte line also prefetched into L2 12 KiB ahead, as the decode kernels
// read where ops::DecodePrefetchIntoL2() (Zen 4): there the plain loop's hardware prefetch alone
// reads less than those kernels do, and the probe is the roofline they are held to.
uint64_t XorWordsIntoL2(const uint64_t* data, size_t words);

// Name of the Highway target XorWords dispatches to (e.g. "AVX3"), for the probe's report.
const char* XorWordsTarget();

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_BENCH_READ_STREAM_H_
