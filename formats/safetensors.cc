// Safetensors header validation, shard index resolution and tensor reads (see safetensors.h).
#include "formats/safetensors.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "formats/absl_compat.h"
#include "formats/json_util.h"
#include "llvm/Support/JSON.h"
#include "base/file_checks.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

constexpr char kSingleFileName[] = "model.safetensors";
constexpr char kIndexFileName[] = "model.safetensors.index.json";
// An index lists one short line per tensor (~100 bytes; a few hundred kB for a Gemma-4
// checkpoint). 16 MiB is far beyond any real one and keeps the memory of its parse (~12× the
// text, entry by entry) under ~200 MB.
constexpr uint64_t kMaxIndexBytes = uint64_t{16} << 20;
// Members of the index other than weight_map ("metadata": {"total_size": N}) are only checked to
// be valid JSON; llvm::json needs up to ~60× the text for them, hence this bound.
constexpr size_t kMaxIndexOtherMemberBytes = size_t{1} << 20;
// Members of the index's top-level object: "metadata" and "weight_map", with room for additions.
constexpr size_t kMaxIndexMembers = 64;

absl::Status TensorError(absl::string_view file_name, absl::string_view tensor,
                         absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file_name, ": tensor ", tensor, ": ", what));
}

// Reads a JSON array of non-negative integers (each at most 2^63 − 1).
bool ReadNonNegativeInts(const llvm::json::Value& value, std::vector<int64_t>* out) {
  const llvm::json::Array* array = value.getAsArray();
  if (array == nullptr) return false;
  out->clear();
  out->reserve(array->size());
  for (const llvm::json::Value& element : *array) {
    int64_t number;
    if (!JsonToInt64(element, &number) || number < 0) return false;
    out->push_back(number);
  }
  return true;
}

absl::StatusOr<TensorInfo> ParseEntry(const std::string& name, const llvm::json::Value& entry,
                                      uint64_t data_section_offset, uint64_t data_size,
                                      absl::string_view file_name, int file_index) {
  const llvm::json::Object* object = entry.getAsObject();
  if (object == nullptr) {
    return TensorError(file_name, name,
                       absl::StrCat("header entry must be an object, got ", JsonKindName(entry)));
  }
  TensorInfo info;
  info.name = name;
  info.file_index = file_index;

  const llvm::json::Value* dtype = object->get("dtype");
  const llvm::Optional<llvm::StringRef> dtype_name =
      dtype != nullptr ? dtype->getAsString() : llvm::None;
  if (!dtype_name) return TensorError(file_name, name, "\"dtype\" must be a string");
  info.dtype_name = dtype_name->str();
  info.dtype = DTypeFromName(info.dtype_name);

  const llvm::json::Value* shape = object->get("shape");
  if (shape == nullptr || !ReadNonNegativeInts(*shape, &info.shape)) {
    return TensorError(file_name, name,
                       "\"shape\" must be an array of non-negative integers below 2^63");
  }
  std::vector<int64_t> offsets;
  const llvm::json::Value* offsets_value = object->get("data_offsets");
  if (offsets_value == nullptr || !ReadNonNegativeInts(*offsets_value, &offsets) ||
      offsets.size() != 2) {
    return TensorError(file_name, name,
                       "\"data_offsets\" must be [begin, end], two non-negative integers");
  }
  const uint64_t begin = static_cast<uint64_t>(offsets[0]);
  const uint64_t end = static_cast<uint64_t>(offsets[1]);
  if (begin > end) {
    return TensorError(file_name, name,
                       absl::StrCat("data_offsets [", begin, ", ", end, "] has begin > end"));
  }
  if (end > data_size) {
    return TensorError(
        file_name, name,
        absl::StrCat("data_offsets [", begin, ", ", end, "] pass the end of the data section (",
                     data_size, " bytes; the file is truncated or the header is wrong)"));
  }

  uint64_t num_elements = 1;
  for (int64_t dim : info.shape) {
    if (__builtin_mul_overflow(num_elements, static_cast<uint64_t>(dim), &num_elements)) {
      return TensorError(file_name, name, "shape has more than 2^64 elements (overflow)");
    }
  }
  const size_t element_size = SafetensorsDTypeSize(info.dtype_name);
  if (element_size != 0) {
    uint64_t expected_bytes;
    if (__builtin_mul_overflow(num_elements, uint64_t{element_size}, &expected_bytes)) {
      return TensorError(file_name, name,
                         absl::StrCat("shape × ", info.dtype_name, " size overflows 2^64 bytes"));
    }
    if (expected_bytes != end - begin) {
      std::string shape_text;
      for (size_t i = 0; i < info.shape.size(); ++i) {
        absl::StrAppend(&shape_text, i == 0 ? "" : ", ", info.shape[i]);
      }
      return TensorError(file_name, name,
                         absl::StrCat("data_offsets [", begin, ", ", end, "] hold ", end - begin,
                                      " bytes, but shape [", shape_text, "] of ", info.dtype_name,
                                      " needs ", expected_bytes));
    }
  }
  info.data_offset = data_section_offset + begin;
  info.num_bytes = end - begin;
  return info;
}

