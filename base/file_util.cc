// POSIX file helpers for the checkpoint readers (see file_util.h).
#include "base/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

}  // namespace

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> DirectoryEntries(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes) {
  absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(path);
  if (!file.ok()) return file.status();
  if (file->size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file is ", file->size(),
                                                   " bytes, more than the limit of ", max_bytes));
  }
  std::string contents(file->size(), '\0');
  absl::Status status = file->ReadAt(0, contents.size(), contents.data());
  if (!status.ok()) return status;
  return contents;
}

absl::StatusOr<std::string> ReadTextInput(const std::string& path, uint64_t max_bytes) {
  // Without blocking first (as ReadOnlyFile::Open), to tell a FIFO from a device before waiting.
  const int probe = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (probe < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", ErrnoText(errno)));
  }
  struct stat st;
  const bool is_fifo = ::fstat(probe, &st) == 0 && S_ISFIFO(st.st_mode);
  if (!is_fifo) {
    ::close(probe);
    absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(path);  // refuses all but files
    if (!file.ok()) return file.status();
    if (file->size() > max_bytes) {
      return absl::OutOfRangeError(absl::StrCat(path, ": ", file->size(), " bytes, more than ",
                                                max_bytes));
    }
    std::string contents(file->size(), '\0');
    CORTIQ_RETURN_IF_ERROR(file->ReadAt(0, contents.size(), contents.data()));
    return contents;
  }
  // A FIFO opened without blocking reads as empty until a writer opens it: the same FIFO (through
  // the descriptor, not the path, which may have been replaced) is opened again, blocking until
  // there is a writer. An anonymous pipe already has one.
  const int fd = ::open(absl::StrCat("/proc/self/fd/", probe).c_str(), O_RDONLY | O_CLOEXEC);
  const int open_error = errno;
  ::close(probe);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", ErrnoText(open_error)));
  }
  std::string contents;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat(path, ": read failed: ", ErrnoText(error)));
    }
    if (n == 0) break;
    if (static_cast<uint64_t>(n) > max_bytes - contents.size()) {
      ::close(fd);
      return absl::OutOfRangeError(absl::StrCat(path, ": more than ", max_bytes, " bytes"));
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return contents;
}

absl::StatusOr<ReadOnlyFile> ReadOnlyFile::Open(const std::string& path) {
  // O_NONBLOCK: a blocking open(2) of a FIFO waits for a writer, i.e. forever for a FIFO given by
  // mistake; without blocking it returns at once and the S_ISREG check below rejects it. (A
  // stat(2) before the open would leave a window in which the path is replaced.) O_NOCTTY keeps
  // a terminal device from becoming the controlling terminal on the way to the same rejection.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", ErrnoText(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::NotFoundError(absl::StrCat(path, ": cannot stat: ", ErrnoText(error)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file (",
                                                   S_ISDIR(st.st_mode)    ? "a directory"
                                                   : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                   : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
                                                       ? "a device"
                                                       : "a socket or other special file",
                                                   ")"));
  }
  // Regular files ignore O_NONBLOCK; it is cleared so that the descriptor is an ordinary one.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return ReadOnlyFile(path, fd, static_cast<uint64_t>(st.st_size));
}

ReadOnlyFile::ReadOnlyFile(std::string path, int fd, uint64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

ReadOnlyFile::ReadOnlyFile(ReadOnlyFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)),
      map_(std::exchange(other.map_, nullptr)) {}

ReadOnlyFile& ReadOnlyFile::operator=(ReadOnlyFile&& other) noexcept {
  if (this != &other) {
    Reset();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
    map_ = std::exchange(other.map_, nullptr);
  }
  return *this;
}

ReadOnlyFile::~ReadOnlyFile() { Reset(); }

void ReadOnlyFile::Reset() {
  if (map_ != nullptr) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
  map_ = nullptr;
  fd_ = -1;
}

absl::Status ReadOnlyFile::ReadAt(uint64_t offset, uint64_t num_bytes, void* out) const {
  if (offset > size_ || num_bytes > size_ - offset) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": truncated: reading bytes [", offset,
                                                   ", ", offset + num_bytes, ") of a file of ",
                                                   size_, " bytes"));
  }
  auto* dst = static_cast<char*>(out);
  while (num_bytes > 0) {
    const ssize_t n = ::pread(fd_, dst, num_bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat(path_, ": read failed: ", ErrnoText(errno)));
    }
    if (n == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": unexpected end of file at byte ", offset));
    }
    dst += n;
    offset += static_cast<uint64_t>(n);
    num_bytes -= static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadOnlyFile::Map() {
  if (map_ != nullptr || size_ == 0) return absl::OkStatus();
  void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (map == MAP_FAILED) {
    return absl::InternalError(
        absl::StrCat(path_, ": mmap of ", size_, " bytes failed: ", ErrnoText(errno)));
  }
  map_ = map;
  return absl::OkStatus();
}

absl::Span<const uint8_t> ReadOnlyFile::mapped() const {
  if (map_ == nullptr) return {};
  return absl::Span<const uint8_t>(static_cast<const uint8_t*>(map_), size_);
}

}  // namespace cortiq
