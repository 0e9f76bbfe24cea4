// The checkpoint tensors a Gemma-4 E-series text decoder reads, with the shapes its config
// implies (spec §2.1). Used to import from a config alone and to synthesize checkpoints.
#ifndef CORTIQ_COMPILER_IMPORT_GEMMA4_TENSORS_H_
#define CORTIQ_COMPILER_IMPORT_GEMMA4_TENSORS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "formats/model_config.h"
#include "formats/tensor_spec.h"

namespace cortiq {

// Prefix of the text decoder's tensors in the official multimodal checkpoints
// (Gemma4ForConditionalGeneration); a text-only Gemma4ForCausalLM export uses "model.".
inline constexpr char kMultimodalTextPrefix[] = "model.language_model.";
inline constexpr char kTextOnlyPrefix[] = "model.";

// Every tensor the decoder reads, in checkpoint order (globals, then layer by layer), named with
// `prefix` and typed `dtype`. KV-shared layers list no k_proj/v_proj/k_norm (they read their
// source's cache); `layer_scalar` is `[1]`. With untied embeddings `lm_head.weight` (no prefix
// beyond "") is listed too.
std::vector<TensorSpec> Gemma4TextTensors(const Gemma4TextConfig& config, DType dtype,
                                          const std::string& prefix = kMultimodalTextPrefix);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_IMPORT_GEMMA4_TENSORS_H_
