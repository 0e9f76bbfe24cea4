// Streaming safetensors writer and shard index writer (see safetensors_writer.h).
#include "formats/safetensors_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/absl_compat.h"
#include "formats/safetensors.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// Small appends (norm weights are a few hundred bytes) are gathered up to this size before a
// write(2); larger ones go straight to the file.
constexpr size_t kBufferBytes = size_t{1} << 20;
// AppendF32 converts at most this many values at a time (256 KiB of f32 output).
constexpr size_t kConvertChunk = size_t{1} << 16;

absl::Status WriteAll(int fd, const uint8_t* data, uint64_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
    }
    data += n;
    size -= static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<int> CreateFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  return fd;
}

}  // namespace

absl::StatusOr<SafetensorsWriter> SafetensorsWriter::Create(
    const std::string& path, std::vector<TensorSpec> tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata) {
  SafetensorsWriter writer;
  writer.path_ = path;
  // Validate the specs and lay the data out contiguously.
  std::vector<std::pair<uint64_t, uint64_t>> offsets;
  offsets.reserve(tensors.size());
  uint64_t end = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& spec = tensors[i];
    if (spec.name.empty() || spec.name == "__metadata__") {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor #", i, " has the reserved or empty name \"", spec.name, "\""));
    }
    if (!writer.by_name_.emplace(spec.name, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor ", spec.name, " is listed twice"));
    }
    if (spec.dtype == DType::kUnsupported) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor ", spec.name, ": dtype must be F32, BF16 or F16"));
    }
    uint64_t bytes = DTypeSize(spec.dtype);
    for (int64_t dim : spec.shape) {
      if (dim < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes)) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": tensor ", spec.name, ": dimensions must be >= 0 and their product fit"));
      }
    }
    if (__builtin_add_overflow(end, bytes, &end) || end > (uint64_t{1} << 62)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor ", spec.name, ": total data size overflows"));
    }
    offsets.emplace_back(end - bytes, end);
  }
  writer.data_size_ = end;

  std::string header;
  {
    llvm::raw_string_ostream stream(header);
    llvm::json::OStream json(stream);
    json.object([&] {
      if (!metadata.empty()) {
        json.attributeObject("__metadata__", [&] {
          for (const auto& [key, value] : metadata) json.attribute(key, value);
        });
      }
      for (size_t i = 0; i < tensors.size(); ++i) {
        json.attributeObject(tensors[i].name, [&] {
          json.attribute("dtype", std::string(DTypeName(tensors[i].dtype)));
          json.attributeArray("shape", [&] {
            for (int64_t dim : tensors[i].shape) json.value(dim);
          });
          json.attributeArray("data_offsets", [&] {
            json.value(offsets[i].first);
            json.value(offsets[i].second);
          });
        });
      }
    });
    stream.flush();
  }
  // Pad with spaces (valid JSON whitespace) so that the data section is 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');
  if (header.size() > kMaxSafetensorsHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header of ", header.size(),
                                                   " bytes exceeds the limit of ",
                                                   kMaxSafetensorsHeaderBytes));
  }
  writer.tensors_ = std::move(tensors);
  writer.data_offset_ = 8 + header.size();

  absl::StatusOr<int> fd = CreateFile(path);
  if (!fd.ok()) return fd.status();
  writer.fd_ = *fd;
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(header.size() >> (8 * i));
  CORTIQ_RETURN_IF_ERROR(writer.WriteRaw(length, sizeof(length)));
  CORTIQ_RETURN_IF_ERROR(
      writer.WriteRaw(reinterpret_cast<const uint8_t*>(header.data()), header.size()));
  writer.remaining_ = writer.tensors_.empty() ? 0 : TensorSpecNumBytes(writer.tensors_[0]);
  writer.SkipEmptyTensors();
  return writer;
}

