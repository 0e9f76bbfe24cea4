// The size of the machine's last-level cache, which decides whether cortiq-bench's "share of
// the read bandwidth" means anything: weights that fit in it are read from the cache, not
// streamed from memory, so their bytes per second can exceed the memory bandwidth many times.
#ifndef CORTIQ_TOOLS_CORTIQ_BENCH_CACHE_SIZE_H_
#define CORTIQ_TOOLS_CORTIQ_BENCH_CACHE_SIZE_H_

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"

namespace cortiq {

// A size as Linux writes it in /sys/devices/system/cpu/cpuN/cache/indexM/size: decimal digits
// and an optional K, M or G suffix (binary multiples: "48K" = 49152, "300M"); surrounding
// whitespace is ignored. nullopt if `text` is not of that form.
std::optional<uint64_t> ParseCacheSize(absl::string_view text);

// The bytes of the highest-level data or unified cache of CPU 0
// (/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}), else sysconf's
// _SC_LEVEL3_CACHE_SIZE / _SC_LEVEL2_CACHE_SIZE; 0 when neither says.
uint64_t LastLevelCacheBytes();

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_BENCH_CACHE_SIZE_H_
