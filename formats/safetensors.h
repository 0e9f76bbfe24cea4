// Reader of safetensors checkpoints: one model.safetensors file, or a
// model.safetensors.index.json with its shards. Headers are validated in full; tensor data are
// mmapped and converted to f32 / bf16 on request.
//
// File format (huggingface/safetensors): u64 little-endian header length N, N bytes of a UTF-8
// JSON object, then the data section. Each header entry is
//   "<name>": {"dtype": "BF16", "shape": [d0, d1, ...], "data_offsets": [begin, end]}
// with offsets in bytes relative to the start of the data section (byte 8 + N); an optional
// "__metadata__" entry maps strings to strings. Tensor data are row-major and little-endian.
#ifndef CORTIQ_FORMATS_SAFETENSORS_H_
#define CORTIQ_FORMATS_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "formats/dtype.h"
#include "base/file_util.h"

namespace cortiq {

// Largest header accepted, in bytes: 16 MiB. A real header takes ~120 bytes per tensor (tiny-a:
// 146 tensors in 17.5 kB; a Gemma-4 E4B header is ~100 kB), so this is >100× any real one. The
// reference implementation allows 100 MB, but nothing needs it, and every byte of header costs
// memory to parse (~4× at worst with the entry-by-entry parse of ParseSafetensorsHeader; the
// whole-header llvm::json tree it replaces took ~50×, 4.4 GB for an 83 MB header).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = uint64_t{16} << 20;

// Most tensors accepted in one file, and in one checkpoint over all its shards: 100,000, tens of
// times the few thousand of a Gemma-4 checkpoint (vision and audio towers included). Bounds the
// TensorInfos (~200 bytes each) and the name table a hostile header can make the reader build.
inline constexpr size_t kMaxSafetensorsTensors = 100'000;

// Largest header entry (the JSON object of one tensor) accepted: 64 KiB. A real entry is under
// 200 bytes; the bound keeps the llvm::json parse of an entry (up to ~60× its text) small.
inline constexpr size_t kMaxSafetensorsEntryBytes = size_t{64} << 10;

// One tensor of a checkpoint.
struct TensorInfo {
  std::string name;
  // kUnsupported for dtypes cortiq cannot load; `dtype_name` keeps the file's string ("I8",
  // "F64", ...) so that reading such a tensor can name it.
  DType dtype = DType::kUnsupported;
  std::string dtype_name;
  std::vector<int64_t> shape;  // PyTorch order, e.g. [out, in] for a linear weight.
  int file_index = 0;          // index into SafetensorsCheckpoint::files().
  uint64_t data_offset = 0;    // absolute byte offset of the first element in that file.
  uint64_t num_bytes = 0;      // size of the data in bytes.

