// Small POSIX file helpers for the checkpoint readers: bounded whole-file reads, positional
// reads and a move-only read-only mapping (internal to compiler/checkpoint).
#ifndef CORTIQ_BASE_FILE_UTIL_H_
#define CORTIQ_BASE_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace cortiq {

// True if `path` names an existing regular file (following symlinks).
bool IsRegularFile(const std::string& path);

// True if `path` names an existing file of any type (following symlinks).
bool PathExists(const std::string& path);

// True if `path` names an existing directory (following symlinks).
bool IsDirectory(const std::string& path);

// The names of the entries of directory `path` ("." and ".." left out), sorted; none if it
// cannot be read (not a directory, no permission).
std::vector<std::string> DirectoryEntries(const std::string& path);

// Joins a directory and a file name with exactly one '/'.
std::string JoinPath(const std::string& dir, const std::string& name);

// Reads the whole file at `path`. Errors: NotFound if it cannot be opened, InvalidArgument if it
// is not a regular file (as ReadOnlyFile::Open) or is larger than `max_bytes` (checked before
// reading, so a huge file costs no memory).
absl::StatusOr<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes);

// Reads a text input given by path (a prompt file, cortiq-run -f): a regular file as
// ReadFileToString, or a FIFO or pipe (a named FIFO, /dev/stdin on a pipe, bash's <(command)) read
// to its end, waiting for a writer as `cat` would. Never more than max_bytes + 1 bytes are read or
// held. Errors: NotFound if it cannot be opened; InvalidArgument for a directory, device or
// socket; OutOfRange for more than `max_bytes` bytes ("<path>: more than N bytes", checked before
// reading a regular file); Internal on a read error.
absl::StatusOr<std::string> ReadTextInput(const std::string& path, uint64_t max_bytes);

// An open read-only file: its size, positional reads, and an optional whole-file mmap
// (PROT_READ, MAP_PRIVATE). Move-only; closes and unmaps on destruction.
class ReadOnlyFile {
 public:
  // Opens `path` without blocking, then requires a regular file: a FIFO, device or directory is
  // rejected at once ("<path>: not a regular file (a FIFO)") rather than read or waited on.
  // Errors: NotFound (cannot open or stat), InvalidArgument (not a regular file).
  static absl::StatusOr<ReadOnlyFile> Open(const std::string& path);

  ReadOnlyFile(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile& operator=(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ~ReadOnlyFile();

  const std::string& path() const { return path_; }
  // File size in bytes, from fstat at Open.
  uint64_t size() const { return size_; }

  // Reads exactly `num_bytes` bytes at byte `offset` into `out`. Errors: InvalidArgument if the
  // range passes the end of the file (names the file), Internal on an I/O error.
  absl::Status ReadAt(uint64_t offset, uint64_t num_bytes, void* out) const;

  // Maps the whole file read-only. Idempotent. An empty file maps to an empty span.
  absl::Status Map();
  // The mapped bytes (empty unless Map() succeeded).
  absl::Span<const uint8_t> mapped() const;

 private:
  ReadOnlyFile(std::string path, int fd, uint64_t size);
  void Reset();

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  void* map_ = nullptr;  // nullptr when not mapped.
};

}  // namespace cortiq

#endif  // CORTIQ_BASE_FILE_UTIL_H_
