// One interface over the checkpoint formats cortiq reads: a Hugging Face directory
// (config.json + safetensors) or a llama.cpp GGUF file. Both give the Gemma-4 decoder config
// and the tensors under HF names and shapes, so the importer and the weight materializer need
// not know which format they read.
#ifndef CORTIQ_FORMATS_CHECKPOINT_READER_H_
#define CORTIQ_FORMATS_CHECKPOINT_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "formats/model_config.h"
#include "formats/tensor_spec.h"

namespace cortiq {

// A checkpoint opened for reading: config, tensor list, tensor data. Not thread-compatible
// beyond concurrent const calls on distinct tensors. Spans returned by RawData stay valid while
// the reader lives.
class CheckpointReader {
 public:
  virtual ~CheckpointReader();

  // The decoder's configuration (validated by ValidateGemma4TextConfig).
  virtual const Gemma4TextConfig& config() const = 0;

  // The tensors, under HF names ("model.language_model.layers.3.self_attn.q_proj.weight") with
  // HF shapes ([out, in] for a linear; GGUF's ne reversed) and their stored dtype: F32, BF16,
  // F16, a block type (Q8_0 .. IQ4_XS, formats/dtype.h), or kUnsupported (another safetensors
  // dtype or ggml type: listed, fails when read; StoredTypeName names it). A safetensors checkpoint lists every tensor of its files
  // (vision/audio towers too; the importer ignores them); a GGUF file lists its decoder tensors
  // (Gemma4TensorsFromGguf). Block-type tensors have a last dimension of whole blocks.
  virtual const std::vector<TensorSpec>& tensors() const = 0;

  // The entry of tensors() called `name`, or nullptr.
  virtual const TensorSpec* Find(const std::string& name) const = 0;

  // The type of tensor `name` as its file spells it: "F32", "BF16", "Q8_0", "Q4_K", "I8" …;
  // empty if there is no such tensor.
  virtual std::string StoredTypeName(const std::string& name) const = 0;

  // The name tensor `name` has in its file: the GGUF tensor name ("blk.0.ffn_down.weight") for
  // a GGUF file, `name` itself for safetensors; empty if there is no such tensor.
  virtual std::string StoredName(const std::string& name) const = 0;

  // Writes the tensor's product(shape) values as f32 to `out` (F32 copied, BF16/F16 widened,
  // block types dequantized exactly as llama.cpp does). Errors, naming the source and the
  // tensor: NotFound for an unknown name; Unimplemented for an unsupported type ("unsupported
  // type IQ2_XXS for tensor …"); FailedPrecondition when the safetensors data were not mapped (a GGUF file
  // is read with positional reads then).
  virtual absl::Status ReadAsF32(const std::string& name, float* out) const = 0;

  // Writes the tensor's values as bf16 bits to `out` (BF16 copied, the others rounded to
  // nearest even from their exact f32 values). Errors as ReadAsF32.
  virtual absl::Status ReadAsBF16(const std::string& name, uint16_t* out) const = 0;

  // The tensor's bytes as stored, in place in the mapping: TensorBytes(dtype, shape) bytes, e.g.
  // GGUF blocks to use without requantizing. Errors: NotFound, Unimplemented as
  // ReadAsF32; FailedPrecondition if opened with map_data = false.
  virtual absl::StatusOr<absl::Span<const uint8_t>> RawData(const std::string& name) const = 0;

  // What was opened, for messages: the directory or file path.
  virtual std::string source() const = 0;
};

// Opens the checkpoint at `path`:
// - a directory: config.json (LoadGemma4TextConfig) and model.safetensors or its sharded index
//   (SafetensorsCheckpoint::Open);
// - a file named *.gguf, or any file starting with the magic "GGUF": a GGUF file
//   (GgufFile::Open, Gemma4ConfigFromGguf, Gemma4TensorsFromGguf);
// - a *.safetensors file: that file, with the config.json beside it.
// With `map_data` false only headers are read (and GGUF's small rope_freqs.weight): enough for
// config() and tensors(); RawData then fails and safetensors ReadAs* fail.
//
// Errors: NotFound if `path` does not exist; InvalidArgument if it is none of the above; else
// those of the functions named above.
absl::StatusOr<std::unique_ptr<CheckpointReader>> OpenCheckpoint(const std::string& path,
                                                                 bool map_data);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_CHECKPOINT_READER_H_