// Checks the `__metadata__` entry: an object of strings (the format's rule, which the reference
// reader enforces). Its values are parsed one at a time.
absl::Status CheckMetadata(const JsonMember& metadata, absl::string_view file_name) {
  return ForEachJsonMember(
      metadata.value, file_name, "__metadata__", kMaxSafetensorsTensors,
      [&](const JsonMember& entry) -> absl::Status {
        const auto not_string = [&] {
          return absl::InvalidArgumentError(
              absl::StrCat(file_name, ": __metadata__[\"", entry.key, "\"] must be a string"));
        };
        // Reject other kinds before parsing: only a string is cheap to parse whatever its size.
        if (entry.value[0] != '"') return not_string();
        absl::StatusOr<llvm::json::Value> value =
            ParseJson(entry.value, absl::StrCat(file_name, ": __metadata__[\"", entry.key, "\"]"));
        if (!value.ok()) return value.status();
        if (!value->getAsString()) return not_string();
        return absl::OkStatus();
      });
}

// Checks that the non-empty byte ranges of `tensors` (sorted by data_offset) tile the data
// section [0, data_size) exactly, as the reference reader (huggingface/safetensors) requires.
// A hole is never harmless: a header length lowered by K into the header's space padding still
// leaves valid JSON, but moves every tensor's data K bytes early; the K bytes left over at the
// end of the data section are the only sign of it. Zero-size tensors occupy no bytes and are
// skipped (their offsets are checked against the data size by ParseEntry).
absl::Status CheckTiling(const std::vector<TensorInfo>& tensors, uint64_t data_section_offset,
                         uint64_t data_size, absl::string_view file_name) {
  uint64_t covered = 0;  // [0, covered) is tiled so far.
  const TensorInfo* previous = nullptr;
  for (const TensorInfo& info : tensors) {
    if (info.num_bytes == 0) continue;
    const uint64_t begin = info.data_offset - data_section_offset;
    const uint64_t end = begin + info.num_bytes;
    if (begin < covered) {
      // Sorted by begin, a range overlaps an earlier one iff it starts before the tiled end,
      // which is the previous range's end (the walk stops at the first overlap).
      return TensorError(
          file_name, info.name,
          absl::StrCat("data range [", begin, ", ", end, ") overlaps tensor ", previous->name, " [",
                       previous->data_offset - data_section_offset, ", ", covered, ")"));
    }
    if (begin > covered) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_name, ": bytes [", covered, ", ", begin,
          ") of the data section belong to no tensor (",
          previous == nullptr
              ? absl::StrCat("before tensor ", info.name)
              : absl::StrCat("between tensors ", previous->name, " and ", info.name),
          "); safetensors requires the tensors to cover the data section without holes"));
    }
    covered = end;
    previous = &info;
  }
  if (covered != data_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": bytes [", covered, ", ", data_size,
        ") of the data section belong to no tensor (",
        previous == nullptr ? std::string("the header lists no data")
                            : absl::StrCat("after the last tensor, ", previous->name),
        "); safetensors requires the tensors to cover the data section without holes: is the "
        "header length wrong, or were bytes appended to the file?"));
  }
  return absl::OkStatus();
}

