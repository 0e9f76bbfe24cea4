// Fuzz target: a GGUF file → GgufFile::Open (header, every metadata value type, the tensor table,
// placement and overlap checks), with and without the data mapped; every metadata value through
// each accessor; every tensor read as f32, as bf16 and copied as stored; then the gemma4 key
// mapping (Gemma4ConfigFromGguf, Gemma4HfTensorName, Gemma4TensorsFromGguf) and the checkpoint
// reader over the same file (OpenCheckpoint: the Q8_0/Q4_0 block copies the compiler stores as
// they are, RawData, and the conversions). Invariants: errors name the file; accepted tensors lie
// inside the file, in the data section; the reader's tensors are the file's decoder tensors.
// Also the tokenizer.ggml.* keys (ReadGgufTokenizer: gemma4 BPE and llama SentencePiece), and a
// tokenizer built from what they give encoding and decoding a short text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/checkpoint_reader.h"
#include "formats/gguf.h"
#include "formats/gguf_gemma4.h"
#include "formats/gguf_tokenizer.h"
#include "runtime/text/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Element counts the harness allocates output buffers for: a file within libFuzzer's -max_len
// holds fewer unless the tensor is empty or of a type that cannot be read.
constexpr uint64_t kMaxElements = uint64_t{1} << 22;
// Tensors up to this size are also converted on the second paths (positional reads without the
// mapping, the checkpoint reader); larger ones only once, mapped: the conversion loops are most
// of an execution's time, and the paths differ only in how the bytes are fetched.
constexpr uint64_t kSmallElements = 1024;

using namespace cortiq;

void ReadEveryValue(const GgufFile& gguf) {
  for (const GgufKeyValue& kv : gguf.metadata()) {
    const GgufValue& v = kv.value;
    (void)v.TypeString();
    const uint64_t n = std::min<uint64_t>(v.size(), 64);
    for (uint64_t i = 0; i <= n; ++i) {  // one past the end: nullopt
      (void)v.Int(i);
      (void)v.Float(i);
      (void)v.Bool(i);
      (void)v.String(i);
    }
  }
}

void ReadEveryTensor(const GgufFile& gguf, bool mapped, size_t size) {
  for (const GgufTensorInfo& info : gguf.tensors()) {
    CORTIQ_FUZZ_CHECK(info.data_offset >= gguf.data_section_offset() &&
                          info.data_offset <= size && info.num_bytes <= size - info.data_offset,
                      "tensor ", info.name, " outside the data section");
    CORTIQ_FUZZ_CHECK(gguf.FindTensor(info.name) == &info, "FindTensor ", info.name);
    absl::StatusOr<absl::Span<const uint8_t>> data = gguf.Data(info);
    CORTIQ_FUZZ_CHECK(data.ok() == mapped, "Data of ", info.name);
    absl::StatusOr<std::vector<uint8_t>> copy = gguf.CopyData(info);
    CORTIQ_FUZZ_CHECK(copy.ok() && copy->size() == info.num_bytes, "CopyData of ", info.name);
    if (info.num_elements() > (mapped ? kMaxElements : kSmallElements)) continue;
    std::vector<float> f32(info.num_elements());
    std::vector<uint16_t> bf16(info.num_elements());
    const absl::Status a = gguf.ReadAsF32(info, f32.data());
    const absl::Status b = gguf.ReadAsBF16(info, bf16.data());
    CORTIQ_FUZZ_CHECK(a.code() == b.code(), a.ToString(), " vs ", b.ToString());
    CORTIQ_FUZZ_CHECK(a.ok() == (info.dtype != DType::kUnsupported), a.ToString());
  }
}

void ReadCheckpoint(const std::string& path) {
  absl::StatusOr<std::unique_ptr<CheckpointReader>> reader = OpenCheckpoint(path, true);
  fuzz::CheckNamesFile(reader.status(), path);
  if (!reader.ok()) return;
  for (const TensorSpec& spec : (*reader)->tensors()) {
    CORTIQ_FUZZ_CHECK((*reader)->Find(spec.name) == &spec, "Find ", spec.name);
    (void)(*reader)->StoredTypeName(spec.name);
    uint64_t elements = 1;
    for (int64_t d : spec.shape) elements *= static_cast<uint64_t>(d);
    absl::StatusOr<absl::Span<const uint8_t>> raw = (*reader)->RawData(spec.name);
    if (raw.ok() && spec.dtype != DType::kUnsupported) {
      CORTIQ_FUZZ_CHECK(raw->size() == TensorBytes(spec.dtype, spec.shape), "RawData size of ",
                        spec.name);
    }
    if (elements > kSmallElements) continue;
    std::vector<float> f32(elements);
    std::vector<uint16_t> bf16(elements);
    const absl::Status a = (*reader)->ReadAsF32(spec.name, f32.data());
    const absl::Status b = (*reader)->ReadAsBF16(spec.name, bf16.data());
    CORTIQ_FUZZ_CHECK(a.code() == b.code(), a.ToString(), " vs ", b.ToString());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file("gguf");
  file.Set(data, size);
  for (const bool map_data : {true, false}) {
    absl::StatusOr<GgufFile> gguf = GgufFile::Open(file.path(), map_data);
    fuzz::CheckNamesFile(gguf.status(), file.path());
    if (!gguf.ok()) return 0;
    ReadEveryValue(*gguf);
    ReadEveryTensor(*gguf, map_data && size > 0, size);
    if (!map_data) continue;
    absl::StatusOr<text::TokenizerSpec> spec = ReadGgufTokenizer(*gguf);
    if (spec.ok()) {
      absl::StatusOr<text::Tokenizer> tokenizer = text::Tokenizer::FromSpec(*spec);
      if (tokenizer.ok()) {
        absl::StatusOr<std::vector<text::TokenId>> ids =
            tokenizer->Encode("Hello world <bos> \xC3\xA9\xF0\x9F\x98\x80 a  b\n", {true});
        if (ids.ok()) (void)tokenizer->Decode(*ids);
      }
    }
    absl::StatusOr<Gemma4TextConfig> config = Gemma4ConfigFromGguf(*gguf);
    fuzz::CheckNamesFile(config.status(), file.path());
    for (const GgufTensorInfo& info : gguf->tensors()) {
      (void)Gemma4HfTensorName(info.name, config.ok() ? config->num_hidden_layers : 64);
    }
    if (!config.ok()) continue;
    for (const Gemma4GgufTensor& tensor : Gemma4TensorsFromGguf(*gguf, *config)) {
      CORTIQ_FUZZ_CHECK(tensor.info != nullptr && gguf->FindTensor(tensor.info->name) == tensor.info,
                        "tensor of ", tensor.spec.name);
    }
  }
  ReadCheckpoint(file.path());
  return 0;
}