SafetensorsWriter::SafetensorsWriter(SafetensorsWriter&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      tensors_(std::move(other.tensors_)),
      by_name_(std::move(other.by_name_)),
      next_(other.next_),
      remaining_(other.remaining_),
      data_offset_(other.data_offset_),
      data_size_(other.data_size_),
      buffer_(std::move(other.buffer_)),
      finished_(other.finished_) {}

SafetensorsWriter& SafetensorsWriter::operator=(SafetensorsWriter&& other) noexcept {
  if (this != &other) {
    Close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    tensors_ = std::move(other.tensors_);
    by_name_ = std::move(other.by_name_);
    next_ = other.next_;
    remaining_ = other.remaining_;
    data_offset_ = other.data_offset_;
    data_size_ = other.data_size_;
    buffer_ = std::move(other.buffer_);
    finished_ = other.finished_;
  }
  return *this;
}

SafetensorsWriter::~SafetensorsWriter() { Close(); }

void SafetensorsWriter::Close() {
  if (fd_ < 0) return;
  (void)Flush();  // Best effort: an unfinished file is incomplete anyway.
  ::close(fd_);
  fd_ = -1;
}

const TensorSpec* SafetensorsWriter::current() const {
  return next_ < tensors_.size() ? &tensors_[next_] : nullptr;
}

void SafetensorsWriter::SkipEmptyTensors() {
  while (next_ < tensors_.size() && remaining_ == 0) {
    ++next_;
    remaining_ = next_ < tensors_.size() ? TensorSpecNumBytes(tensors_[next_]) : 0;
  }
}

absl::Status SafetensorsWriter::Flush() {
  if (buffer_.empty()) return absl::OkStatus();
  absl::Status status = WriteAll(fd_, buffer_.data(), buffer_.size(), path_);
  buffer_.clear();
  return status;
}

absl::Status SafetensorsWriter::WriteRaw(const uint8_t* data, uint64_t size) {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": writer is closed"));
  }
  if (buffer_.size() + size <= kBufferBytes) {
    buffer_.insert(buffer_.end(), data, data + size);
    return absl::OkStatus();
  }
  CORTIQ_RETURN_IF_ERROR(Flush());
  return WriteAll(fd_, data, size, path_);
}

absl::Status SafetensorsWriter::Append(absl::Span<const uint8_t> bytes) {
  if (bytes.empty()) return absl::OkStatus();
  const TensorSpec* spec = current();
  if (spec == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": ", bytes.size(), " bytes appended after the data of all tensors"));
  }
  if (bytes.size() > remaining_) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": tensor ", spec->name, ": ", bytes.size(), " bytes appended but only ", remaining_,
        " remain of its ", TensorSpecNumBytes(*spec)));
  }
  CORTIQ_RETURN_IF_ERROR(WriteRaw(bytes.data(), bytes.size()));
  remaining_ -= bytes.size();
  SkipEmptyTensors();
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::AppendF32(absl::Span<const float> values) {
  std::vector<uint8_t> converted;
  while (!values.empty()) {
    const TensorSpec* spec = current();
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": ", values.size(), " values appended after the data of all tensors"));
    }
    const size_t element_size = DTypeSize(spec->dtype);
    // Never convert past the end of the current tensor; Append() reports the overflow.
    const size_t fit =
        static_cast<size_t>(std::min<uint64_t>(remaining_ / element_size, kConvertChunk));
    const size_t count = std::max<size_t>(1, std::min(values.size(), fit));
    converted.resize(count * element_size);
    for (size_t i = 0; i < count; ++i) {
      uint8_t* dst = converted.data() + i * element_size;
      if (spec->dtype == DType::kF32) {
        std::memcpy(dst, &values[i], 4);
      } else {
        const uint16_t bits =
            spec->dtype == DType::kBF16 ? F32ToBf16(values[i]) : F32ToF16(values[i]);
        std::memcpy(dst, &bits, 2);
      }
    }
    CORTIQ_RETURN_IF_ERROR(Append(converted));
    values.remove_prefix(count);
  }
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::WriteTensor(std::string_view name,
                                            absl::Span<const uint8_t> bytes) {
  const auto it = by_name_.find(ToAbsl(name));
  if (it == by_name_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": tensor ", ToAbsl(name), " is not in the header"));
  }
  const TensorSpec& spec = tensors_[it->second];
  if (bytes.empty() && TensorSpecNumBytes(spec) == 0) return absl::OkStatus();
  const TensorSpec* expected = current();
  if (expected != &spec || remaining_ != TensorSpecNumBytes(spec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": tensor ", ToAbsl(name), " written out of order; expected ",
        expected == nullptr ? std::string("no more data") : expected->name,
        expected != nullptr && remaining_ != TensorSpecNumBytes(*expected) ? " (partially written)"
                                                                           : ""));
  }
  if (bytes.size() != TensorSpecNumBytes(spec)) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": tensor ", ToAbsl(name), ": got ",
                                                   bytes.size(), " bytes, its shape needs ",
                                                   TensorSpecNumBytes(spec)));
  }
  return Append(bytes);
}

