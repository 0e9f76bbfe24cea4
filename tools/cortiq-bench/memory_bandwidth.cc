// Read-bandwidth measurement for cortiq-bench (see memory_bandwidth.h).
#include "tools/cortiq-bench/memory_bandwidth.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "tools/cortiq-bench/read_stream.h"

#include <sys/wait.h>
#include <unistd.h>

namespace cortiq {

namespace {

// Threads that stay alive across the passes: each pass, the caller publishes a generation number
// and every worker starts reading its slice at once; the pass is timed from that release to the
// last worker's finish, so thread creation is never inside the timed region.
class ReadTeam {
 public:
  ReadTeam(const uint64_t* buffer, size_t words, int threads)
      : buffer_(buffer), words_(words), threads_(threads), done_(threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { Work(t); });
  }
  ~ReadTeam() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    for (std::thread& worker : workers_) worker.join();
  }

  // One pass over the whole buffer by all threads (XorWordsIntoL2 if into_l2, else XorWords);
  // returns its duration in seconds.
  double Pass(bool into_l2) {
    into_l2_.store(into_l2, std::memory_order_relaxed);
    for (std::atomic<bool>& d : done_) d.store(false, std::memory_order_relaxed);
    const auto start = std::chrono::steady_clock::now();
    generation_.fetch_add(1, std::memory_order_acq_rel);
    ReadSlice(0);
    for (int t = 1; t < threads_; ++t) {
      while (!done_[static_cast<size_t>(t)].load(std::memory_order_acquire)) {
      }
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  uint64_t sink() const { return sink_.load(); }

 private:
  void Work(int t) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t now;
      while ((now = generation_.load(std::memory_order_acquire)) == seen) {
      }
      seen = now;
      if (stop_.load(std::memory_order_acquire)) return;
      ReadSlice(t);
    }
  }
  void ReadSlice(int t) {
    const size_t chunk = words_ / static_cast<size_t>(threads_);
    const uint64_t* begin = buffer_ + chunk * static_cast<size_t>(t);
    const size_t count = t + 1 == threads_ ? words_ - chunk * static_cast<size_t>(t) : chunk;
    const bool into_l2 = into_l2_.load(std::memory_order_relaxed);
    sink_.fetch_xor(into_l2 ? XorWordsIntoL2(begin, count) : XorWords(begin, count),
                    std::memory_order_relaxed);
    done_[static_cast<size_t>(t)].store(true, std::memory_order_release);
  }

  const uint64_t* buffer_;
  size_t words_;
  int threads_;
  std::vector<std::atomic<bool>> done_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> into_l2_{false};  // published before the generation bump (acq_rel)
  std::atomic<uint64_t> sink_{0};
  std::vector<std::thread> workers_;
};

}  // namespace

// The measurement itself (see MeasureReadBandwidth).
double MeasureReadBandwidthInProcess(size_t bytes, int threads, int passes) {
  const size_t words = bytes / sizeof(uint64_t);
  void* memory = nullptr;
  if (words == 0 || threads < 1 || posix_memalign(&memory, 4096, words * sizeof(uint64_t)) != 0) {
    return 0.0;
  }
  std::unique_ptr<uint64_t, decltype(&free)> buffer(static_cast<uint64_t*>(memory), &free);
  // Touch every page (and give the words distinct values) before anything is timed.
  for (size_t i = 0; i < words; ++i) buffer.get()[i] = i * 0x9E3779B97F4A7C15ull;
  double best = 0.0;
  ReadTeam team(buffer.get(), words, threads);
  // Each pass both ways, alternating: the best of either is the roofline.
  for (int pass = 0; pass < passes; ++pass) {
    for (bool into_l2 : {false, true}) {
      best = std::max(best, static_cast<double>(words * sizeof(uint64_t)) / team.Pass(into_l2));
    }
  }
  return team.sink() == 42 ? best * 1.0 : best;  // keeps the reads observable
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
