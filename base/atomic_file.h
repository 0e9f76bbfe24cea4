// AtomicFile: an output written under a fresh temporary file in its directory and renamed onto
// its path only when complete, so that a reader never sees a partial file (a full disk, a
// killed writer, an error half-way) and no existing file other than the output is ever touched.
//
// The temporary is created exclusively, never under a fixed name: an unnamed O_TMPFILE file of
// the output's filesystem where the kernel and filesystem support it (a killed writer then
// leaves nothing behind), else a new file "TARGET.XXXXXXXXXXXX.tmp" (12 random characters)
// created with O_CREAT | O_EXCL | O_NOFOLLOW, retried under another name if that one exists. A
// file that already exists under any name (an input called OUT.tmp, a user's file, a planted
// symlink) is therefore never opened, truncated, followed or removed.
#ifndef CORTIQ_BASE_ATOMIC_FILE_H_
#define CORTIQ_BASE_ATOMIC_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cortiq {

// One output file being written. Move-only. Until Commit succeeds the output path is untouched;
// the destructor (or Abandon) closes and removes the temporary.
//
// Errors of every method name the output path as the caller gave it, and map errno to a status
// code: ENOSPC, EDQUOT, EFBIG (a file size limit) and ENOMEM are ResourceExhausted ("No space
// left on device" etc. in the message), ENOENT NotFound, EACCES and EPERM PermissionDenied,
// anything else Internal.
class AtomicFile {
 public:
  // Checks `path` with CheckOutputPath(path, inputs) (base/file_checks.h: an existing path must
  // be a regular file and not one of `inputs`), follows a symlinked `path` to the file it names
  // (ResolveOutputPath: the link is kept and its target replaced), and creates the temporary in
  // that target's directory with mode 0666 & ~umask, or the replaced file's permission bits.
  // An existing file the user may not write is refused (PermissionDenied "PATH: is read-only";
  // root may write any). Errors: CheckOutputPath's and
  // ResolveOutputPath's; the errno's status for a directory that is missing or not writable.
  // `allow_unnamed` false skips O_TMPFILE and always uses a named temporary (for tests of that
  // path; the result is the same).
  static absl::StatusOr<AtomicFile> Create(const std::string& path,
                                           const std::vector<std::string>& inputs = {},
                                           bool allow_unnamed = true);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  // The output path as given to Create.
  const std::string& path() const { return path_; }
  // The descriptor of the temporary (read-write), for mmap or positional writes; -1 after
  // Commit or Abandon. Do not close it.
  int fd() const { return fd_; }

  // Appends `size` bytes at the current offset (retrying short writes and EINTR). Errors: the
  // errno's status, e.g. ResourceExhausted "PATH: write failed: No space left on device".
  absl::Status Write(const void* data, size_t size);

  // Allocates the temporary's first `size` bytes on disk (posix_fallocate), so that stores into
  // a shared mapping of it cannot hit a full disk (SIGBUS) later. Errors: ResourceExhausted
  // "PATH: cannot reserve N bytes: No space left on device", and the like.
  absl::Status Reserve(uint64_t size);

  // Makes the output: flushes the temporary to disk (fsync), closes it and renames it onto the
  // target in one step (rename(2): a reader sees the old file or the new one, never a mix), then
  // flushes the directory. Call once, after everything is written (and any mapping msync'ed
  // and unmapped). On error the temporary is removed and the output left as it was. Errors: the
  // errno's status ("PATH: cannot write: ...", "PATH: cannot rename ...").
  absl::Status Commit();

  // Closes and removes the temporary; the output is left as it was. Idempotent.
  void Abandon();

 private:
  AtomicFile() = default;

  std::string path_;       // as given
  std::string target_;     // path_ with symlinks resolved: what Commit replaces
  std::string temp_path_;  // the named temporary, or empty for an unnamed O_TMPFILE one
  int fd_ = -1;
};

}  // namespace cortiq

#endif  // CORTIQ_BASE_ATOMIC_FILE_H_
