// Checkpoint → `cortiq` IR: validates the tensor list against the config, then spells out one
// decode step of the Gemma-4 E-series decoder (spec §3) op by op.
#include "compiler/import/importer.h"

#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_join.h"
#include "formats/checkpoint_reader.h"
#include "formats/gguf.h"
#include "base/file_util.h"
#include "formats/safetensors.h"
#include "compiler/dialect/CortiqDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// config.json files are a few kB; anything past this is not a config.
constexpr uint64_t kMaxConfigBytes = 16 << 20;

using mlir::Value;

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Builds the decode-step function. All tensors were validated before construction, so the
// member functions cannot fail.
class DecoderBuilder {
 public:
  DecoderBuilder(mlir::MLIRContext& context, const Gemma4TextConfig& config,
                 absl::flat_hash_map<std::string, TensorSpec> tensors, std::string prefix)
      : config_(config),
        tensors_(std::move(tensors)),
        prefix_(std::move(prefix)),
        builder_(&context),
        loc_(builder_.getUnknownLoc()) {}

  mlir::OwningOpRef<mlir::ModuleOp> Build(const std::string& source_name);

 private:
  mlir::RankedTensorType Vec(int64_t n) {
    return mlir::RankedTensorType::get({n}, builder_.getF32Type());
  }
  // Declares the checkpoint tensor `prefix_ + name` (once) and returns its symbol name.
  llvm::StringRef W(const std::string& name);
  Value Norm(Value x, const std::string& gain, int64_t group);
  Value NormNoGain(Value x, int64_t group);
  Value Rope(Value x, int64_t layer, Value position);
  Value Linear(Value x, const std::string& weight, int64_t out);
  Value Layer(int64_t l, Value h, Value per_layer_inputs, Value position);

  const Gemma4TextConfig& config_;
  absl::flat_hash_map<std::string, TensorSpec> tensors_;
  std::string prefix_;
  mlir::OpBuilder builder_;
  mlir::Location loc_;
  mlir::ModuleOp module_;
  mlir::Block* weights_block_ = nullptr;
  mlir::Operation* func_op_ = nullptr;
  absl::flat_hash_map<std::string, std::string> declared_;
};

llvm::StringRef DecoderBuilder::W(const std::string& name) {
  std::string full = name.rfind("lm_head.", 0) == 0 ? name : prefix_ + name;
  auto it = declared_.find(full);
  if (it != declared_.end()) return it->second;
  const TensorSpec& spec = tensors_.at(full);
  // Tensors in llama.cpp blocks (a GGUF's Q8_0, Q4_K, IQ4_XS ...) are declared with their logical f32
  // values and the block format (the dtype's ggml name, in the dialect's spelling), so lowering
  // can keep the blocks as they are.
  std::optional<StorageFormat> blocks;
  if (auto format = symbolizeStorageFormat(absl::AsciiStrToLower(std::string(DTypeName(spec.dtype))))) {
    if (storageFormatBlockSize(*format) > 1) blocks = *format;
  }
  mlir::Type element = spec.dtype == DType::kBF16  ? builder_.getBF16Type()
                       : spec.dtype == DType::kF16 ? builder_.getF16Type()
                                                   : builder_.getF32Type();
  mlir::OpBuilder::InsertionGuard guard(builder_);
  builder_.setInsertionPoint(func_op_);
  auto weight = builder_.create<WeightOp>(loc_, full,
                                          mlir::RankedTensorType::get(spec.shape, element));
  if (blocks) weight.setCheckpointFormatAttr(StorageFormatAttr::get(builder_.getContext(), *blocks));
  return declared_.emplace(full, full).first->second;
}

Value DecoderBuilder::Norm(Value x, const std::string& gain, int64_t group) {
  return builder_.create<RmsNormOp>(loc_, x.getType(), x, builder_.getAttr<mlir::FlatSymbolRefAttr>(
                                                              builder_.getStringAttr(W(gain))),
                                    builder_.getI64IntegerAttr(group),
                                    builder_.getF32FloatAttr(config_.rms_norm_eps));
}

Value DecoderBuilder::NormNoGain(Value x, int64_t group) {
  return builder_.create<RmsNormOp>(loc_, x.getType(), x, mlir::FlatSymbolRefAttr(),
                                    builder_.getI64IntegerAttr(group),
                                    builder_.getF32FloatAttr(config_.rms_norm_eps));
}

