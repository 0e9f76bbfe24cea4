// The storage-format policy (see storage_format.h).
#include "compiler/lower/storage_format.h"

#include "absl/strings/str_cat.h"

namespace cortiq {

absl::StatusOr<WeightFormat> ToWeightFormat(StorageFormat format) {
  const llvm::StringRef name = stringifyStorageFormat(format);
  if (std::optional<WeightFormat> converted = WeightFormatFromName(name.str())) return *converted;
  return absl::InvalidArgumentError(
      absl::StrCat("storage format '", name.str(), "' has no runtime weight format"));
}

std::optional<StorageFormat> ToStorageFormat(WeightFormat format) {
  if (auto converted = symbolizeStorageFormat(WeightFormatName(format))) return *converted;
  return std::nullopt;
}

WeightFormat ChooseStorageFormat(WeightOp weight, bool is_table, const LoweringOptions& options) {
  mlir::RankedTensorType type = weight.getTensorType();
  WeightFormat format;
  if (type.getRank() == 1) {
    // Norm gains and scalars are tiny: f32 keeps them (and folded gains) exact at no cost.
    return WeightFormat::kF32;
  } else if (is_table && options.table_format) {
    format = *options.table_format;
  } else if (options.weight_format) {
    format = *options.weight_format;
  } else if (auto blocks = weight.getCheckpointFormat()) {
    // GGUF blocks are kept as they are (no requantization).
    format = blocks == StorageFormat::Q4_0 ? WeightFormat::kQ4_0 : WeightFormat::kQ8_0;
  } else {
    format = type.getElementType().isBF16() ? WeightFormat::kBF16 : WeightFormat::kF32;
  }
  if (IsBlockFormat(format) && type.getShape().back() % 32 != 0) {
    format = WeightFormat::kBF16;  // rows must be whole 32-weight blocks
  }
  return format;
}

absl::flat_hash_set<std::string> TableWeights(mlir::Operation* root) {
  absl::flat_hash_set<std::string> tables;
  root->walk([&](EmbeddingOp op) { tables.insert(op.getTable().str()); });
  root->walk([&](LmHeadOp op) { tables.insert(op.getTable().str()); });
  return tables;
}

void AssignStorageFormats(mlir::ModuleOp module, const LoweringOptions& options) {
  const absl::flat_hash_set<std::string> tables = TableWeights(module);
  module.walk([&](WeightOp weight) {
    const WeightFormat format =
        ChooseStorageFormat(weight, tables.contains(weight.getSymName().str()), options);
    weight.setStoredFormatAttr(StorageFormatAttr::get(module.getContext(), *ToStorageFormat(format)));
  });
}

}  // namespace cortiq