// Parses the text of a model.safetensors.index.json into its weight_map (tensor name → shard
// file name, in file order). weight_map is walked entry by entry, so memory stays ~10× its text.
absl::Status ParseIndex(absl::string_view text, const std::string& index_path,
                        std::vector<std::pair<std::string, std::string>>* weight_map) {
  bool has_weight_map = false;
  CORTIQ_RETURN_IF_ERROR(ForEachJsonMember(
      text, index_path, "the index", kMaxIndexMembers,
      [&](const JsonMember& member) -> absl::Status {
        if (member.key != "weight_map") {
          if (member.value.size() > kMaxIndexOtherMemberBytes) {
            return absl::InvalidArgumentError(
                absl::StrCat(index_path, ": member \"", member.key, "\" is ", member.value.size(),
                             " bytes, more than the limit of ", kMaxIndexOtherMemberBytes));
          }
          return ParseJson(member.value, index_path).status();  // unused, but must be valid.
        }
        has_weight_map = true;
        return ForEachJsonMember(
            member.value, index_path, "weight_map", kMaxSafetensorsTensors,
            [&](const JsonMember& entry) -> absl::Status {
              const auto bad_shard = [&] {
                return absl::InvalidArgumentError(
                    absl::StrCat(index_path, ": weight_map[\"", entry.key,
                                 "\"] must be the file name of a shard in the same directory"));
              };
              // Only a string is cheap to parse whatever its size: check the kind first.
              if (entry.value[0] != '"') return bad_shard();
              absl::StatusOr<llvm::json::Value> value = ParseJson(entry.value, index_path);
              if (!value.ok()) return value.status();
              const llvm::Optional<llvm::StringRef> shard = value->getAsString();
              if (!shard || shard->empty() || shard->contains('/')) return bad_shard();
              weight_map->emplace_back(entry.key, shard->str());
              return absl::OkStatus();
            });
      }));
  if (!has_weight_map || weight_map->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        index_path, ": weight_map must be a non-empty object {tensor name: shard file}"));
  }
  return absl::OkStatus();
}

// Reads and parses the header of one safetensors file.
absl::StatusOr<std::vector<TensorInfo>> ReadHeader(const ReadOnlyFile& file, int file_index) {
  const std::string& path = file.path();
  if (file.size() < 8) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": truncated: the file has ", file.size(),
                     " bytes, fewer than the 8-byte header length of the safetensors format"));
  }
  uint8_t length_bytes[8];
  CORTIQ_RETURN_IF_ERROR(file.ReadAt(0, 8, length_bytes));
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | length_bytes[i];
  if (header_length > kMaxSafetensorsHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header length ", header_length, " exceeds the limit of ",
                     kMaxSafetensorsHeaderBytes, " bytes (not a safetensors file?)"));
  }
  if (header_length > file.size() - 8) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header length ", header_length, " is more than the ", file.size() - 8,
                     " bytes after the length field (truncated file?)"));
  }
  std::string header(header_length, '\0');
  CORTIQ_RETURN_IF_ERROR(file.ReadAt(8, header_length, header.data()));
  return ParseSafetensorsHeader(header, 8 + header_length, file.size(), path, file_index);
}

}  // namespace

uint64_t TensorInfo::num_elements() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

