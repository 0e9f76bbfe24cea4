// Derived-weight creation shared by the passes.
#include "passes/pass_util.h"

#include "mlir/IR/SymbolTable.h"

namespace cortiq {
namespace {

// `base`, or `base.N` for the first N that names no symbol of `module` yet.
std::string UniqueName(mlir::ModuleOp module, const std::string& base) {
  std::string name = base;
  for (int i = 1; mlir::SymbolTable::lookupSymbolIn(module, name); ++i) {
    name = base + "." + std::to_string(i);
  }
  return name;
}

StorageFormatAttr FormatAttr(mlir::Builder& builder, std::optional<StorageFormat> format) {
  return format ? StorageFormatAttr::get(builder.getContext(), *format) : StorageFormatAttr();
}

}  // namespace

WeightOp CreateScaledWeight(mlir::ModuleOp module, mlir::Operation* anchor, std::string name,
                            mlir::Type type, mlir::FlatSymbolRefAttr source,
                            mlir::FlatSymbolRefAttr column_gain, std::optional<float> factor,
                            std::optional<StorageFormat> stored) {
  mlir::OpBuilder builder(anchor->getContext());
  builder.setInsertionPointAfter(anchor);
  return builder.create<WeightOp>(
      anchor->getLoc(), builder.getStringAttr(UniqueName(module, name)), mlir::TypeAttr::get(type),
      mlir::ArrayAttr(), source, column_gain,
      factor ? builder.getF32FloatAttr(*factor) : mlir::FloatAttr(), StorageFormatAttr(),
      FormatAttr(builder, stored));
}

WeightOp CreateConcatWeight(mlir::ModuleOp module, mlir::Operation* anchor, std::string name,
                            mlir::Type type, llvm::ArrayRef<mlir::Attribute> sources,
                            std::optional<StorageFormat> stored) {
  mlir::OpBuilder builder(anchor->getContext());
  builder.setInsertionPointAfter(anchor);
  return builder.create<WeightOp>(anchor->getLoc(), builder.getStringAttr(UniqueName(module, name)),
                                  mlir::TypeAttr::get(type), builder.getArrayAttr(sources),
                                  mlir::FlatSymbolRefAttr(), mlir::FlatSymbolRefAttr(),
                                  mlir::FloatAttr(), StorageFormatAttr(),
                                  FormatAttr(builder, stored));
}

std::optional<StorageFormat> StorageFormatOf(WeightOp weight) {
  if (auto stored = weight.getStoredFormat()) return *stored;
  if (auto blocks = weight.getCheckpointFormat()) return *blocks;
  return std::nullopt;
}

bool StoredExactlyAsF32(WeightOp weight) {
  std::optional<StorageFormat> format = StorageFormatOf(weight);
  return weight.getTensorType().getElementType().isF32() &&
         (!format || *format == StorageFormat::F32);
}

WeightOp LookupWeight(mlir::ModuleOp module, mlir::FlatSymbolRefAttr symbol) {
  return mlir::dyn_cast_or_null<WeightOp>(
      mlir::SymbolTable::lookupSymbolIn(module, symbol.getAttr()));
}

}  // namespace cortiq
