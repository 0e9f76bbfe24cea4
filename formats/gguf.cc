// GGUF header validation, metadata values and tensor reads (see gguf.h).
#include "formats/gguf.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "formats/absl_compat.h"
#include "base/file_checks.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// A key or tensor name as an error message shows it: control and non-ASCII bytes hex-escaped
// (a NUL would cut the message, invalid UTF-8 garble it) and cut at 200 bytes (a key may have
// 64 KiB).
std::string ShownName(absl::string_view name) {
  constexpr size_t kShown = 200;
  return name.size() > kShown ? absl::StrCat(absl::CHexEscape(name.substr(0, kShown)), "...")
                              : absl::CHexEscape(name);
}


// ggml's GGML_MAX_DIMS.
constexpr uint32_t kMaxDims = 4;
// Bytes the header reader fetches per positional read.
constexpr uint64_t kReadChunkBytes = uint64_t{1} << 20;
// Smallest possible encodings, used to bound counts by the bytes left in the file: a key/value
// pair is at least a key length (8), a type (4) and a one-byte value; a tensor info at least a
// name length (8), n_dims (4), a type (4) and an offset (8).
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

constexpr GgmlTypeTraits kUnknownTraits{"", 0, 0};

// Block layouts from ggml-common.h (QK_K = 256).
struct TypeEntry {
  uint32_t number;
  GgmlTypeTraits traits;
};
constexpr TypeEntry kGgmlTypes[] = {
    {0, {"F32", 1, 4}},         {1, {"F16", 1, 2}},         {2, {"Q4_0", 32, 18}},
    {3, {"Q4_1", 32, 20}},      {6, {"Q5_0", 32, 22}},      {7, {"Q5_1", 32, 24}},
    {8, {"Q8_0", 32, 34}},      {9, {"Q8_1", 32, 36}},      {10, {"Q2_K", 256, 84}},
    {11, {"Q3_K", 256, 110}},   {12, {"Q4_K", 256, 144}},   {13, {"Q5_K", 256, 176}},
    {14, {"Q6_K", 256, 210}},   {15, {"Q8_K", 256, 292}},   {16, {"IQ2_XXS", 256, 66}},
    {17, {"IQ2_XS", 256, 74}},  {18, {"IQ3_XXS", 256, 98}}, {19, {"IQ1_S", 256, 50}},
    {20, {"IQ4_NL", 32, 18}},   {21, {"IQ3_S", 256, 110}},  {22, {"IQ2_S", 256, 82}},
    {23, {"IQ4_XS", 256, 136}}, {24, {"I8", 1, 1}},         {25, {"I16", 1, 2}},
    {26, {"I32", 1, 4}},        {27, {"I64", 1, 8}},        {28, {"F64", 1, 8}},
    {29, {"IQ1_M", 256, 56}},   {30, {"BF16", 1, 2}},       {34, {"TQ1_0", 256, 54}},
    {35, {"TQ2_0", 256, 66}},   {39, {"MXFP4", 32, 17}},    {40, {"NVFP4", 64, 36}},
    {41, {"Q1_0", 128, 18}},
};

// Size in bytes of one scalar of `type` (0 for string and array).
uint64_t ScalarSize(GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8:
    case GgufValueType::kI8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kU16:
    case GgufValueType::kI16:
      return 2;
    case GgufValueType::kU32:
    case GgufValueType::kI32:
    case GgufValueType::kF32:
      return 4;
    case GgufValueType::kU64:
    case GgufValueType::kI64:
    case GgufValueType::kF64:
      return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray:
      return 0;
  }
  return 0;
}

template <typename T>
T LoadLittleEndian(const char* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(value));  // cortiq targets little-endian hosts only.
  return value;
}


std::string ShapeString(const std::vector<int64_t>& ne) {
  std::string text = "[";
  for (size_t i = 0; i < ne.size(); ++i) absl::StrAppend(&text, i ? ", " : "", ne[i]);
  return text + "]";
}

}  // namespace