absl::StatusOr<std::vector<TensorInfo>> ParseSafetensorsHeader(std::string_view header_json_std,
                                                               uint64_t data_section_offset,
                                                               uint64_t file_size,
                                                               std::string_view file_name_std,
                                                               int file_index) {
  const absl::string_view header_json = ToAbsl(header_json_std);
  const absl::string_view file_name = ToAbsl(file_name_std);
  if (data_section_offset > file_size) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": data section offset ",
                                                   data_section_offset, " is past the file size ",
                                                   file_size));
  }
  const uint64_t data_size = file_size - data_section_offset;
  if (header_json.size() > kMaxSafetensorsHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": header of ", header_json.size(),
                                                   " bytes exceeds the limit of ",
                                                   kMaxSafetensorsHeaderBytes, " bytes"));
  }

  // The entries are parsed one at a time: llvm::json would need ~40× the header for the tree of
  // the whole header (each entry is an object, and each object at least 4 KiB), while the
  // TensorInfos and names kept here take ~4× the text of the smallest possible entries (27 MB
  // for 100,000 of them in 6 MB) and less for real ones.
  std::vector<TensorInfo> tensors;
  // The visitor stops at kMaxSafetensorsTensors + 1 tensors with its own message; the member
  // bound only needs to leave room for them and one __metadata__.
  CORTIQ_RETURN_IF_ERROR(ForEachJsonMember(
      header_json, file_name, "the safetensors header", kMaxSafetensorsTensors + 2,
      [&](const JsonMember& member) -> absl::Status {
        if (member.key == "__metadata__") return CheckMetadata(member, file_name);
        if (tensors.size() >= kMaxSafetensorsTensors) {
          return absl::InvalidArgumentError(
              absl::StrCat(file_name, ": the header lists more than ", kMaxSafetensorsTensors,
                           " tensors, the limit (a Gemma-4 checkpoint has a few thousand)"));
        }
        if (member.value.size() > kMaxSafetensorsEntryBytes) {
          return TensorError(
              file_name, member.key,
              absl::StrCat("header entry of ", member.value.size(), " bytes exceeds the limit of ",
                           kMaxSafetensorsEntryBytes, " bytes"));
        }
        absl::StatusOr<llvm::json::Value> entry =
            ParseJson(member.value, absl::StrCat(file_name, ": tensor ", member.key));
        if (!entry.ok()) return entry.status();
        absl::StatusOr<TensorInfo> info =
            ParseEntry(member.key, *entry, data_section_offset, data_size, file_name, file_index);
        if (!info.ok()) return info.status();
        tensors.push_back(*std::move(info));
        return absl::OkStatus();
      }));
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.data_offset != b.data_offset ? a.data_offset < b.data_offset : a.name < b.name;
  });
  CORTIQ_RETURN_IF_ERROR(CheckTiling(tensors, data_section_offset, data_size, file_name));
  return tensors;
}

absl::StatusOr<SafetensorsCheckpoint> SafetensorsCheckpoint::Open(const std::string& dir,
                                                                  bool map_data) {
  SafetensorsCheckpoint checkpoint;
  // Shard file name → file index, and the index's weight_map (empty for a single file).
  std::map<std::string, int> shard_index;
  std::vector<std::pair<std::string, std::string>> weight_map;
  std::string index_path;
  std::vector<std::string> paths;

  // Anything but a directory is taken as a single file: ReadOnlyFile::Open then reports a
  // missing path, or rejects a FIFO or device without blocking on it. Inside a directory,
  // existence decides for the same reason (a FIFO named model.safetensors is an error, not
  // "no model.safetensors").
  if (!IsDirectory(dir)) {
    paths.push_back(dir);
  } else if (PathExists(JoinPath(dir, kIndexFileName))) {
    index_path = JoinPath(dir, kIndexFileName);
    absl::StatusOr<std::string> text = ReadFileToString(index_path, kMaxIndexBytes);
    if (!text.ok()) return text.status();
    CORTIQ_RETURN_IF_ERROR(ParseIndex(*text, index_path, &weight_map));
    for (const auto& [name, shard] : weight_map) shard_index.emplace(shard, 0);
    for (auto& [shard, index] : shard_index) {
      index = static_cast<int>(paths.size());
      paths.push_back(JoinPath(dir, shard));
    }
  } else if (PathExists(JoinPath(dir, kSingleFileName))) {
    paths.push_back(JoinPath(dir, kSingleFileName));
  } else {
    return absl::NotFoundError(
        absl::StrCat(dir, ": no ", kSingleFileName, " or ", kIndexFileName, " found"));
  }

  for (size_t i = 0; i < paths.size(); ++i) {
    absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(paths[i]);
    if (!file.ok()) {
      if (index_path.empty()) return file.status();
      // Same code (NotFound for a missing shard, InvalidArgument for a FIFO), with the index.
      return absl::Status(file.status().code(),
                          absl::StrCat(index_path, ": shard ", paths[i],
                                       " cannot be opened: ", file.status().message()));
    }
    absl::StatusOr<std::vector<TensorInfo>> tensors = ReadHeader(*file, static_cast<int>(i));
    if (!tensors.ok()) return tensors.status();
    if (tensors->size() > kMaxSafetensorsTensors - checkpoint.tensors_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          paths[i], ": the checkpoint has more than ", kMaxSafetensorsTensors,
          " tensors with this shard, the limit (a Gemma-4 checkpoint has a few thousand)"));
    }
    if (map_data) CORTIQ_RETURN_IF_ERROR(file->Map());
    for (TensorInfo& info : *tensors) {
      const auto [it, inserted] =
          checkpoint.by_name_.emplace(info.name, checkpoint.tensors_.size());
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor ", info.name, " appears twice: in ",
                         paths[checkpoint.tensors_[it->second].file_index], " and in ", paths[i]));
      }
      checkpoint.tensors_.push_back(std::move(info));
    }
    checkpoint.files_.push_back(*std::move(file));
  }

  for (const auto& [name, shard] : weight_map) {
    const TensorInfo* info = checkpoint.Find(name);
    const int expected_file = shard_index.at(shard);
    if (info == nullptr || info->file_index != expected_file) {
      return absl::InvalidArgumentError(absl::StrCat("tensor ", name, " is listed in ", index_path,
                                                     " for shard ", paths[expected_file],
                                                     " but not found there"));
    }
  }
  return checkpoint;
}

