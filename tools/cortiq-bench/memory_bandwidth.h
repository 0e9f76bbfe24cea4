// Measures the machine's sustained memory read bandwidth: the roofline of decode, which reads
// every streamed weight once per token.
#ifndef CORTIQ_TOOLS_CORTIQ_BENCH_MEMORY_BANDWIDTH_H_
#define CORTIQ_TOOLS_CORTIQ_BENCH_MEMORY_BANDWIDTH_H_

#include <cstddef>

namespace cortiq {

// Reads a `bytes`-sized buffer (allocated and touched first; choose it much larger than the
// last-level cache, e.g. 1 GiB) with `threads` threads, each summing a contiguous share with
// independent 64-bit accumulators, `passes` times. Returns the best pass in bytes/second.
double MeasureReadBandwidth(size_t bytes, int threads, int passes);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_BENCH_MEMORY_BANDWIDTH_H_