std::string_view GgufValueTypeName(GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8:
      return "u8";
    case GgufValueType::kI8:
      return "i8";
    case GgufValueType::kU16:
      return "u16";
    case GgufValueType::kI16:
      return "i16";
    case GgufValueType::kU32:
      return "u32";
    case GgufValueType::kI32:
      return "i32";
    case GgufValueType::kF32:
      return "f32";
    case GgufValueType::kBool:
      return "bool";
    case GgufValueType::kString:
      return "str";
    case GgufValueType::kArray:
      return "arr";
    case GgufValueType::kU64:
      return "u64";
    case GgufValueType::kI64:
      return "i64";
    case GgufValueType::kF64:
      return "f64";
  }
  return "?";
}

std::optional<int64_t> GgufValue::Int(uint64_t index) const {
  if (index >= count_) return std::nullopt;
  const uint64_t size = ScalarSize(type_);
  const char* p = bytes_.data() + index * size;
  switch (type_) {
    case GgufValueType::kU8:
      return LoadLittleEndian<uint8_t>(p);
    case GgufValueType::kI8:
      return LoadLittleEndian<int8_t>(p);
    case GgufValueType::kU16:
      return LoadLittleEndian<uint16_t>(p);
    case GgufValueType::kI16:
      return LoadLittleEndian<int16_t>(p);
    case GgufValueType::kU32:
      return LoadLittleEndian<uint32_t>(p);
    case GgufValueType::kI32:
      return LoadLittleEndian<int32_t>(p);
    case GgufValueType::kU64: {
      const uint64_t value = LoadLittleEndian<uint64_t>(p);
      if (value > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(value);
    }
    case GgufValueType::kI64:
      return LoadLittleEndian<int64_t>(p);
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::Float(uint64_t index) const {
  if (index >= count_) return std::nullopt;
  if (type_ == GgufValueType::kF32) return LoadLittleEndian<float>(bytes_.data() + index * 4);
  if (type_ == GgufValueType::kF64) return LoadLittleEndian<double>(bytes_.data() + index * 8);
  return std::nullopt;
}

std::optional<bool> GgufValue::Bool(uint64_t index) const {
  if (index >= count_ || type_ != GgufValueType::kBool) return std::nullopt;
  return bytes_[index] != 0;
}

std::optional<std::string_view> GgufValue::String(uint64_t index) const {
  if (index >= count_ || type_ != GgufValueType::kString) return std::nullopt;
  const uint64_t begin = index == 0 ? 0 : string_ends_[index - 1];
  return std::string_view(bytes_.data() + begin, string_ends_[index] - begin);
}

std::string GgufValue::TypeString() const {
  if (!is_array_) return std::string(GgufValueTypeName(type_));
  return absl::StrCat("arr[", ToAbsl(GgufValueTypeName(type_)), ",", count_, "]");
}

const GgmlTypeTraits* FindGgmlType(uint32_t type) {
  for (const TypeEntry& entry : kGgmlTypes) {
    if (entry.number == type) return &entry.traits;
  }
  return nullptr;
}

DType DTypeFromGgmlType(uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
      return DType::kF32;
    case GgmlType::kF16:
      return DType::kF16;
    case GgmlType::kBF16:
      return DType::kBF16;
    case GgmlType::kQ8_0:
      return DType::kQ8_0;
    case GgmlType::kQ4_0:
      return DType::kQ4_0;
    case GgmlType::kQ4_1:
      return DType::kQ4_1;
    case GgmlType::kQ5_0:
      return DType::kQ5_0;
    case GgmlType::kQ5_1:
      return DType::kQ5_1;
    case GgmlType::kQ2_K:
      return DType::kQ2_K;
    case GgmlType::kQ3_K:
      return DType::kQ3_K;
    case GgmlType::kQ4_K:
      return DType::kQ4_K;
    case GgmlType::kQ5_K:
      return DType::kQ5_K;
    case GgmlType::kQ6_K:
      return DType::kQ6_K;
    case GgmlType::kIQ4_NL:
      return DType::kIQ4_NL;
    case GgmlType::kIQ4_XS:
      return DType::kIQ4_XS;
    default:
      return DType::kUnsupported;
  }
}

uint64_t GgufTensorInfo::num_elements() const {
  uint64_t count = 1;
  for (int64_t dim : ne) count *= static_cast<uint64_t>(dim);
  return count;
}

std::vector<int64_t> GgufTensorInfo::hf_shape() const { return {ne.rbegin(), ne.rend()}; }

// Reads and validates the header of a GGUF file (see GgufFile::Open).
class GgufParser {
 public:
  explicit GgufParser(GgufFile* gguf) : gguf_(*gguf), file_(gguf->file_), path_(file_.path()) {}

  absl::Status Parse() {
    CORTIQ_RETURN_IF_ERROR(ParsePreamble());
    CORTIQ_RETURN_IF_ERROR(ParseKeyValues());
    CORTIQ_RETURN_IF_ERROR(ParseAlignment());
    CORTIQ_RETURN_IF_ERROR(ParseTensorInfos());
    return PlaceTensors();
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", what));
  }

  uint64_t remaining() const { return file_.size() - position_; }

  // Fails unless `n` more bytes exist in the file and fit under the header bound; called before
  // anything of size n is allocated.
  absl::Status Need(uint64_t n, absl::string_view what) const {
    if (n > remaining()) {
      return Error(absl::StrCat("truncated: ", what, " at byte ", position_, " needs ", n,
                                " bytes, but the file has only ", remaining(), " left"));
    }
    if (position_ + n > kMaxGgufHeaderBytes) {
      return Error(absl::StrCat("header too large: ", what, " at byte ", position_, " needs ", n,
                                " bytes, past the limit of ", kMaxGgufHeaderBytes,
                                " bytes for the metadata and tensor table"));
    }
    return absl::OkStatus();
  }

  // Copies the next `n` bytes to `out` through a chunked positional-read buffer.
  absl::Status Read(void* out, uint64_t n, absl::string_view what) {
    CORTIQ_RETURN_IF_ERROR(Need(n, what));
    auto* dst = static_cast<uint8_t*>(out);
    while (n > 0) {
      if (position_ < buffer_start_ || position_ >= buffer_start_ + buffer_.size()) {
        const uint64_t length = std::min(kReadChunkBytes, file_.size() - position_);
        buffer_.resize(length);
        buffer_start_ = position_;
        CORTIQ_RETURN_IF_ERROR(file_.ReadAt(position_, length, buffer_.data()));
      }
      const uint64_t offset = position_ - buffer_start_;
      const uint64_t take = std::min<uint64_t>(n, buffer_.size() - offset);
      std::memcpy(dst, buffer_.data() + offset, take);
      dst += take;
      n -= take;
      position_ += take;
    }
    return absl::OkStatus();
  }

  template <typename T>
  absl::Status ReadScalar(T* out, absl::string_view what) {
    return Read(out, sizeof(T), what);
  }

  // A u64 length and that many bytes, at most `max_bytes`.
  absl::Status ReadString(std::string* out, uint64_t max_bytes, absl::string_view what) {
    uint64_t length;
    CORTIQ_RETURN_IF_ERROR(ReadScalar(&length, absl::StrCat("the length of ", what)));
    if (length > max_bytes) {
      return Error(absl::StrCat(what, " at byte ", position_ - 8, " has length ", length,
                                ", more than the limit of ", max_bytes));
    }
    CORTIQ_RETURN_IF_ERROR(Need(length, what));
    out->resize(length);
    return Read(out->data(), length, what);
  }

  absl::Status ReadValueType(GgufValueType* out, absl::string_view what) {
    uint32_t raw;
    CORTIQ_RETURN_IF_ERROR(ReadScalar(&raw, what));
    if (raw > static_cast<uint32_t>(GgufValueType::kF64)) {
      return Error(absl::StrCat(what, " at byte ", position_ - 4, " is ", raw,
                                ", not a GGUF value type (0-12)"));
    }
    *out = static_cast<GgufValueType>(raw);
    return absl::OkStatus();
  }

  absl::Status ParsePreamble() {
    char magic[4];
    CORTIQ_RETURN_IF_ERROR(Read(magic, 4, "the magic"));
    if (std::memcmp(magic, "GGUF", 4) != 0) {
      std::string shown;
      for (char c : magic) {
        shown += (c >= 0x20 && c < 0x7f) ? c : '?';
      }
      return Error(absl::StrCat("bad magic \"", shown, "\": not a GGUF file (expected \"GGUF\")"));
    }
    uint32_t version;
    CORTIQ_RETURN_IF_ERROR(ReadScalar(&version, "the version"));
    if (version != 0 && (version & 0xffffu) == 0) {
      return Error(absl::StrCat("GGUF version ", version,
                                " is not supported (a big-endian file? only little-endian "
                                "versions 2 and 3 are)"));
    }
    if (version < 2 || version > kGgufVersion) {
      return Error(
          absl::StrCat("GGUF version ", version, " is not supported (versions 2 and 3 are)"));
    }
    gguf_.version_ = version;

    CORTIQ_RETURN_IF_ERROR(ReadScalar(&tensor_count_, "the tensor count"));
    CORTIQ_RETURN_IF_ERROR(ReadScalar(&kv_count_, "the key/value count"));
    if (kv_count_ > kMaxGgufKeyValues || kv_count_ > remaining() / kMinKeyValueBytes) {
      return Error(absl::StrCat("key/value count ", kv_count_, " is impossible: at most ",
                                std::min(kMaxGgufKeyValues, remaining() / kMinKeyValueBytes),
                                " fit in the ", remaining(), " bytes left (limit ",
                                kMaxGgufKeyValues, ")"));
    }
    if (tensor_count_ > kMaxGgufTensors || tensor_count_ > remaining() / kMinTensorInfoBytes) {
      return Error(absl::StrCat("tensor count ", tensor_count_, " is impossible: at most ",
                                std::min(kMaxGgufTensors, remaining() / kMinTensorInfoBytes),
                                " fit in the ", remaining(), " bytes left (limit ", kMaxGgufTensors,
                                ")"));
    }
    return absl::OkStatus();
  }

  absl::Status ParseKeyValues() {
    for (uint64_t i = 0; i < kv_count_; ++i) {
      GgufKeyValue kv;
      CORTIQ_RETURN_IF_ERROR(
          ReadString(&kv.key, kMaxGgufKeyBytes, absl::StrCat("the key of key/value ", i)));
      if (kv.key.empty()) return Error(absl::StrCat("key/value ", i, " has an empty key"));
      if (gguf_.metadata_index_.contains(kv.key)) {
        return Error(absl::StrCat("key ", ShownName(kv.key), " appears twice"));
      }
      CORTIQ_RETURN_IF_ERROR(ParseValue(ShownName(kv.key), &kv.value));
      gguf_.metadata_index_.emplace(kv.key, gguf_.metadata_.size());
      gguf_.metadata_.push_back(std::move(kv));
    }
    return absl::OkStatus();
  }

  // `key`: the key as ShownName shows it (used in messages only).
  absl::Status ParseValue(const std::string& key, GgufValue* value) {
    const std::string what = absl::StrCat("the value of key ", key);
    GgufValueType type = GgufValueType::kU8;
    CORTIQ_RETURN_IF_ERROR(ReadValueType(&type, absl::StrCat("the type of key ", key)));
    uint64_t count = 1;
    if (type == GgufValueType::kArray) {
      value->is_array_ = true;
      CORTIQ_RETURN_IF_ERROR(
          ReadValueType(&type, absl::StrCat("the element type of array key ", key)));
      if (type == GgufValueType::kArray) {
        return Error(absl::StrCat("key ", key, " is an array of arrays (not supported)"));
      }
      CORTIQ_RETURN_IF_ERROR(
          ReadScalar(&count, absl::StrCat("the element count of array key ", key)));
      const uint64_t min_element = type == GgufValueType::kString ? 8 : ScalarSize(type);
      if (count > kMaxGgufArrayElements || count > remaining() / min_element) {
        return Error(
            absl::StrCat("array key ", key, ": element count ", count, " is impossible: at most ",
                         std::min(kMaxGgufArrayElements, remaining() / min_element),
                         " elements of type ", ToAbsl(GgufValueTypeName(type)), " fit in the ",
                         remaining(), " bytes left (limit ", kMaxGgufArrayElements, ")"));
      }
    }
    value->type_ = type;
    value->count_ = count;
    if (type == GgufValueType::kString) {
      // Grown as read, not reserved from the count: a long array must be backed by bytes.
      std::string element;
      for (uint64_t i = 0; i < count; ++i) {
        CORTIQ_RETURN_IF_ERROR(
            ReadString(&element, UINT64_MAX,
                       value->is_array_ ? absl::StrCat("string ", i, " of key ", key) : what));
        value->bytes_ += element;
        value->string_ends_.push_back(value->bytes_.size());
      }
      return absl::OkStatus();
    }
    const uint64_t bytes = count * ScalarSize(type);  // count ≤ remaining / size: no overflow.
    CORTIQ_RETURN_IF_ERROR(Need(bytes, what));
    value->bytes_.resize(bytes);
    CORTIQ_RETURN_IF_ERROR(Read(value->bytes_.data(), bytes, what));
    if (type == GgufValueType::kBool) {
      for (uint64_t i = 0; i < count; ++i) {
        const auto byte = static_cast<uint8_t>(value->bytes_[i]);
        if (byte > 1) {
          return Error(absl::StrCat("key ", key, value->is_array_ ? absl::StrCat("[", i, "]") : "",
                                    ": bool byte ", byte, " is neither 0 nor 1"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status ParseAlignment() {
    const GgufValue* value = gguf_.FindValue("general.alignment");
    if (value == nullptr) return absl::OkStatus();
    if (value->is_array() || value->type() != GgufValueType::kU32) {
      return Error(
          absl::StrCat("general.alignment has type ", value->TypeString(), "; it must be a u32"));
    }
    const uint64_t alignment = static_cast<uint64_t>(*value->Int());
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return Error(absl::StrCat("general.alignment (", alignment, ") must be a power of two"));
    }
    gguf_.alignment_ = alignment;
    return absl::OkStatus();
  }

  absl::Status ParseTensorInfos() {
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      GgufTensorInfo info;
      CORTIQ_RETURN_IF_ERROR(
          ReadString(&info.name, kMaxGgufTensorNameBytes, absl::StrCat("the name of tensor ", i)));
      if (info.name.empty()) return Error(absl::StrCat("tensor ", i, " has an empty name"));
      if (gguf_.tensor_index_.contains(info.name)) {
        return Error(absl::StrCat("tensor ", ShownName(info.name), " appears twice"));
      }
      const std::string tensor = absl::StrCat("tensor ", ShownName(info.name));
      uint32_t n_dims;
      CORTIQ_RETURN_IF_ERROR(ReadScalar(&n_dims, absl::StrCat("n_dims of ", tensor)));
      if (n_dims > kMaxDims) {
        return Error(absl::StrCat(tensor, " has ", n_dims, " dimensions; at most ", kMaxDims,
                                  " are allowed"));
      }
      info.ne.resize(n_dims);
      uint64_t elements = 1;
      bool overflow = false;
      for (uint32_t d = 0; d < n_dims; ++d) {
        CORTIQ_RETURN_IF_ERROR(ReadScalar(&info.ne[d], absl::StrCat("ne[", d, "] of ", tensor)));
        if (info.ne[d] < 0) {
          return Error(absl::StrCat(tensor, ": ne[", d, "] = ", info.ne[d], " is negative"));
        }
        overflow = overflow ||
                   __builtin_mul_overflow(elements, static_cast<uint64_t>(info.ne[d]), &elements);
      }
      if (overflow || elements > static_cast<uint64_t>(INT64_MAX)) {
        return Error(absl::StrCat(tensor, ": shape ", ShapeString(info.ne),
                                  " has more than 2^63 - 1 elements"));
      }
      CORTIQ_RETURN_IF_ERROR(ReadScalar(&info.type, absl::StrCat("the type of ", tensor)));
      const GgmlTypeTraits* traits = FindGgmlType(info.type);
      if (traits == nullptr) {
        // Its block size is unknown too, so nothing after it can be read.
        return Error(absl::StrCat(tensor, " has unknown ggml type ", info.type,
                                  " (newer than this cortiq, or damaged); requantize the "
                                  "checkpoint with llama-quantize to a type cortiq reads, e.g. "
                                  "Q4_K_M or Q8_0"));
      }
      info.type_name = traits->name;
      info.dtype = DTypeFromGgmlType(info.type);
      const int64_t row = n_dims == 0 ? 1 : info.ne[0];
      if (row % traits->block_size != 0) {
        return Error(absl::StrCat(tensor, " of type ", ToAbsl(traits->name), " has ", row,
                                  " elements per row (ne[0]), not a multiple of its block size ",
                                  traits->block_size));
      }
      if (__builtin_mul_overflow(elements / traits->block_size, uint64_t{traits->type_size},
                                 &info.num_bytes) ||
          info.num_bytes > static_cast<uint64_t>(INT64_MAX)) {
        return Error(absl::StrCat(tensor, ": shape ", ShapeString(info.ne), " of type ",
                                  ToAbsl(traits->name), " takes more than 2^63 - 1 bytes"));
      }
      CORTIQ_RETURN_IF_ERROR(ReadScalar(&info.offset, absl::StrCat("the offset of ", tensor)));
      gguf_.tensor_index_.emplace(info.name, gguf_.tensors_.size());
      gguf_.tensors_.push_back(std::move(info));
    }
    return absl::OkStatus();
  }

  // Computes the data section start and checks each tensor's placement.
  absl::Status PlaceTensors() {
    const uint64_t alignment = gguf_.alignment_;
    const uint64_t header_end = position_;  // ≤ kMaxGgufHeaderBytes: no overflow below.
    const uint64_t data_start = (header_end + alignment - 1) / alignment * alignment;
    gguf_.data_section_offset_ = data_start;
    const uint64_t size = file_.size();
    for (GgufTensorInfo& info : gguf_.tensors_) {
      if (info.offset % alignment != 0) {
        return Error(absl::StrCat("tensor ", ShownName(info.name), ": offset ", info.offset,
                                  " is not a multiple of the alignment ", alignment));
      }
      if (data_start > size || info.offset > size - data_start ||
          info.num_bytes > size - data_start - info.offset) {
        return Error(absl::StrCat("tensor ", ShownName(info.name), ": data [", info.offset, ", +",
                                  info.num_bytes, ") relative to the data section at byte ",
                                  data_start, " pass the end of the file (", size,
                                  " bytes; truncated?)"));
      }
      info.data_offset = data_start + info.offset;
    }
    std::vector<size_t> order(gguf_.tensors_.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return gguf_.tensors_[a].data_offset < gguf_.tensors_[b].data_offset;
    });
    const GgufTensorInfo* previous = nullptr;
    for (size_t index : order) {
      const GgufTensorInfo& info = gguf_.tensors_[index];
      if (info.num_bytes == 0) continue;
      if (previous != nullptr && previous->data_offset + previous->num_bytes > info.data_offset) {
        return Error(absl::StrCat("tensor ", ShownName(info.name), ": data [", info.offset, ", ",
                                  info.offset + info.num_bytes, ") overlap tensor ", previous->name,
                                  " [", previous->offset, ", ",
                                  previous->offset + previous->num_bytes, ")"));
      }
      previous = &info;
    }
    return absl::OkStatus();
  }

  GgufFile& gguf_;
  const ReadOnlyFile& file_;
  const std::string path_;
  uint64_t position_ = 0;
  std::vector<uint8_t> buffer_;
  uint64_t buffer_start_ = 0;
  uint64_t tensor_count_ = 0;
  uint64_t kv_count_ = 0;
};

absl::StatusOr<GgufFile> GgufFile::Open(const std::string& path, bool map_data) {
  absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(path);
  if (!file.ok()) return file.status();
  GgufFile gguf(*std::move(file));
  {
    GgufParser parser(&gguf);
    CORTIQ_RETURN_IF_ERROR(parser.Parse());
  }
  if (map_data) CORTIQ_RETURN_IF_ERROR(gguf.file_.Map());
  return gguf;
}

const GgufValue* GgufFile::FindValue(std::string_view key) const {
  const auto it = metadata_index_.find(ToAbsl(key));
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  const auto it = tensor_index_.find(ToAbsl(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

absl::StatusOr<absl::Span<const uint8_t>> GgufFile::Data(const GgufTensorInfo& info) const {
  const absl::Span<const uint8_t> mapped = file_.mapped();
  if (file_.size() > 0 && mapped.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path(), ": tensor ", ShownName(info.name),
                     ": data are not mapped (the file was opened with map_data = false)"));
  }
  // Offsets were checked against the file size on open.
  return mapped.subspan(info.data_offset, info.num_bytes);
}

absl::StatusOr<std::vector<uint8_t>> GgufFile::CopyData(const GgufTensorInfo& info) const {
  std::vector<uint8_t> bytes;
  absl::StatusOr<absl::Span<const uint8_t>> data = Bytes(info, &bytes);
  if (!data.ok()) return data.status();
  if (data->data() != bytes.data()) bytes.assign(data->begin(), data->end());
  return bytes;
}

absl::StatusOr<absl::Span<const uint8_t>> GgufFile::Bytes(const GgufTensorInfo& info,
                                                          std::vector<uint8_t>* scratch) const {
  if (!file_.mapped().empty() || file_.size() == 0) return Data(info);
  scratch->resize(info.num_bytes);
  if (info.num_bytes > 0) {
    CORTIQ_RETURN_IF_ERROR(file_.ReadAt(info.data_offset, info.num_bytes, scratch->data()));
  }
  return absl::Span<const uint8_t>(*scratch);
}

absl::Status GgufFile::UnsupportedTypeError(const GgufTensorInfo& info) const {
  return absl::UnimplementedError(absl::StrCat(path(), ": unsupported type ",
                                               ToAbsl(info.type_name), " for tensor ", ShownName(info.name),
                                               " (", kReadableGgufTypes, " can be read)"));
}

absl::Status GgufFile::ConvertTensor(
    const GgufTensorInfo& info, absl::FunctionRef<void(const uint8_t*, uint64_t)> convert) const {
  if (info.dtype == DType::kUnsupported) return UnsupportedTypeError(info);
  std::vector<uint8_t> scratch;
  absl::StatusOr<absl::Span<const uint8_t>> data = Bytes(info, &scratch);
  if (!data.ok()) return data.status();
  convert(data->data(), info.num_elements());
  if (!file_.mapped().empty()) ReleaseMappedPages(data->data(), data->size());
  return absl::OkStatus();
}

absl::Status GgufFile::ReadAsF32(const GgufTensorInfo& info, float* out) const {
  return ConvertTensor(info, [&](const uint8_t* src, uint64_t count) {
    if (!FloatElementsToF32(info.dtype, src, count, out)) {
      DequantizeBlocks(info.dtype, src, count, out);  // kUnsupported: rejected by ConvertTensor
    }
  });
}

absl::Status GgufFile::ReadAsBF16(const GgufTensorInfo& info, uint16_t* out) const {
  return ConvertTensor(info, [&](const uint8_t* src, uint64_t count) {
    if (FloatElementsToBF16(info.dtype, src, count, out)) return;
    if (!IsBlockDType(info.dtype)) return;  // kUnsupported: rejected by ConvertTensor
    // One row at a time, so the f32 scratch is ne[0] values, not the whole tensor.
    const uint64_t row = info.ne.empty() ? 1 : static_cast<uint64_t>(info.ne[0]);
    const uint64_t row_bytes =
        row / DTypeBlockElements(info.dtype) * DTypeBlockBytes(info.dtype);
    // ne[0] comes from the file: a tensor with a zero dimension has no bytes to bound it
    // (ne [2^62, 0] is valid and empty), so the scratch row is sized only when some row
    // exists, and then row <= count <= 256 / 84 * num_bytes, inside the file.
    if (count == 0) return;
    std::vector<float> values(row);
    for (uint64_t r = 0; r < count / row; ++r) {
      DequantizeBlocks(info.dtype, src + r * row_bytes, row, values.data());
      for (uint64_t i = 0; i < row; ++i) out[r * row + i] = F32ToBf16(values[i]);
    }
  });
}

}  // namespace cortiq