const TensorInfo* SafetensorsCheckpoint::Find(std::string_view name) const {
  const auto it = by_name_.find(ToAbsl(name));
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::vector<std::string> SafetensorsCheckpoint::files() const {
  std::vector<std::string> paths;
  paths.reserve(files_.size());
  for (const ReadOnlyFile& file : files_) paths.push_back(file.path());
  return paths;
}

absl::Span<const uint8_t> SafetensorsCheckpoint::Data(const TensorInfo& info) const {
  if (info.file_index < 0 || static_cast<size_t>(info.file_index) >= files_.size()) return {};
  const absl::Span<const uint8_t> mapped = files_[info.file_index].mapped();
  if (info.data_offset > mapped.size() || info.num_bytes > mapped.size() - info.data_offset) {
    return {};
  }
  return mapped.subspan(info.data_offset, info.num_bytes);
}

absl::StatusOr<absl::Span<const uint8_t>> SafetensorsCheckpoint::CheckedData(
    const TensorInfo& info) const {
  const std::string file_name =
      info.file_index >= 0 && static_cast<size_t>(info.file_index) < files_.size()
          ? files_[info.file_index].path()
          : std::string("<no such file>");
  if (info.dtype == DType::kUnsupported) {
    return absl::UnimplementedError(absl::StrCat(file_name, ": tensor ", info.name, " has dtype ",
                                                 info.dtype_name,
                                                 "; only F32, BF16 and F16 can be read"));
  }
  uint64_t expected_bytes;
  if (__builtin_mul_overflow(info.num_elements(), uint64_t{DTypeSize(info.dtype)},
                             &expected_bytes) ||
      expected_bytes != info.num_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": tensor ", info.name, ": ",
                                                   info.num_bytes,
                                                   " bytes do not match its shape and dtype"));
  }
  const absl::Span<const uint8_t> data = Data(info);
  if (data.size() != info.num_bytes) {
    if (info.file_index >= 0 && static_cast<size_t>(info.file_index) < files_.size() &&
        files_[info.file_index].mapped().empty() && files_[info.file_index].size() > 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(file_name, ": tensor ", info.name,
                       ": data are not mapped (the checkpoint was opened with map_data = false)"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": tensor ", info.name, ": data range is outside the file"));
  }
  return data;
}

namespace {


}  // namespace

absl::Status SafetensorsCheckpoint::ReadAsF32(const TensorInfo& info, float* out) const {
  absl::StatusOr<absl::Span<const uint8_t>> data = CheckedData(info);
  if (!data.ok()) return data.status();
  const uint8_t* src = data->data();
  const uint64_t count = info.num_elements();
  // CheckedData rejects every dtype but F32/BF16/F16 (Q8_0/Q4_0 are GGUF-only).
  FloatElementsToF32(info.dtype, src, count, out);
  ReleaseMappedPages(src, data->size());
  return absl::OkStatus();
}

absl::Status SafetensorsCheckpoint::ReadAsBF16(const TensorInfo& info, uint16_t* out) const {
  absl::StatusOr<absl::Span<const uint8_t>> data = CheckedData(info);
  if (!data.ok()) return data.status();
  const uint8_t* src = data->data();
  const uint64_t count = info.num_elements();
  // CheckedData rejects every dtype but F32/BF16/F16 (Q8_0/Q4_0 are GGUF-only).
  FloatElementsToBF16(info.dtype, src, count, out);
  ReleaseMappedPages(src, data->size());
  return absl::OkStatus();
}

}  // namespace cortiq
