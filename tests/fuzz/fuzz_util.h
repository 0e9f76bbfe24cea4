// Helpers shared by the libFuzzer targets of tests/fuzz: an in-memory file for readers that take
// a path, and a check that aborts (a libFuzzer crash) when an invariant of the code under test
// does not hold.
#ifndef CORTIQ_TESTS_FUZZ_FUZZ_UTIL_H_
#define CORTIQ_TESTS_FUZZ_FUZZ_UTIL_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cortiq {
namespace fuzz {

// Aborts with a message unless `condition`: a broken invariant is a crash libFuzzer reports and
// minimizes, like a sanitizer error.
#define CORTIQ_FUZZ_CHECK(condition, ...)                                             \
  do {                                                                                \
    if (!(condition)) {                                                               \
      std::fprintf(stderr, "%s:%d: check failed: %s: %s\n", __FILE__, __LINE__,       \
                   #condition, ::absl::StrCat(__VA_ARGS__).c_str());                  \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)

// One memfd (a regular file in memory, no disk I/O) reused for every input: Set() replaces its
// contents, path() ("/proc/self/fd/N") opens it like any file, so the readers under test take
// their real open/stat/pread/mmap path.
class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = absl::StrCat("/proc/self/fd/", fd_);
  }
  void Set(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || (size > 0 && pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size))) {
      std::perror("memfd write");
      std::abort();
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

// Every error of a reader names what it read: its message contains `path`.
inline void CheckNamesFile(const absl::Status& status, const std::string& path) {
  CORTIQ_FUZZ_CHECK(status.ok() || absl::StrContains(status.message(), path),
                    "error does not name the file ", path, ": ", status.ToString());
}

}  // namespace fuzz
}  // namespace cortiq

#endif  // CORTIQ_TESTS_FUZZ_FUZZ_UTIL_H_