Value DecoderBuilder::Rope(Value x, int64_t layer, Value position) {
  const RopeParameters& rope = config_.rope(layer);
  RopeVariant variant =
      rope.rope_type == "proportional" ? RopeVariant::Proportional : RopeVariant::Default;
  return builder_.create<RopeOp>(loc_, x.getType(), x, position, variant,
                                 llvm::APFloat(rope.rope_theta),
                                 static_cast<uint64_t>(config_.layer_head_dim(layer)),
                                 static_cast<uint64_t>(config_.rotated_pairs(layer)));
}

Value DecoderBuilder::Linear(Value x, const std::string& weight, int64_t out) {
  return builder_.create<LinearOp>(loc_, Vec(out), x, W(weight));
}

Value DecoderBuilder::Layer(int64_t l, Value h, Value per_layer_inputs, Value position) {
  const std::string p = absl::StrCat("layers.", l, ".");
  const int64_t hidden = config_.hidden_size;
  const int64_t head_dim = config_.layer_head_dim(l);
  const int64_t heads = config_.num_attention_heads;
  const int64_t kv_heads = config_.num_key_value_heads;
  const int64_t per_layer = config_.hidden_size_per_layer_input;
  const bool sliding = config_.layer_types[l] == LayerType::kSliding;
  const int64_t ffn = tensors_.at(prefix_ + p + "mlp.gate_proj.weight").shape[0];

  // Attention block (spec §3.3 steps 1–5).
  Value x = Norm(h, p + "input_layernorm.weight", hidden);
  Value q = Linear(x, p + "self_attn.q_proj.weight", heads * head_dim);
  q = Norm(q, p + "self_attn.q_norm.weight", head_dim);
  q = Rope(q, l, position);
  const int64_t source = config_.kv_source_layer(l);
  const std::string cache = absl::StrCat("kv_cache_", source);
  if (!config_.is_kv_shared(l)) {
    {
      mlir::OpBuilder::InsertionGuard guard(builder_);
      builder_.setInsertionPoint(func_op_);
      builder_.create<KvCacheOp>(loc_, cache, static_cast<uint64_t>(l),
                                 sliding ? AttentionType::sliding : AttentionType::full,
                                 static_cast<uint64_t>(kv_heads),
                                 static_cast<uint64_t>(head_dim));
    }
    Value k = Linear(x, p + "self_attn.k_proj.weight", kv_heads * head_dim);
    k = Norm(k, p + "self_attn.k_norm.weight", head_dim);
    k = Rope(k, l, position);
    Value v = Linear(x, p + "self_attn.v_proj.weight", kv_heads * head_dim);
    v = NormNoGain(v, head_dim);
    builder_.create<KvAppendOp>(loc_, k, v, position, cache);
  }
  mlir::IntegerAttr window =
      sliding ? builder_.getI64IntegerAttr(config_.sliding_window) : mlir::IntegerAttr();
  Value o = builder_.create<AttentionOp>(
      loc_, Vec(heads * head_dim), q, position, static_cast<uint64_t>(l),
      sliding ? AttentionType::sliding : AttentionType::full, cache,
      static_cast<uint64_t>(heads), window, llvm::APFloat(1.0f));
  Value attn = Linear(o, p + "self_attn.o_proj.weight", hidden);
  attn = Norm(attn, p + "post_attention_layernorm.weight", hidden);
  h = builder_.create<AddOp>(loc_, h, attn);

  // MLP (step 6).
  Value y = Norm(h, p + "pre_feedforward_layernorm.weight", hidden);
  Value gate = builder_.create<GeluTanhOp>(loc_, Linear(y, p + "mlp.gate_proj.weight", ffn));
  Value up = Linear(y, p + "mlp.up_proj.weight", ffn);
  Value mlp = Linear(builder_.create<MulOp>(loc_, gate, up), p + "mlp.down_proj.weight", hidden);
  mlp = Norm(mlp, p + "post_feedforward_layernorm.weight", hidden);
  h = builder_.create<AddOp>(loc_, h, mlp);

  // Per-layer input injection (step 7): the gate reads h after the FFN residual.
  Value c = builder_.create<GeluTanhOp>(loc_, Linear(h, p + "per_layer_input_gate.weight", per_layer));
  Value u = builder_.create<SliceOp>(loc_, Vec(per_layer), per_layer_inputs,
                                     static_cast<uint64_t>(l * per_layer));
  c = builder_.create<MulOp>(loc_, c, u);
  Value injected = Linear(c, p + "per_layer_projection.weight", hidden);
  injected = Norm(injected, p + "post_per_layer_input_norm.weight", hidden);
  h = builder_.create<AddOp>(loc_, h, injected);

  // layer_scalar scales the whole residual stream (step 8).
  h = builder_.create<LayerScalarOp>(loc_, h, W(p + "layer_scalar"));
  return builder_.create<LayerOutputOp>(loc_, static_cast<uint64_t>(l), h);
}

