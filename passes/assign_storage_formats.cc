// assign-storage-formats: the format the artifact stores each cortiq.weight in, recorded before
// the other passes (see Passes.td for the policy).
#include "compiler/dialect/CortiqDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "passes/Passes.h"

namespace cortiq {
namespace {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

class AssignStorageFormatsPass : public AssignStorageFormatsBase<AssignStorageFormatsPass> {
 public:
  AssignStorageFormatsPass() = default;
  AssignStorageFormatsPass(std::optional<StorageFormat> weights_format,
                           std::optional<StorageFormat> tables_format, llvm::StringRef mix_name,
                           bool regroup_q4_0, bool regroup_q8_0, bool regroup_q4_k,
                           bool regroup_q5_k) {
    if (weights_format) weights = stringifyStorageFormat(*weights_format).str();
    if (tables_format) tables = stringifyStorageFormat(*tables_format).str();
    mix = mix_name.str();
    q4_0x16 = regroup_q4_0;
    q8_0x16 = regroup_q8_0;
    q4_kx16 = regroup_q4_k;
    q5_kx16 = regroup_q5_k;
  }

  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    if (mlir::failed(ParseOption(context, "weights", weights, weights_)) ||
        mlir::failed(ParseOption(context, "tables", tables, tables_))) {
      return mlir::failure();
    }
    // The tied embedding is also the LM head: Q8_0 keeps its error out of the logits.
    if (!tables_ && (weights_ == StorageFormat::Q4_0 || weights_ == StorageFormat::Q4_0x16)) {
      tables_ = StorageFormat::Q8_0;
    }
    if (!mix.empty()) {
      if (mix != "q3_k_m" && mix != "q4_k_s" && mix != "q4_k_m" && mix != "q5_k_s" &&
          mix != "q5_k_m") {
        return mlir::emitError(mlir::UnknownLoc::get(context))
               << "assign-storage-formats: mix must be q3_k_m, q4_k_s, q4_k_m, q5_k_s or q5_k_m, "
                  "not '"
               << mix << "'";
      }
      // The mix's base type for the matrices it does not single out.
      weights_ = mix[1] == '3' ? StorageFormat::Q3_K
                 : mix[1] == '4' ? StorageFormat::Q4_K
                                 : StorageFormat::Q5_K;
    }
    return mlir::success();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::StringSet<> tables;
    module.walk([&](EmbeddingOp op) { tables.insert(op.getTable()); });
    module.walk([&](LmHeadOp op) { tables.insert(op.getTable()); });
    num_layers_ = 0;
    module.walk([&](WeightOp weight) {
      if (int layer = LayerOf(weight.getSymName()); layer >= num_layers_) num_layers_ = layer + 1;
    });
    module.walk([&](WeightOp weight) {
      const StorageFormat format = Choose(weight, tables.contains(weight.getSymName()));
      weight.setStoredFormatAttr(StorageFormatAttr::get(&getContext(), format));
    });
  }

 private:
  // Empty `text` leaves `format` unset.
  static mlir::LogicalResult ParseOption(mlir::MLIRContext* context, llvm::StringRef name,
                                         llvm::StringRef text,
                                         std::optional<StorageFormat>& format) {
    format.reset();
    if (text.empty()) return mlir::success();
    if (auto parsed = symbolizeStorageFormat(text)) {
      format = *parsed;
      return mlir::success();
    }
    return mlir::emitError(mlir::UnknownLoc::get(context))
           << "assign-storage-formats: " << name << " must be " << listStorageFormats()
           << ", not '" << text << "'";
  }

  // The policy of Passes.td for `weight` (`is_table`: read by an embedding or LM-head op).
  StorageFormat Choose(WeightOp weight, bool is_table) const {
    mlir::RankedTensorType type = weight.getTensorType();
    if (type.getRank() == 1) return StorageFormat::F32;
    StorageFormat format;
    if (!mix.empty() && !tables_) {
      format = MixFormat(weight, is_table);
    } else if (!mix.empty() && !is_table) {
      format = MixFormat(weight, false);
    } else if (is_table && tables_) {
      format = *tables_;
    } else if (weights_) {
      format = *weights_;
    } else if (auto blocks = weight.getCheckpointFormat()) {
      format = *blocks;
    } else {
      // bf16 and f16 keep their bytes (no widening: half the bytes per token of f32).
      const mlir::Type element = type.getElementType();
      format = element.isBF16()  ? StorageFormat::BF16
               : element.isF16() ? StorageFormat::F16
                                 : StorageFormat::F32;
    }
    // A row that is not whole super-blocks takes llama-quantize's fallback for its type
    // (tensor_type_fallback in llama.cpp's src/llama-quant.cpp), and one that is not whole
    // 32-weight blocks either becomes bf16 (the PLE projection's rows of 16 under q8_0).
    // (A regrouped format falls back to its blocks' format first: q4_kx16 -> q4_k -> q5_0.)
    while (type.getRank() == 2 && type.getDimSize(1) % storageFormatBlockSize(format) != 0 &&
           SuperBlockFallback(format) != format) {
      format = SuperBlockFallback(format);
    }
    const int64_t block = storageFormatBlockSize(format);
    if (block > 1 && (type.getRank() != 2 || type.getDimSize(1) % block != 0)) {
      format = StorageFormat::BF16;
    }
    // The same Q4_0 / Q8_0 blocks in the layout the decode kernels read fastest, where rows are
    // whole groups of 16 blocks.
    if (q4_0x16 && format == StorageFormat::Q4_0 && type.getRank() == 2 &&
        type.getDimSize(1) % storageFormatBlockSize(StorageFormat::Q4_0x16) == 0) {
      format = StorageFormat::Q4_0x16;
    }
    if (q8_0x16 && format == StorageFormat::Q8_0 && type.getRank() == 2 &&
        type.getDimSize(1) % storageFormatBlockSize(StorageFormat::Q8_0x16) == 0) {
      format = StorageFormat::Q8_0x16;
    }
    if (q4_kx16 && format == StorageFormat::Q4_K && type.getRank() == 2 &&
        type.getDimSize(1) % storageFormatBlockSize(StorageFormat::Q4_Kx16) == 0) {
      format = StorageFormat::Q4_Kx16;
    }
    if (q5_kx16 && format == StorageFormat::Q5_K && type.getRank() == 2 &&
        type.getDimSize(1) % storageFormatBlockSize(StorageFormat::Q5_Kx16) == 0) {
      format = StorageFormat::Q5_Kx16;
    }
    return format;
  }

