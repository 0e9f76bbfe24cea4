// Reader of GGUF files (llama.cpp's model format, versions 2 and 3): the metadata key/value
// pairs, the tensor table, and the tensor data (mmapped), all validated on open.
//
// File layout (ggml/include/gguf.h, ggml/src/gguf.cpp), all integers little-endian:
//
//     "GGUF"  u32 version  u64 tensor_count  u64 kv_count
//     kv_count × { string key, u32 value_type, value }
//     tensor_count × { string name, u32 n_dims, n_dims × i64 ne, u32 ggml_type, u64 offset }
//     padding to `general.alignment` (default 32)
//     data section: each tensor at data_start + offset (offsets are multiples of the alignment)
//
// A string is a u64 byte length then the bytes (no terminator). A value is a scalar of its type,
// or for an array: u32 element type, u64 count, count elements. `ne` is ggml's dimension order,
// fastest-varying first (the reverse of the PyTorch/HF shape). A tensor row of ne[0] elements
// is ne[0] / block_size blocks of type_size bytes, with no padding between rows.
#ifndef CORTIQ_FORMATS_GGUF_H_
#define CORTIQ_FORMATS_GGUF_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "formats/dtype.h"
#include "base/file_util.h"

namespace cortiq {

// The version this reader is written against; version 2 has the same layout and is accepted
// too. Version 1 (32-bit counts) is rejected, as llama.cpp does.
inline constexpr uint32_t kGgufVersion = 3;

// Alignment of the data section and of each tensor offset when `general.alignment` is absent.
inline constexpr uint64_t kGgufDefaultAlignment = 32;

// Bounds on what a file may make the reader allocate. Every count and length is also bounded by
// the bytes left in the file, so a short hostile file cannot request a large allocation; these
// bound what a large one can.
//
// The header (everything before the data section): 256 MiB. A Gemma-4 GGUF's is at most a few
// tens of MB, nearly all of it the tokenizer (262,144 tokens with scores, types and merges).
inline constexpr uint64_t kMaxGgufHeaderBytes = uint64_t{256} << 20;
// Tensors in one file: 100,000 (an E4B text decoder has ~700; the same bound as
// kMaxSafetensorsTensors), and key/value pairs: 100,000 (real files have ~40).
inline constexpr uint64_t kMaxGgufTensors = 100'000;
inline constexpr uint64_t kMaxGgufKeyValues = 100'000;
// Elements of one array value: 2^24 (a tokenizer's merges list is ~500k).
inline constexpr uint64_t kMaxGgufArrayElements = uint64_t{1} << 24;
// Bytes of a key: 65,535 (the GGUF specification's limit); of a tensor name: 63 (ggml's
// GGML_MAX_NAME − 1, which llama.cpp enforces).
inline constexpr uint64_t kMaxGgufKeyBytes = 65'535;
inline constexpr uint64_t kMaxGgufTensorNameBytes = 63;

// Types of metadata values (gguf.h `enum gguf_type`), with their on-disk numbers.
enum class GgufValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// Lower-case name of `type` as gguf.cpp prints it: "u8", "i32", "f32", "bool", "str", "arr"...
std::string_view GgufValueTypeName(GgufValueType type);

// One metadata value: a scalar, or an array of scalars (arrays of arrays are rejected on open,
// as llama.cpp does). Element accessors return nullopt when the element's type is not of the
// kind asked for, or `index` is out of range.
class GgufValue {
 public:
  bool is_array() const { return is_array_; }
  // The scalar's type, or the array's element type (never kArray).
  GgufValueType type() const { return type_; }
  // 1 for a scalar, the element count for an array.
  uint64_t size() const { return count_; }

  // Element `index` (0 for a scalar) of an integer type (u8 … i64) as int64; nullopt for another
  // type or a u64 above 2^63 − 1.
  std::optional<int64_t> Int(uint64_t index = 0) const;
  // Element `index` of type f32 (widened exactly) or f64.
  std::optional<double> Float(uint64_t index = 0) const;
  // Element `index` of type bool.
  std::optional<bool> Bool(uint64_t index = 0) const;
  // Element `index` of type string (bytes as stored; GGUF strings are UTF-8 by convention).
  std::optional<std::string_view> String(uint64_t index = 0) const;