mlir::OwningOpRef<mlir::ModuleOp> DecoderBuilder::Build(const std::string& source_name) {
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc_);
  module_ = *module;
  const int64_t hidden = config_.hidden_size;
  const int64_t layers = config_.num_hidden_layers;
  const int64_t per_layer = config_.hidden_size_per_layer_input;
  const int64_t vocab = config_.vocab_size;

  mlir::NamedAttrList model;
  model.append("source", builder_.getStringAttr(source_name));
  model.append("vocab_size", builder_.getI64IntegerAttr(vocab));
  model.append("hidden_size", builder_.getI64IntegerAttr(hidden));
  model.append("num_hidden_layers", builder_.getI64IntegerAttr(layers));
  model.append("num_kv_shared_layers", builder_.getI64IntegerAttr(config_.num_kv_shared_layers));
  model.append("sliding_window", builder_.getI64IntegerAttr(config_.sliding_window));
  model.append("max_position_embeddings",
               builder_.getI64IntegerAttr(config_.max_position_embeddings));
  module_->setAttr(CortiqDialect::getModelAttrName(), builder_.getDictionaryAttr(model));

  builder_.setInsertionPointToEnd(module_.getBody());
  auto i32 = builder_.getI32Type();
  auto func = builder_.create<mlir::func::FuncOp>(
      loc_, CortiqDialect::getDecodeStepFunctionName(), builder_.getFunctionType({i32, i32}, {Vec(vocab)}));
  func_op_ = func;
  mlir::Block* entry = func.addEntryBlock();
  builder_.setInsertionPointToStart(entry);
  Value token = entry->getArgument(0);
  Value position = entry->getArgument(1);

  // Token embedding × sqrt(hidden_size) (spec §3.1; exact f32 as llama.cpp / f32 HF).
  Value e = builder_.create<EmbeddingOp>(loc_, Vec(hidden), token, W("embed_tokens.weight"),
                                         llvm::APFloat(std::sqrt(static_cast<float>(hidden))));
  // Per-layer inputs (spec §3.2): project the scaled embedding, × hidden_size^-1/2, per-layer
  // RMS norm, add the table row × sqrt(P), × 2^-1/2.
  Value z = Linear(e, "per_layer_model_projection.weight", layers * per_layer);
  z = builder_.create<ScaleOp>(loc_, z, llvm::APFloat(static_cast<float>(1.0 / std::sqrt(static_cast<double>(hidden)))));
  z = Norm(z, "per_layer_projection_norm.weight", per_layer);
  Value r = builder_.create<EmbeddingOp>(
      loc_, Vec(layers * per_layer), token, W("embed_tokens_per_layer.weight"),
      llvm::APFloat(static_cast<float>(std::sqrt(static_cast<double>(per_layer)))));
  Value u = builder_.create<AddOp>(loc_, z, r);
  u = builder_.create<ScaleOp>(loc_, u, llvm::APFloat(static_cast<float>(1.0 / std::sqrt(2.0))));

  Value h = e;
  for (int64_t l = 0; l < layers; ++l) h = Layer(l, h, u, position);

  // Head (spec §3.4): final norm, tied LM head on the raw table, softcap.
  Value hf = Norm(h, "norm.weight", hidden);
  llvm::StringRef table =
      config_.tie_word_embeddings ? W("embed_tokens.weight") : W("lm_head.weight");
  Value logits = builder_.create<LmHeadOp>(loc_, Vec(vocab), hf, table);
  if (config_.final_logit_softcapping) {
    logits = builder_.create<SoftcapOp>(
        loc_, logits, llvm::APFloat(static_cast<float>(*config_.final_logit_softcapping)));
  }
  builder_.create<mlir::func::ReturnOp>(loc_, logits);
  return module;
}

}  // namespace

