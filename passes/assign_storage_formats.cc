// assign-storage-formats: the format the artifact stores each cortiq.weight in, recorded before
// the other passes (see Passes.td for the policy).
#include "compiler/dialect/CortiqDialect.h"
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
                           std::optional<StorageFormat> tables_format) {
    if (weights_format) weights = stringifyStorageFormat(*weights_format).str();
    if (tables_format) tables = stringifyStorageFormat(*tables_format).str();
  }

  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    if (mlir::failed(ParseOption(context, "weights", weights, weights_)) ||
        mlir::failed(ParseOption(context, "tables", tables, tables_))) {
      return mlir::failure();
    }
    // The tied embedding is also the LM head: Q8_0 keeps its error out of the logits.
    if (!tables_ && weights_ == StorageFormat::Q4_0) tables_ = StorageFormat::Q8_0;
    return mlir::success();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::StringSet<> tables;
    module.walk([&](EmbeddingOp op) { tables.insert(op.getTable()); });
    module.walk([&](LmHeadOp op) { tables.insert(op.getTable()); });
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
    if (is_table && tables_) {
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
    if (type.getRank() == 2 && type.getDimSize(1) % storageFormatBlockSize(format) != 0) {
      format = SuperBlockFallback(format);
    }
    const int64_t block = storageFormatBlockSize(format);
    if (block > 1 && (type.getRank() != 2 || type.getDimSize(1) % block != 0)) {
      format = StorageFormat::BF16;
    }
    return format;
  }

  // llama-quantize's 32-weight type for a 256-weight one.
  static StorageFormat SuperBlockFallback(StorageFormat format) {
    switch (format) {
      case StorageFormat::Q2_K:
      case StorageFormat::Q3_K: return StorageFormat::Q4_0;
      case StorageFormat::Q4_K: return StorageFormat::Q5_0;
      case StorageFormat::Q5_K: return StorageFormat::Q5_1;
      case StorageFormat::Q6_K: return StorageFormat::Q8_0;
      case StorageFormat::IQ4_XS: return StorageFormat::IQ4_NL;
      default: return format;
    }
  }

  std::optional<StorageFormat> weights_;
  std::optional<StorageFormat> tables_;
};

}  // namespace

std::unique_ptr<mlir::Pass> createAssignStorageFormatsPass(std::optional<StorageFormat> weights,
                                                           std::optional<StorageFormat> tables) {
  return std::make_unique<AssignStorageFormatsPass>(weights, tables);
}

}  // namespace cortiq