  // "u32", "str", "arr[bool,8]": the type as messages show it.
  std::string TypeString() const;

 private:
  friend class GgufParser;

  bool is_array_ = false;
  GgufValueType type_ = GgufValueType::kU8;
  uint64_t count_ = 0;
  // Numeric and bool elements: count_ × element size little-endian bytes. Strings: the bytes of
  // all elements back to back, element i ending at string_ends_[i].
  std::string bytes_;
  std::vector<uint64_t> string_ends_;
};

// One metadata key and its value, in file order.
struct GgufKeyValue {
  std::string key;
  GgufValue value;
};

// ggml tensor types (ggml.h `enum ggml_type`) that this reader knows the block layout of. F32,
// F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K .. Q6_K, IQ4_NL and IQ4_XS can be read; the others are listed (with their sizes checked)
// and give Unimplemented when read. Numbers absent here (4, 5, 31–33, 36–38: removed from ggml)
// and numbers above the last are rejected on open, as llama.cpp does.
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  kNVFP4 = 40,
  kQ1_0 = 41,
};

// Block layout of a ggml type: `block_size` weights take `type_size` bytes (1 and the element
// size for the plain types F32, F16, BF16, I8 …).
struct GgmlTypeTraits {
  std::string_view name;  // ggml's spelling: "F32", "Q8_0", "Q4_K", "IQ2_XXS", "BF16" …
  uint32_t block_size = 0;
  uint32_t type_size = 0;
};

// The traits of ggml type number `type`, or nullptr if this reader does not know it. Sizes are
// those of ggml-common.h (gguf-py's GGML_QUANT_SIZES agrees except for Q8_1, where it lists 40
// bytes; ggml's block_q8_1 is 36).
const GgmlTypeTraits* FindGgmlType(uint32_t type);

// The readable ggml types, for messages.
inline constexpr char kReadableGgufTypes[] =
    "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and "
    "IQ4_XS";

// The DType a ggml type is read as: F32, F16, BF16 and the readable block types of the same
// names; kUnsupported for the others.
DType DTypeFromGgmlType(uint32_t type);

// One tensor of a GGUF file.
struct GgufTensorInfo {
  std::string name;
  // ggml order, fastest-varying first, n_dims entries (0 to 4). The HF/PyTorch shape is the
  // reverse: ne = [H, V] is a [V, H] matrix.
  std::vector<int64_t> ne;
  uint32_t type = 0;                  // ggml type number (a key of FindGgmlType).
  std::string_view type_name;         // FindGgmlType(type)->name: "F32", "Q4_K" …
  DType dtype = DType::kUnsupported;  // DTypeFromGgmlType(type).
  uint64_t offset = 0;                // as stored: relative to the data section.
  uint64_t data_offset = 0;           // absolute byte offset in the file.
  uint64_t num_bytes = 0;             // (product(ne) / block_size) · type_size.

  // product(ne) (1 for n_dims = 0); fits in int64 (checked on open).
  uint64_t num_elements() const;
  // The HF/PyTorch shape: `ne` reversed.
  std::vector<int64_t> hf_shape() const;
};

// An open GGUF file: validated header, metadata and tensor table, and (with map_data) the
// mmapped data. Move-only; the mapping is released on destruction, which invalidates every span
// returned by Data().
class GgufFile {
 public:
  // Opens and validates `path`. The header is read with positional reads (it is never mapped),
  // so with `map_data` false nothing past the header is read at open; the data are then read
  // with positional reads on request (Data() fails, ReadAs*/CopyData work). The file is opened
  // with ReadOnlyFile::Open, which rejects anything but a regular file.
  //
  // Errors, all naming the file and what is wrong (the key, the tensor, the byte offset):
  // NotFound if it cannot be opened; InvalidArgument for: not a regular file; magic other than
  // "GGUF"; version 0, 1 or above 3 (a version with zero low 16 bits is reported as a probable
  // big-endian file); the file ending before the header does ("truncated: … at byte N"); a
  // header past kMaxGgufHeaderBytes; tensor or key counts above the kMaxGguf* bounds or above
  // what the remaining bytes could hold; a key empty, longer than kMaxGgufKeyBytes or repeated;
  // a value type outside 0–12, an array of arrays, an array longer than kMaxGgufArrayElements or
  // than the remaining bytes could hold, a bool byte other than 0 or 1, a string longer than the
  // remaining bytes; `general.alignment` not a u32 power of two; a tensor name empty, longer
  // than kMaxGgufTensorNameBytes or repeated; n_dims above 4; a negative dimension; an element
  // count or byte size overflowing int64; an unknown ggml type; ne[0] not a multiple of the
  // type's block size; an offset that is not a multiple of the alignment; data passing the end
  // of the file; two tensors' data overlapping.
  static absl::StatusOr<GgufFile> Open(const std::string& path, bool map_data = true);