  // Decoder layer of a checkpoint tensor name ("...layers.12.mlp...": 12), -1 for others.
  static int LayerOf(llvm::StringRef name) {
    const size_t at = name.find("layers.");
    if (at == llvm::StringRef::npos) return -1;
    int layer = -1;
    if (name.substr(at + 7).take_while(llvm::isDigit).getAsInteger(10, layer)) return -1;
    return layer;
  }

  // llama-quantize's choice for this weight under the mix (llama_tensor_get_type_impl in
  // llama.cpp's src/llama-quant.cpp, without an importance matrix, for a model with one
  // expert and no output.weight, as Gemma 4): the token and PLE tables (tied to the LM head)
  // Q6_K; attn_v and ffn_down of the layers use_more_bits picks Q6_K under Q4_K_M / Q5_K_M;
  // Q3_K_M: attn_v Q5_K for the first two layers, else Q4_K, ffn_down Q5_K for the first
  // L/16 layers, else Q4_K, attn_output Q4_K; Q4_K_S: attn_v of the first 4 layers and ffn_down
  // of the first L/8 Q5_K; per_layer_model_projection keeps its checkpoint format; every other
  // matrix the mix's base type. (Layer indices stand for llama.cpp's per-tensor counters, which
  // count every layer's attn_v / ffn_down in a converter's GGUF.)
  StorageFormat MixFormat(WeightOp weight, bool is_table) const {
    const llvm::StringRef name = weight.getSymName();
    if (is_table) return StorageFormat::Q6_K;
    if (name.contains("per_layer_model_projection")) return CheckpointFormat(weight);
    const int i = LayerOf(name), n = num_layers_;
    const auto use_more_bits = [&] { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; };
    const bool attn_v = name.contains("self_attn.v_proj");
    const bool ffn_down = name.contains("mlp.down_proj");
    if (mix == "q3_k_m") {
      if (attn_v) return i < 2 ? StorageFormat::Q5_K : StorageFormat::Q4_K;
      if (ffn_down) return i < n / 16 ? StorageFormat::Q5_K : StorageFormat::Q4_K;
      if (name.contains("self_attn.o_proj")) return StorageFormat::Q4_K;
    } else if (mix == "q4_k_m" || mix == "q5_k_m") {
      if ((attn_v || ffn_down) && i >= 0 && use_more_bits()) return StorageFormat::Q6_K;
    } else if (mix == "q4_k_s") {
      if ((attn_v && i < 4) || (ffn_down && i < n / 8)) return StorageFormat::Q5_K;
    }
    return *weights_;
  }

  // The format a weight has without options (its GGUF blocks, or its element type).
  static StorageFormat CheckpointFormat(WeightOp weight) {
    if (auto blocks = weight.getCheckpointFormat()) return *blocks;
    const mlir::Type element = weight.getTensorType().getElementType();
    return element.isBF16() ? StorageFormat::BF16
           : element.isF16() ? StorageFormat::F16
                             : StorageFormat::F32;
  }

  // llama-quantize's 32-weight type for a 256-weight one (Q4_0 / Q8_0 / Q4_K / Q5_K for
  // Q4_0x16 / Q8_0x16 / Q4_Kx16 / Q5_Kx16).
  static StorageFormat SuperBlockFallback(StorageFormat format) {
    switch (format) {
      case StorageFormat::Q2_K:
      case StorageFormat::Q3_K: return StorageFormat::Q4_0;
      case StorageFormat::Q4_K: return StorageFormat::Q5_0;
      case StorageFormat::Q5_K: return StorageFormat::Q5_1;
      case StorageFormat::Q6_K: return StorageFormat::Q8_0;
      case StorageFormat::IQ4_XS: return StorageFormat::IQ4_NL;
      case StorageFormat::Q4_0x16: return StorageFormat::Q4_0;  // the same blocks, ungrouped
      case StorageFormat::Q8_0x16: return StorageFormat::Q8_0;
      case StorageFormat::Q4_Kx16: return StorageFormat::Q4_K;  // the same super-blocks
      case StorageFormat::Q5_Kx16: return StorageFormat::Q5_K;
      default: return format;
    }
  }

  std::optional<StorageFormat> weights_;
  std::optional<StorageFormat> tables_;
  int num_layers_ = 0;
};

}  // namespace

std::unique_ptr<mlir::Pass> createAssignStorageFormatsPass(std::optional<StorageFormat> weights,
                                                           std::optional<StorageFormat> tables,
                                                           llvm::StringRef mix, bool q4_0x16,
                                                           bool q8_0x16, bool q4_kx16,
                                                           bool q5_kx16) {
  return std::make_unique<AssignStorageFormatsPass>(weights, tables, mix, q4_0x16, q8_0x16,
                                                    q4_kx16, q5_kx16);
}

}  // namespace cortiq
