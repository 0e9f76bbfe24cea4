// File helpers shared by the runtime, the compiler and the tools: output-path checks (writing an
// output must never replace a device node, a directory, a FIFO or a symbolic link, nor overwrite
// one of the command's own inputs, e.g. `cortiq-run --dump-logits MODEL` truncating the model
// it has mapped) and the release of mapped pages a reader or writer is done with.
#ifndef CORTIQ_BASE_FILE_CHECKS_H_
#define CORTIQ_BASE_FILE_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cortiq {

// Checks that `output` may be created or overwritten. If `output` exists (symlinks followed) it
// must be a regular file, and it must not be the same file (st_dev and st_ino, symlinks
// followed, so hard links and links to an input count) as any path of `inputs`. A missing
// output, or a symlink to a missing target, passes; inputs that do not exist are skipped (their
// own open reports them); a stat failure other than "missing" is left to the caller's open,
// which reports it with the real errno. Call it before the output is opened for writing.
// Errors: InvalidArgument "OUTPUT: is a character device, not a regular file; refusing to
// overwrite it" (likewise a block device, a directory, a FIFO, a socket) or "OUTPUT: is the same
// file as the input INPUT; refusing to overwrite it".
absl::Status CheckOutputPath(const std::string& output,
                             const std::vector<std::string>& inputs);

// Checks that an existing `output` (symlinks followed) is empty or begins with `magic`: a writer
// of a binary format replaces only a file of its own kind (an artifact compiled again, a chat
// saved again), never another file that a mistyped path names (a model, a source file, an
// executable), which would be lost. A missing output passes; so does anything that is not a
// regular file, which CheckOutputPath refuses with its own message. Errors: AlreadyExists
// "OUTPUT: exists and is not a KIND (...); refusing to replace it: remove it first or choose
// another path"; the errno's status (naming OUTPUT) when it exists but cannot be read.
absl::Status CheckReplaceable(const std::string& output, const std::string& magic,
                              const std::string& kind);

// Checks that an existing `output` (symlinks followed) is not a model file that a mistyped
// path of a text or debug output would destroy: a GGUF (magic "GGUF"), a safetensors file (a
// little-endian u64 header length smaller than the file, then '{'), a cortiq artifact or a
// cortiq-chat file (their magic bytes). Other files are replaced as a shell's `>` replaces them
// (a logits dump written again, notes the user named on purpose). For the outputs whose own
// format has no magic (cortiq-import's IR, cortiq-dump --dot, cortiq-run --dump-logits and
// --dump-layers, cortiq-compile --dump-ir); a writer of a binary format checks its own kind
// with CheckReplaceable instead. A missing, empty or non-regular output passes (CheckOutputPath
// refuses the last). Errors: AlreadyExists "OUTPUT: is a GGUF model; refusing to replace it
// with WHAT: remove it first or choose another path"; the errno's status (naming OUTPUT) when it
// exists but cannot be read.
absl::Status CheckNotAModel(const std::string& output, const std::string& what);

// The files a command reads from the input path `path`: `path` itself, and when it is a
// directory (a checkpoint: config.json, the index, the shards, the tokenizer files) every entry
// in it, for CheckOutputPath's `inputs`. Entries are listed, not followed into subdirectories;
// an unreadable directory gives just `path`.
std::vector<std::string> FilesOfInput(const std::string& path);

// Checks that no two of `outputs` (empty entries skipped) name the same file, so that one
// command never writes two of its outputs over each other (`--dump-ir` onto `-o`, a logits dump
// inside the layer-dump directory under a tap's name). Two paths are the same when, with
// symlinks followed (ResolveOutputPath) and the directory made absolute (realpath), they are
// equal, or when both exist as the same inode (hard links). Errors: InvalidArgument "B: is the
// same file as the output A; refusing to write both"; ResolveOutputPath's errors.
absl::Status CheckDistinctOutputs(const std::vector<std::string>& outputs);

// The path that writing `path` by create-and-rename really has to replace: `path` with every
// symbolic link along the chain followed (relative link targets are resolved against the
// directory of the link), so that a writer can rename onto the link's target and keep the link.
// The result may not exist yet (a dangling link names the file to create); `path` itself is
// returned when it is not a symlink or does not exist. Errors: InvalidArgument naming `path` for
// a chain of more than 40 links (a loop); the errno's status for a failing readlink.
absl::StatusOr<std::string> ResolveOutputPath(const std::string& path);

// Drops the whole pages of [data, data + size) of a file mapping from this process (madvise
// MADV_DONTNEED). The data stay in the page cache (and, for a shared writable mapping, reach the
// file); only RSS shrinks, so a reader or writer that touches each tensor once keeps about one
// tensor resident instead of the whole model.
void ReleaseMappedPages(const uint8_t* data, uint64_t size);

}  // namespace cortiq

#endif  // CORTIQ_BASE_FILE_CHECKS_H_
