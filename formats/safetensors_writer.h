// Streaming writer of safetensors files (header first, then tensor data in declared order, in
// chunks of any size, so a multi-GB checkpoint needs little RAM), and the writer of the HF shard
// index model.safetensors.index.json. Used by synthetic-checkpoint tools and tests; the output is
// read back by SafetensorsCheckpoint (format in safetensors.h).
#ifndef CORTIQ_FORMATS_SAFETENSORS_WRITER_H_
#define CORTIQ_FORMATS_SAFETENSORS_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "formats/dtype.h"
#include "formats/tensor_spec.h"

namespace cortiq {

// Writes one safetensors file. Create() writes the complete header; the tensors' data then
// follow in the order given, contiguous, without padding between tensors. The header is padded
// with spaces so that the data section starts at a multiple of 8 bytes (as the reference writer
// does). Move-only. Destroying a writer without Finish() flushes what was appended and closes
// the file; if tensor data are missing, readers reject it (its offsets pass the end of the file).
class SafetensorsWriter {
 public:
  // Creates (truncates) `path` and writes the header for `tensors` plus a `__metadata__` object
  // of `metadata` string pairs (omitted when empty). Errors (InvalidArgument): an empty or
  // duplicate name or "__metadata__", dtype kUnsupported, a negative dimension, a byte size that
  // overflows, a header over kMaxSafetensorsHeaderBytes; Internal if the file cannot be written.
  static absl::StatusOr<SafetensorsWriter> Create(
      const std::string& path, std::vector<TensorSpec> tensors,
      const std::vector<std::pair<std::string, std::string>>& metadata = {{"format", "pt"}});

  SafetensorsWriter(SafetensorsWriter&& other) noexcept;
  SafetensorsWriter& operator=(SafetensorsWriter&& other) noexcept;
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;
  ~SafetensorsWriter();

  // The tensor whose data are expected next, or nullptr when all data have been written.
  // Zero-byte tensors are skipped automatically: they need no data.
  const TensorSpec* current() const;
  // Bytes still expected for current() (0 when current() is nullptr).
  uint64_t current_remaining_bytes() const { return remaining_; }

  // Appends raw little-endian bytes of current(). A call may cover part of the tensor but never
  // more than current_remaining_bytes(). Error: InvalidArgument (naming the tensor) when it
  // would overflow the current tensor or everything is written; Internal on a write error.
  absl::Status Append(absl::Span<const uint8_t> bytes);

  // Appends f32 values to current(), converted to its dtype (F32 copied, BF16 and F16 rounded to
  // nearest even). Converts through a bounded buffer. Errors as Append.
  absl::Status AppendF32(absl::Span<const float> values);

  // Writes all bytes of tensor `name` at once; it must be current() and `bytes` exactly its
  // size (for a zero-byte tensor, any position and empty `bytes` are accepted).
  absl::Status WriteTensor(std::string_view name, absl::Span<const uint8_t> bytes);

  // Flushes and closes the file. Error: FailedPrecondition naming the first tensor whose data
  // are missing; Internal on a write or close error.
  absl::Status Finish();

  // Total file size in bytes: 8 + header + data.
  uint64_t file_size() const { return data_offset_ + data_size_; }

 private:
  SafetensorsWriter() = default;
  absl::Status WriteRaw(const uint8_t* data, uint64_t size);
  absl::Status Flush();
  void SkipEmptyTensors();
  void Close();

  std::string path_;
  int fd_ = -1;
  std::vector<TensorSpec> tensors_;
  absl::flat_hash_map<std::string, size_t> by_name_;
  size_t next_ = 0;              // index of current() in tensors_ (tensors_.size() when done).
  uint64_t remaining_ = 0;       // bytes still expected for tensors_[next_].
  uint64_t data_offset_ = 0;     // 8 + header length.
  uint64_t data_size_ = 0;       // sum of tensor sizes.
  std::vector<uint8_t> buffer_;  // pending small writes, flushed at kBufferBytes.
  bool finished_ = false;
};

// One shard of a sharded checkpoint: its file name (relative to the checkpoint directory) and
// its tensors, in write order.
struct SafetensorsShard {
  std::string file_name;
  std::vector<TensorSpec> tensors;
};

// Splits `tensors` (kept in order) into consecutive shards of at most `max_shard_bytes` data
// bytes each, named HF-style "model-00001-of-00003.safetensors". A tensor larger than the limit
// gets a shard of its own. Returns one shard for an empty list.
std::vector<SafetensorsShard> PlanSafetensorsShards(std::vector<TensorSpec> tensors,
                                                    uint64_t max_shard_bytes);

// Writes the HF index file `path` (normally <dir>/model.safetensors.index.json):
//   {"metadata": {"total_size": <sum of tensor data bytes>},
//    "weight_map": {"<tensor>": "<shard file name>", ...}}   (keys sorted)
// Errors: InvalidArgument for a tensor name in two shards, Internal if the file cannot be
// written.
absl::Status WriteSafetensorsIndex(const std::string& path,
                                   const std::vector<SafetensorsShard>& shards);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_SAFETENSORS_WRITER_H_
