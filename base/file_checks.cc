// CheckOutputPath and ResolveOutputPath: refuse outputs that would destroy a special file or an
// input, and find the real file behind a symlinked output.
#include "base/file_checks.h"

#include <sys/mman.h>

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// Longest symlink chain followed, as the kernel's own limit (MAXSYMLINKS).
constexpr int kMaxSymlinks = 40;

// What a non-regular file is, for the error message.
const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// The directory part of `path` ("." for a bare name, "/" for a file in the root).
std::string Dirname(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The beginning of a file an output would replace.
struct FileHead {
  std::string bytes;       // its first bytes (fewer in a shorter file)
  uint64_t file_size = 0;  // its size
};

// The first `size` bytes of `output` if it is a non-empty regular file that a writer would
// replace; nullopt if it is missing, empty or not a regular file (nothing to check). Errors
// (naming `output` and `checking`, what the bytes are read for): PermissionDenied or Internal
// when it exists but cannot be opened or read.
absl::StatusOr<std::optional<FileHead>> ExistingHead(const std::string& output, size_t size,
                                                     const std::string& checking) {
  struct stat st;
  if (stat(output.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    return std::optional<FileHead>();
  }
  const auto failed = [&](int e) {
    const std::string text = absl::StrCat(output, ": exists and cannot be read to check that ",
                                          checking, " before replacing it: ", std::strerror(e));
    return e == EACCES || e == EPERM ? absl::PermissionDeniedError(text)
                                     : absl::InternalError(text);
  };
  const int fd = open(output.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return failed(errno);
  std::string head(size, '\0');
  const ssize_t got = pread(fd, head.data(), head.size(), 0);
  const int e = errno;
  close(fd);
  if (got < 0) return failed(e);
  head.resize(static_cast<size_t>(got));
  return std::optional<FileHead>(FileHead{std::move(head), static_cast<uint64_t>(st.st_size)});
}

}  // namespace

absl::Status CheckReplaceable(const std::string& output, const std::string& magic,
                              const std::string& kind) {
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<FileHead> head,
                          ExistingHead(output, magic.size(), absl::StrCat("it is a ", kind)));
  if (!head || head->bytes == magic) return absl::OkStatus();
  return absl::AlreadyExistsError(absl::StrCat(
      output, ": exists and is not a ", kind, " (it does not begin with one's magic bytes); "
      "refusing to replace it: remove it first or choose another path"));
}

absl::Status CheckNotAModel(const std::string& output, const std::string& what) {
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<FileHead> read,
                          ExistingHead(output, 64, "it is no model"));
  if (!read) return absl::OkStatus();
  const auto* head = reinterpret_cast<const unsigned char*>(read->bytes.data());
  const ssize_t got = static_cast<ssize_t>(read->bytes.size());
  const char* kind = nullptr;
  if (got >= 4 && std::memcmp(head, "GGUF", 4) == 0) {
    kind = "a GGUF model";
  } else if (got >= 8 && std::memcmp(head, "CORTIQ", 6) == 0) {
    kind = "a cortiq artifact";
  } else if (got >= 8 && std::memcmp(head, "CQCHAT\r\n", 8) == 0) {
    kind = "a saved cortiq-chat conversation";
  } else if (got > 8) {
    // A safetensors header is JSON: '{' after any whitespace (cortiq's reader, as JSON
    // parsers do, accepts some).
    ssize_t brace = 8;
    while (brace < got && (head[brace] == ' ' || head[brace] == '\t' || head[brace] == '\n' ||
                           head[brace] == '\r')) {
      ++brace;
    }
    uint64_t header_bytes = 0;
    for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | head[i];
    if (brace < got && head[brace] == '{' && header_bytes > static_cast<uint64_t>(brace - 8) &&
        header_bytes <= read->file_size - 8) {
      kind = "a safetensors file";
    }
  }
  if (kind == nullptr) return absl::OkStatus();
  return absl::AlreadyExistsError(absl::StrCat(output, ": is ", kind, "; refusing to replace it ",
                                               "with ", what,
                                               ": remove it first or choose another path"));
}

std::vector<std::string> FilesOfInput(const std::string& path) {
  std::vector<std::string> files = {path};
  for (const std::string& name : DirectoryEntries(path)) files.push_back(path + "/" + name);
  return files;
}

absl::Status CheckOutputPath(const std::string& output,
                             const std::vector<std::string>& inputs) {
  struct stat out;
  // A missing output is created, and any other stat error (EACCES, ENOTDIR, ELOOP) makes the
  // caller's open fail with the same errno, reported there with its own wording.
  if (stat(output.c_str(), &out) != 0) return absl::OkStatus();
  if (!S_ISREG(out.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(output, ": is ", FileKind(out.st_mode),
                     ", not a regular file; refusing to overwrite it"));
  }
  for (const std::string& input : inputs) {
    struct stat in;
    if (input.empty() || stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      return absl::InvalidArgumentError(
          absl::StrCat(output, ": is the same file as the input ", input,
                       "; refusing to overwrite it"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveOutputPath(const std::string& path) {
  std::string current = path;
  for (int i = 0; i <= kMaxSymlinks; ++i) {
    struct stat st;
    // Missing (or unreadable): this is the name the writer creates, and its open reports errors.
    if (lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    char target[PATH_MAX];
    const ssize_t n = readlink(current.c_str(), target, sizeof(target));
    if (n < 0) {
      return absl::InternalError(absl::StrCat(path, ": cannot read the symbolic link ", current,
                                              ": ", std::strerror(errno)));
    }
    if (static_cast<size_t>(n) >= sizeof(target)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": the symbolic link ", current, " has a target longer than ",
                       PATH_MAX - 1, " bytes"));
    }
    const std::string next(target, static_cast<size_t>(n));
    // A relative target is relative to the directory holding the link, not to the cwd.
    current = !next.empty() && next[0] == '/' ? next : absl::StrCat(Dirname(current), "/", next);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": more than ", kMaxSymlinks, " levels of symbolic links (a loop?)"));
}

absl::Status CheckDistinctOutputs(const std::vector<std::string>& outputs) {
  struct Resolved {
    const std::string* given;
    std::string canonical;
    bool exists = false;
    struct stat st;
  };
  std::vector<Resolved> seen;
  for (const std::string& output : outputs) {
    if (output.empty()) continue;
    Resolved r{&output, "", false, {}};
    CORTIQ_ASSIGN_OR_RETURN(const std::string target, ResolveOutputPath(output));
    const size_t slash = target.find_last_of('/');
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    char dir[PATH_MAX];
    // A directory that cannot be resolved makes the write fail later with its own error.
    r.canonical = realpath(Dirname(target).c_str(), dir) != nullptr
                      ? absl::StrCat(dir, std::string(dir) == "/" ? "" : "/", base)
                      : target;
    r.exists = stat(target.c_str(), &r.st) == 0;
    for (const Resolved& other : seen) {
      if (other.canonical == r.canonical ||
          (other.exists && r.exists && other.st.st_dev == r.st.st_dev &&
           other.st.st_ino == r.st.st_ino)) {
        return absl::InvalidArgumentError(absl::StrCat(output, ": is the same file as the output ",
                                                       *other.given, "; refusing to write both"));
      }
    }
    seen.push_back(r);
  }
  return absl::OkStatus();
}

void ReleaseMappedPages(const uint8_t* data, uint64_t size) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace cortiq