absl::Status SafetensorsWriter::Finish() {
  if (finished_) return absl::OkStatus();
  if (const TensorSpec* spec = current()) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": tensor ", spec->name,
                                                      " is missing ", remaining_, " of its ",
                                                      TensorSpecNumBytes(*spec), " bytes"));
  }
  CORTIQ_RETURN_IF_ERROR(Flush());
  const int fd = std::exchange(fd_, -1);
  if (fd >= 0 && ::close(fd) != 0) {
    return absl::InternalError(absl::StrCat(path_, ": close failed: ", std::strerror(errno)));
  }
  finished_ = true;
  return absl::OkStatus();
}

std::vector<SafetensorsShard> PlanSafetensorsShards(std::vector<TensorSpec> tensors,
                                                    uint64_t max_shard_bytes) {
  std::vector<SafetensorsShard> shards(1);
  uint64_t shard_bytes = 0;
  for (TensorSpec& spec : tensors) {
    const uint64_t bytes = TensorSpecNumBytes(spec);
    if (!shards.back().tensors.empty() && shard_bytes + bytes > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shard_bytes += bytes;
    shards.back().tensors.push_back(std::move(spec));
  }
  for (size_t i = 0; i < shards.size(); ++i) {
    shards[i].file_name = absl::StrFormat("model-%05d-of-%05d.safetensors", i + 1, shards.size());
  }
  return shards;
}

absl::Status WriteSafetensorsIndex(const std::string& path,
                                   const std::vector<SafetensorsShard>& shards) {
  std::map<std::string, std::string> weight_map;
  uint64_t total_size = 0;
  for (const SafetensorsShard& shard : shards) {
    for (const TensorSpec& spec : shard.tensors) {
      if (!weight_map.emplace(spec.name, shard.file_name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": tensor ", spec.name, " is in two shards"));
      }
      total_size += TensorSpecNumBytes(spec);
    }
  }
  std::string text;
  {
    llvm::raw_string_ostream stream(text);
    llvm::json::OStream json(stream, /*IndentSize=*/2);
    json.object([&] {
      json.attributeObject("metadata", [&] { json.attribute("total_size", total_size); });
      json.attributeObject("weight_map", [&] {
        for (const auto& [name, file] : weight_map) json.attribute(name, file);
      });
    });
    stream << "\n";
    stream.flush();
  }
  absl::StatusOr<int> fd = CreateFile(path);
  if (!fd.ok()) return fd.status();
  absl::Status status =
      WriteAll(*fd, reinterpret_cast<const uint8_t*>(text.data()), text.size(), path);
  if (::close(*fd) != 0 && status.ok()) {
    status = absl::InternalError(absl::StrCat(path, ": close failed: ", std::strerror(errno)));
  }
  return status;
}

}  // namespace cortiq
