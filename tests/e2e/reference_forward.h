// An independent float64 forward of the Gemma-4 text decoder (spec §3, written from the formulas
// and never through the compiler, the plan or the ops/ kernels) over a checkpoint's own weight
// values: every tensor read as f32 by CheckpointReader::ReadAsF32 (a GGUF's blocks dequantized by
// the scalar references, which tests/ops checks bit for bit against llama.cpp), then widened to
// double. For a quantized file this is "the float64 forward of its own dequantized blocks" that
// the engine's logits must match within 1e-3. The LM head is the embedding table, or
// lm_head.weight (a GGUF's output.weight) when the config has tie_word_embeddings false.
#ifndef CORTIQ_TESTS_E2E_REFERENCE_FORWARD_H_
#define CORTIQ_TESTS_E2E_REFERENCE_FORWARD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "formats/checkpoint_reader.h"

namespace cortiq {

class ReferenceForward {
 public:
  // Reads every decoder tensor of the checkpoint at `path` (a GGUF file or safetensors
  // directory). Errors: the reader's; NotFound for an untied config without lm_head.weight.
  static absl::StatusOr<std::unique_ptr<ReferenceForward>> Open(const std::string& path);

  // Logits [T, vocab] (row t after tokens[0..t] at positions 0..t), in double, softcapped.
  std::vector<double> Logits(const std::vector<int32_t>& tokens) const;

 private:
  ReferenceForward(std::unique_ptr<CheckpointReader> reader, std::string prefix)
      : reader_(std::move(reader)), prefix_(std::move(prefix)) {}
  absl::Status Load();
  // Tensor `name` (relative to the text prefix) as double values; empty if absent.
  const std::vector<double>& W(const std::string& name) const;

  std::unique_ptr<CheckpointReader> reader_;
  std::string prefix_;
  absl::flat_hash_map<std::string, std::vector<double>> weights_;
};

}  // namespace cortiq

#endif  // CORTIQ_TESTS_E2E_REFERENCE_FORWARD_H_
