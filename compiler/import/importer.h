// Import of a Gemma-4 E-series checkpoint into the `cortiq` dialect: one function per decode
// step, `func.func @decode_step(%token: i32, %position: i32) -> tensor<vocab_size x f32>`.
#ifndef CORTIQ_COMPILER_IMPORT_IMPORTER_H_
#define CORTIQ_COMPILER_IMPORT_IMPORTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/model_config.h"
#include "compiler/import/gemma4_tensors.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace cortiq {

// Builds the decode-step module from a parsed config and the checkpoint's tensor list (names,
// dtypes and shapes; no data). The text decoder's tensors are found under
// "model.language_model." or, failing that, "model."; tensors outside that prefix, the vision
// and audio parts under it (vision_tower., audio_tower., embed_vision., embed_audio.) and the
// unused k/v projections and norms of KV-shared layers are ignored; any other tensor under the
// prefix that the config does not imply is refused. FFN widths come from the `mlp.gate_proj` shapes
// (E2B's double-wide MLP); every other shape must equal what the config implies.
// The formulas follow HF `Gemma4TextModel` (spec §3): embedding × sqrt(hidden_size) (exact f32),
// PLE (§3.2), per layer norms / q,k,v / RoPE / attention over the layer's own or its shared-KV
// source's cache (§3.3), the final norm, the tied LM head and the final softcap (§3.4).
//
// Errors (InvalidArgument / NotFound) name the tensor: a tensor missing, a decoder tensor the
// config does not imply (a bias, an unknown norm, a layer past num_hidden_layers), a shape that
// differs from the config, an MLP whose gate/up/down widths disagree, a dtype other than
// F32/BF16/F16 or llama.cpp's readable block types.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ImportGemma4Text(
    mlir::MLIRContext& context, const Gemma4TextConfig& config,
    const std::vector<TensorSpec>& tensors, const std::string& source_name);

// Reads a checkpoint's config and tensor headers (no weights) and imports: a directory with
// config.json + safetensors, or a GGUF file (arch gemma4; see formats/gguf_gemma4.h).
// With `config_only`, the tensors are not read (and `checkpoint_dir` may also name a config
// .json file directly): the shapes the config implies are used
// (bf16, the dtype of the official releases), so E2B/E4B graphs can be printed from a config.
// Errors: those of LoadGemma4TextConfig, SafetensorsCheckpoint::Open and ImportGemma4Text.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ImportCheckpoint(mlir::MLIRContext& context,
                                                                  const std::string& checkpoint_dir,
                                                                  bool config_only);

// Registers the dialects an imported module uses (cortiq, func) in `context`.
void LoadCortiqDialects(mlir::MLIRContext& context);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_IMPORT_IMPORTER_H_