void LoadCortiqDialects(mlir::MLIRContext& context) {
  context.loadDialect<CortiqDialect, mlir::func::FuncDialect>();
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ImportGemma4Text(
    mlir::MLIRContext& context, const Gemma4TextConfig& config,
    const std::vector<TensorSpec>& tensors, const std::string& source_name) {
  LoadCortiqDialects(context);
  absl::flat_hash_map<std::string, TensorSpec> by_name;
  for (const TensorSpec& t : tensors) by_name[t.name] = t;

  std::string prefix;
  if (by_name.contains(absl::StrCat(kMultimodalTextPrefix, "embed_tokens.weight"))) {
    prefix = kMultimodalTextPrefix;
  } else if (by_name.contains(absl::StrCat(kTextOnlyPrefix, "embed_tokens.weight"))) {
    prefix = kTextOnlyPrefix;
  } else {
    return absl::NotFoundError(absl::StrCat(
        source_name, ": no text decoder found: neither '", kMultimodalTextPrefix,
        "embed_tokens.weight' nor '", kTextOnlyPrefix, "embed_tokens.weight' is present"));
  }

  // Expected tensors, with each layer's FFN width taken from its gate_proj (E2B double-wide MLP).
  std::vector<TensorSpec> expected = Gemma4TextTensors(config, DType::kF32, prefix);
  for (TensorSpec& spec : expected) {
    const bool is_mlp = absl::EndsWith(spec.name, "mlp.gate_proj.weight") ||
                        absl::EndsWith(spec.name, "mlp.up_proj.weight") ||
                        absl::EndsWith(spec.name, "mlp.down_proj.weight");
    if (!is_mlp) continue;
    std::string gate_name = spec.name.substr(0, spec.name.rfind("mlp.")) + "mlp.gate_proj.weight";
    auto gate = by_name.find(gate_name);
    if (gate == by_name.end() || gate->second.shape.size() != 2) continue;
    int64_t width = gate->second.shape[0];
    // The tensors decide between intermediate_size and the double-wide 2 x intermediate_size
    // (E2B's KV-shared layers, whatever use_double_wide_mlp says); anything else contradicts
    // the config.
    if (width != config.intermediate_size && width != 2 * config.intermediate_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          source_name, ": tensor '", gate_name, "' has ", width,
          " rows, but intermediate_size is ", config.intermediate_size, " (expected it or ",
          2 * config.intermediate_size, ")"));
    }
    if (absl::EndsWith(spec.name, "down_proj.weight")) {
      spec.shape[1] = width;
    } else {
      spec.shape[0] = width;
    }
  }
  for (const TensorSpec& spec : expected) {
    auto it = by_name.find(spec.name);
    if (it == by_name.end()) {
      return absl::NotFoundError(
          absl::StrCat(source_name, ": tensor '", spec.name, "' is missing"));
    }
    if (it->second.shape != spec.shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          source_name, ": tensor '", spec.name, "' has shape ", ShapeString(it->second.shape),
          " but the config implies ", ShapeString(spec.shape)));
    }
    if (it->second.dtype == DType::kUnsupported) {
      return absl::InvalidArgumentError(absl::StrCat(
          source_name, ": tensor '", spec.name, "' has an unsupported dtype (F32, BF16, F16 and llama.cpp's ", kReadableGgufTypes, " are)"));
    }
  }
  // A decoder tensor the config does not imply (a bias, a norm of a newer variant, a layer
  // beyond num_hidden_layers) would change the model's numbers: ignoring it would run a
  // different model. The exception is what the official checkpoints ship for KV-shared layers
  // and never read (spec §2.1: their k/v projections and norms). Tensors outside the decoder's
  // prefix, and the vision and audio parts of a multimodal checkpoint, are not the decoder's.
  absl::flat_hash_set<std::string> expected_names;
  for (const TensorSpec& spec : expected) expected_names.insert(spec.name);
  const int64_t first_shared = config.num_hidden_layers - config.num_kv_shared_layers;
  for (const TensorSpec& t : tensors) {
    if (!absl::StartsWith(t.name, prefix) || expected_names.contains(t.name)) continue;
    absl::string_view rest = absl::string_view(t.name).substr(prefix.size());
    // Under the text-only prefix "model." the other parts sit beside the decoder's tensors;
    // under "model.language_model." nothing but the decoder does.
    if (prefix == kTextOnlyPrefix &&
        (absl::StartsWith(rest, "vision_tower.") || absl::StartsWith(rest, "audio_tower.") ||
         absl::StartsWith(rest, "embed_vision.") || absl::StartsWith(rest, "embed_audio."))) {
      continue;
    }
    int64_t layer = -1;
    if (absl::ConsumePrefix(&rest, "layers.")) {
      const size_t dot = rest.find('.');
      if (dot != absl::string_view::npos && !absl::SimpleAtoi(rest.substr(0, dot), &layer)) {
        layer = -1;
      }
      if (dot != absl::string_view::npos) rest.remove_prefix(dot + 1);
    }
    const bool shared_kv = layer >= first_shared && layer < config.num_hidden_layers &&
                           (rest == "self_attn.k_proj.weight" || rest == "self_attn.v_proj.weight" ||
                            rest == "self_attn.k_norm.weight" || rest == "self_attn.v_norm.weight");
    if (!shared_kv) {
      // The name as the file has it, escaped (a NUL or a control byte would cut or garble the
      // message) and cut at 200 bytes.
      const std::string shown = absl::CHexEscape(
          t.name.size() > 200 ? absl::StrCat(t.name.substr(0, 200), "...") : t.name);
      return absl::InvalidArgumentError(absl::StrCat(
          source_name, ": tensor '", shown, "' is not part of the Gemma 4 E-series text decoder "
          "its config describes; refusing the checkpoint rather than running the model without "
          "it"));
    }
  }
  DecoderBuilder builder(context, config, std::move(by_name), prefix);
  mlir::OwningOpRef<mlir::ModuleOp> module = builder.Build(source_name);
  if (mlir::failed(mlir::verify(*module))) {
    return absl::InternalError(
        absl::StrCat(source_name, ": the imported module does not verify (see diagnostics)"));
  }
  return module;
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ImportCheckpoint(mlir::MLIRContext& context,
                                                                  const std::string& checkpoint_dir,
                                                                  bool config_only) {
  if (config_only && IsRegularFile(checkpoint_dir)) {
    // A config file given directly (e.g. tests/data/configs/e4b.json).
    CORTIQ_ASSIGN_OR_RETURN(std::string text, ReadFileToString(checkpoint_dir, kMaxConfigBytes));
    CORTIQ_ASSIGN_OR_RETURN(Gemma4TextConfig config,
                            ParseGemma4TextConfig(text, checkpoint_dir));
    return ImportGemma4Text(context, config, Gemma4TextTensors(config, DType::kBF16),
                            checkpoint_dir);
  }
  if (config_only && IsDirectory(checkpoint_dir)) {
    CORTIQ_ASSIGN_OR_RETURN(Gemma4TextConfig config, LoadGemma4TextConfig(checkpoint_dir));
    return ImportGemma4Text(context, config, Gemma4TextTensors(config, DType::kBF16),
                            JoinPath(checkpoint_dir, "config.json"));
  }
  // A safetensors directory or a GGUF file; headers only.
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> checkpoint,
                          OpenCheckpoint(checkpoint_dir, /*map_data=*/false));
  if (config_only) {
    return ImportGemma4Text(context, checkpoint->config(),
                            Gemma4TextTensors(checkpoint->config(), DType::kBF16),
                            checkpoint->source());
  }
  // A tensor the decoder reads in a type cortiq cannot load (GGUF K-quants, I8, ...): name the
  // stored type, which the TensorSpec list no longer carries.
  absl::flat_hash_set<std::string> needed;
  for (const char* prefix : {kMultimodalTextPrefix, kTextOnlyPrefix}) {
    for (const TensorSpec& spec : Gemma4TextTensors(checkpoint->config(), DType::kF32, prefix)) {
      needed.insert(spec.name);
    }
  }
  for (const TensorSpec& spec : checkpoint->tensors()) {
    if (spec.dtype == DType::kUnsupported && needed.contains(spec.name)) {
      // Both names: the file's (a GGUF's "blk.0.ffn_down.weight") and the HF one.
      const std::string stored = checkpoint->StoredName(spec.name);
      return absl::InvalidArgumentError(absl::StrCat(
          checkpoint->source(), ": unsupported type ", checkpoint->StoredTypeName(spec.name),
          " for tensor '", stored, "'", stored == spec.name ? "" : absl::StrCat(" (", spec.name, ")"),
          " (", kReadableGgufTypes, " are supported)"));
    }
  }
  return ImportGemma4Text(context, checkpoint->config(), checkpoint->tensors(),
                          checkpoint->source());
}

}  // namespace cortiq
