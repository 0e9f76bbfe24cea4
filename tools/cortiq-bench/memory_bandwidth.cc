// Read-bandwidth measurement for cortiq-bench (see memory_bandwidth.h).
#include "tools/cortiq-bench/memory_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace cortiq {

namespace {

// Sums [begin, end) with 8 independent accumulators so the loop is bound by loads, not by
// the add latency; the result is returned so the compiler cannot drop the reads.
uint64_t SumWords(const uint64_t* begin, const uint64_t* end) {
  uint64_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const uint64_t* p = begin;
  for (; p + 8 <= end; p += 8) {
    for (int k = 0; k < 8; ++k) a[k] += p[k];
  }
  for (; p < end; ++p) a[0] += *p;
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

}  // namespace

// The measurement itself (see MeasureReadBandwidth).
double MeasureReadBandwidthInProcess(size_t bytes, int threads, int passes) {
  const size_t words = bytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[words]);
  for (size_t i = 0; i < words; ++i) buffer[i] = i;  // touch every page
  std::atomic<uint64_t> sink{0};
  double best = 0.0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const size_t chunk = words / static_cast<size_t>(threads);
        const uint64_t* begin = buffer.get() + chunk * static_cast<size_t>(t);
        const uint64_t* end = t + 1 == threads ? buffer.get() + words : begin + chunk;
        sink += SumWords(begin, end);
      });
    }
    for (std::thread& thread : pool) thread.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(words * sizeof(uint64_t)) / seconds);
  }
  return sink.load() == 42 ? best * 1.0 : best;  // keeps `sink` observable
}

}  // namespace cortiq

namespace cortiq {

double MeasureReadBandwidth(size_t bytes, int threads, int passes) {
  // In a child process, so the 1 GiB buffer does not count in the caller's peak RSS.
  int fds[2];
  if (pipe(fds) != 0) return MeasureReadBandwidthInProcess(bytes, threads, passes);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const double value = MeasureReadBandwidthInProcess(bytes, threads, passes);
    ssize_t written = write(fds[1], &value, sizeof(value));
    _exit(written == sizeof(value) ? 0 : 1);
  }
  close(fds[1]);
  double value = 0.0;
  if (pid < 0 || read(fds[0], &value, sizeof(value)) != sizeof(value)) value = 0.0;
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return value;
}

}  // namespace cortiq