  GgufFile(GgufFile&&) = default;
  GgufFile& operator=(GgufFile&&) = default;
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return file_.path(); }
  uint64_t file_size() const { return file_.size(); }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  // Absolute offset of the data section: the header end rounded up to the alignment.
  uint64_t data_section_offset() const { return data_section_offset_; }

  // All key/value pairs, in file order.
  const std::vector<GgufKeyValue>& metadata() const { return metadata_; }
  // The value of `key`, or nullptr.
  const GgufValue* FindValue(std::string_view key) const;

  // All tensors, in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr. The pointer stays valid while the file lives.
  const GgufTensorInfo* FindTensor(std::string_view name) const;

  // The bytes of `info` as stored, in place in the mapping (any type). Errors:
  // FailedPrecondition if the file was opened without map_data.
  absl::StatusOr<absl::Span<const uint8_t>> Data(const GgufTensorInfo& info) const;

  // A copy of the bytes of `info`, from the mapping or with a positional read (so it works
  // without map_data; meant for small tensors such as rope_freqs). Errors: Internal on an I/O
  // error.
  absl::StatusOr<std::vector<uint8_t>> CopyData(const GgufTensorInfo& info) const;

  // Writes the num_elements() values of `info` as f32 to `out`: F32 is copied, F16 and BF16 are
  // widened exactly, the block types are dequantized as llama.cpp's dequantize_row_<type> do
  // (DequantizeBlocks, ops/quantize*.h; exact in f32). Works with or without map_data; the
  // mapped pages of the tensor are dropped from this process afterwards (MADV_DONTNEED), as
  // SafetensorsCheckpoint does. Errors: Unimplemented "<file>: unsupported type IQ2_XXS for
  // tensor <name> (F32, F16, ... can be read)" for other types.
  absl::Status ReadAsF32(const GgufTensorInfo& info, float* out) const;

  // Writes the values of `info` as bf16 bits to `out`: BF16 is copied; F32, and F16 / the
  // block types through their exact f32 values, are rounded to nearest even. Errors as ReadAsF32.
  absl::Status ReadAsBF16(const GgufTensorInfo& info, uint16_t* out) const;

 private:
  friend class GgufParser;
  GgufFile(ReadOnlyFile file) : file_(std::move(file)) {}

  // The bytes of `info`: a view of the mapping, or a copy in `*scratch` without one.
  absl::StatusOr<absl::Span<const uint8_t>> Bytes(const GgufTensorInfo& info,
                                                  std::vector<uint8_t>* scratch) const;
  // The error for reading a tensor of a type other than F32/F16/BF16/Q8_0/Q4_0.
  absl::Status UnsupportedTypeError(const GgufTensorInfo& info) const;
  // ReadAsF32 / ReadAsBF16 around their conversion: rejects an unsupported type, gets the
  // tensor's bytes (mapped, or read into a scratch buffer), calls convert(bytes,
  // num_elements), then drops the mapped pages it touched.
  absl::Status ConvertTensor(const GgufTensorInfo& info,
                             absl::FunctionRef<void(const uint8_t*, uint64_t)> convert) const;

  ReadOnlyFile file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_section_offset_ = 0;
  std::vector<GgufKeyValue> metadata_;
  absl::flat_hash_map<std::string, size_t> metadata_index_;  // key → index in metadata_.
  std::vector<GgufTensorInfo> tensors_;
  absl::flat_hash_map<std::string, size_t> tensor_index_;  // name → index in tensors_.
};

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_GGUF_H_
