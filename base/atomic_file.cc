// AtomicFile: exclusive temporary in the output's directory, renamed onto the output on Commit
// (see atomic_file.h).
#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file_checks.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// Names tried before giving up on a directory full of colliding names (62^12 possible names:
// a collision at all means someone is creating them on purpose).
constexpr int kNameAttempts = 100;

absl::Status ErrnoStatus(int error, absl::string_view message) {
  std::string text = absl::StrCat(message, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(text);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(text);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case ENOMEM:
      return absl::ResourceExhaustedError(text);
    default:
      return absl::InternalError(text);
  }
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// 12 random characters of [0-9A-Za-z] from getrandom(2), or (where it fails) from the clock,
// the pid and a counter: only uniqueness matters, O_EXCL / linkat guarantee exclusivity.
std::string RandomName() {
  static constexpr char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  static std::atomic<uint64_t> counter{0};
  uint8_t bytes[12];
  if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(bytes))) {
    uint64_t x = static_cast<uint64_t>(
                     std::chrono::steady_clock::now().time_since_epoch().count()) ^
                 (static_cast<uint64_t>(getpid()) << 32) ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
    for (uint8_t& b : bytes) {
      x ^= x >> 33;
      x *= 0xff51afd7ed558ccdull;
      b = static_cast<uint8_t>(x >> 56);
    }
  }
  std::string name(sizeof(bytes), '0');
  for (size_t i = 0; i < sizeof(bytes); ++i) name[i] = kAlphabet[bytes[i] % 62];
  return name;
}

// "TARGET.XXXXXXXXXXXX.tmp": beside the target, so the rename stays within one filesystem.
std::string TempName(const std::string& target) {
  return absl::StrCat(target, ".", RandomName(), ".tmp");
}

// The directory is flushed so that the rename itself survives a crash; a failure here (some
// filesystems refuse fsync on directories) does not undo the completed rename.
void SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

}  // namespace

absl::StatusOr<AtomicFile> AtomicFile::Create(const std::string& path,
                                              const std::vector<std::string>& inputs,
                                              bool allow_unnamed) {
  // Never replace a device node, directory or FIFO by the rename, nor an input; write through a
  // symlink to its target (renaming onto the link itself would replace the link).
  CORTIQ_RETURN_IF_ERROR(CheckOutputPath(path, inputs));
  AtomicFile file;
  file.path_ = path;
  CORTIQ_ASSIGN_OR_RETURN(file.target_, ResolveOutputPath(path));
  const std::string dir = Dirname(file.target_);
  // An existing file is replaced only if the user may write it (the rename needs only the
  // directory's permission, so a read-only file would otherwise go as cp or an editor would not
  // let it), and the replacement keeps its permission bits.
  int keep_mode = -1;
  struct stat st;
  if (stat(file.target_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    if (access(file.target_.c_str(), W_OK) != 0) {
      return absl::PermissionDeniedError(absl::StrCat(
          path, ": is read-only (no write permission); refusing to replace it"));
    }
    keep_mode = static_cast<int>(st.st_mode & 0777);
  }
  const auto with_mode = [&](AtomicFile f) -> absl::StatusOr<AtomicFile> {
    if (keep_mode >= 0 && fchmod(f.fd_, static_cast<mode_t>(keep_mode)) != 0) {
      return ErrnoStatus(errno, absl::StrCat(path, ": cannot set the permissions of the new file"));
    }
    return f;
  };

  // An unnamed file first: nothing to clean up if this process dies. linkat through
  // /proc/self/fd names it at Commit, so /proc must be there.
  if (allow_unnamed && access("/proc/self/fd", X_OK) == 0) {
    file.fd_ = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    if (file.fd_ >= 0) return with_mode(std::move(file));
    // Filesystems (and kernels) without O_TMPFILE say so with one of these; anything else
    // (a missing or read-only directory, no permission) would fail the named file too.
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
      return ErrnoStatus(errno, absl::StrCat(path, ": cannot create a file in ", dir));
    }
  }
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    const std::string temp = TempName(file.target_);
    file.fd_ = open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (file.fd_ >= 0) {
      file.temp_path_ = temp;
      return with_mode(std::move(file));
    }
    if (errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat(path, ": cannot create the temporary file ", temp));
    }
  }
  return absl::InternalError(absl::StrCat(path, ": cannot create a temporary file in ", dir,
                                          ": ", kNameAttempts, " random names all exist"));
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      temp_path_(std::exchange(other.temp_path_, std::string())),
      fd_(std::exchange(other.fd_, -1)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    path_ = std::move(other.path_);
    target_ = std::move(other.target_);
    temp_path_ = std::exchange(other.temp_path_, std::string());
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFile::~AtomicFile() { Abandon(); }

void AtomicFile::Abandon() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  // Only a file this object created (O_EXCL) is removed.
  if (!temp_path_.empty()) unlink(temp_path_.c_str());
  temp_path_.clear();
}

absl::Status AtomicFile::Write(const void* data, size_t size) {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": file is closed"));
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat(path_, ": write failed"));
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Reserve(uint64_t size) {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": file is closed"));
  int error;
  do {
    error = posix_fallocate(fd_, 0, static_cast<off_t>(size));
  } while (error == EINTR);
  // posix_fallocate returns the error instead of setting errno.
  if (error != 0) return ErrnoStatus(error, absl::StrCat(path_, ": cannot reserve ", size, " bytes"));
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": file is closed"));
  if (fsync(fd_) != 0) {
    const int error = errno;
    Abandon();
    return ErrnoStatus(error, absl::StrCat(path_, ": cannot write"));
  }
  if (temp_path_.empty()) {
    // Name the unnamed file under a fresh temporary name, then rename that onto the target
    // (linkat never replaces an existing name, so it cannot write the target directly).
    const std::string proc_path = absl::StrCat("/proc/self/fd/", fd_);
    for (int attempt = 0; attempt < kNameAttempts && temp_path_.empty(); ++attempt) {
      const std::string temp = TempName(target_);
      if (linkat(AT_FDCWD, proc_path.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        temp_path_ = temp;
      } else if (errno != EEXIST) {
        const int error = errno;
        Abandon();
        return ErrnoStatus(error, absl::StrCat(path_, ": cannot name the temporary file ", temp));
      }
    }
    if (temp_path_.empty()) {
      Abandon();
      return absl::InternalError(absl::StrCat(path_, ": cannot name the temporary file: ",
                                              kNameAttempts, " random names all exist"));
    }
  }
  const int fd = std::exchange(fd_, -1);
  if (close(fd) != 0) {
    const int error = errno;
    Abandon();
    return ErrnoStatus(error, absl::StrCat(path_, ": cannot write"));
  }
  if (rename(temp_path_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    const std::string temp = temp_path_;
    Abandon();
    return ErrnoStatus(error, absl::StrCat(path_, ": cannot rename ", temp, " to ", target_));
  }
  temp_path_.clear();  // renamed: nothing left to remove
  SyncDirectory(Dirname(target_));
  return absl::OkStatus();
}

}  // namespace cortiq