  // Product of `shape` (1 for a scalar of shape []); fits in uint64 (checked when parsed).
  uint64_t num_elements() const;
};

// Parses and validates one safetensors header. `header_json` is the N header bytes,
// `data_section_offset` = 8 + N, `file_size` the size of the whole file; `file_name` prefixes the
// messages and `file_index` is copied into each TensorInfo. Returns the tensors sorted by
// data_offset (ties, i.e. empty tensors, by name), with absolute offsets.
//
// The entries are parsed one at a time (memory at most ~4× the header, not the ~40× of a
// whole-header llvm::json tree).
//
// Errors (InvalidArgument, naming the file and the tensor): a header over
// kMaxSafetensorsHeaderBytes; malformed JSON or not an object; a name repeated (compared with
// escapes decoded); more than kMaxSafetensorsTensors tensors; an entry over
// kMaxSafetensorsEntryBytes or not an object; dtype not a string; shape not an array of
// non-negative integers; data_offsets not two non-negative integers with begin <= end <= data
// size (file_size − data_section_offset); end − begin != product(shape) · element size (computed
// with overflow checks; skipped for dtype strings of unknown element size); byte ranges that do
// not tile the data section (the reference reader's rule): two overlapping ("data range [4, 12)
// overlaps tensor a [0, 8)"), or bytes that belong to no tensor, between two tensors or after the
// last ("bytes [a, b) of the data section belong to no tensor"). Zero-size tensors take no bytes
// and are exempt. `__metadata__` must be an object of strings and is otherwise ignored.
// Unsupported dtypes are not an error here.
absl::StatusOr<std::vector<TensorInfo>> ParseSafetensorsHeader(std::string_view header_json,
                                                               uint64_t data_section_offset,
                                                               uint64_t file_size,
                                                               std::string_view file_name,
                                                               int file_index);

// The tensors of a checkpoint directory and (optionally) their mmapped data. Move-only; the
// mappings are released on destruction, which invalidates every span returned by Data().
class SafetensorsCheckpoint {
 public:
  // Opens `dir`: its model.safetensors.index.json if present, else its model.safetensors. `dir`
  // may also name a single .safetensors file. With `map_data` false only the first 8 + N bytes
  // of each file are read (enough for shapes and dtypes; Data/ReadAs* then fail). Files are
  // opened without blocking, so a FIFO in place of a file is an error, not a hang.
  //
  // Errors, naming the file (and tensor): NotFound if neither file exists or a shard is
  // missing; InvalidArgument for a path that is not a regular file (FIFO, device), a file
  // shorter than 8 bytes, a header length above kMaxSafetensorsHeaderBytes or above file size −
  // 8, any ParseSafetensorsHeader error, an index over 16 MiB, an index whose `weight_map` is not
  // a non-empty object of strings or names a shard path with '/', a tensor of the index absent
  // from its shard ("... listed in <index> for <shard> but not found there"), a tensor name
  // present in two shards, more than kMaxSafetensorsTensors tensors in all. Tensors found in a
  // shard but not listed in the index are kept.
  static absl::StatusOr<SafetensorsCheckpoint> Open(const std::string& dir, bool map_data = true);

  SafetensorsCheckpoint(SafetensorsCheckpoint&&) = default;
  SafetensorsCheckpoint& operator=(SafetensorsCheckpoint&&) = default;
  SafetensorsCheckpoint(const SafetensorsCheckpoint&) = delete;
  SafetensorsCheckpoint& operator=(const SafetensorsCheckpoint&) = delete;

  // The tensor called `name`, or nullptr. The pointer stays valid while the checkpoint lives.
  const TensorInfo* Find(std::string_view name) const;

  // All tensors, ordered by file then data offset.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  // Paths of the files, indexed by TensorInfo::file_index.
  std::vector<std::string> files() const;

  // The raw little-endian bytes of `info` (num_bytes long). Empty if the checkpoint was opened
  // without map_data or `info` does not belong to it.
  absl::Span<const uint8_t> Data(const TensorInfo& info) const;

  // Writes the num_elements() values of `info`, converted to f32, to `out`. F32 is copied, BF16
  // and F16 are widened exactly. Errors: Unimplemented for an unsupported dtype ("<file>: tensor
  // <name> has dtype I8; only F32, BF16 and F16 can be read"), FailedPrecondition without
  // map_data. The tensor's source pages are then dropped from this process (madvise): the data
  // stay in the page cache, but a reader that touches each tensor once keeps a small RSS.
  absl::Status ReadAsF32(const TensorInfo& info, float* out) const;

  // Writes the num_elements() values of `info` as bf16 bits to `out`: BF16 is copied, F32 is
  // rounded to nearest even, F16 goes through f32 (exact) then rounds. Errors as ReadAsF32.
  absl::Status ReadAsBF16(const TensorInfo& info, uint16_t* out) const;

 private:
  SafetensorsCheckpoint() = default;
  // The bytes of `info` or an error naming it.
  absl::StatusOr<absl::Span<const uint8_t>> CheckedData(const TensorInfo& info) const;

  std::vector<ReadOnlyFile> files_;
  std::vector<TensorInfo> tensors_;
  absl::flat_hash_map<std::string, size_t> by_name_;  // name → index in tensors_.
};

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_SAFETENSORS_H_
