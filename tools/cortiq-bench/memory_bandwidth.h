// Measures the machine's sustained memory read bandwidth: the roofline of decode, which reads
// every streamed weight once per token.
#ifndef CORTIQ_TOOLS_CORTIQ_BENCH_MEMORY_BANDWIDTH_H_
#define CORTIQ_TOOLS_CORTIQ_BENCH_MEMORY_BANDWIDTH_H_

#include <cstddef>

namespace cortiq {

// Reads a `bytes`-sized buffer (page-aligned, allocated and touched first; choose it much larger
// than the last-level cache, e.g. 1 GiB) with `threads` threads, each streaming a contiguous
// share with the widest vector loads the CPU has (read_stream.h, dispatched like the kernels),
// `passes` times plainly and `passes` times with every line also prefetched into L2 ahead
// (XorWordsIntoL2), alternating. The threads are started before the first pass and released
// together for each one; a pass is timed from the release to the last thread's finish. Returns
// the best pass of either kind in bytes/second (0 if the buffer cannot be allocated). Runs in a
// child process, so the buffer does not count in the caller's peak RSS.
double MeasureReadBandwidth(size_t bytes, int threads, int passes);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_BENCH_MEMORY_BANDWIDTH_H_
