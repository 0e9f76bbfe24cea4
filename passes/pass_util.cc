// Derived-weight creation shared by the passes.
#include "passes/pass_util.h"

#include "compiler/import/importer.h"
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

}  // namespace

WeightOp CreateScaledWeight(mlir::ModuleOp module, mlir::Operation* anchor, std::string name,
                            mlir::Type type, mlir::FlatSymbolRefAttr source,
                            mlir::FlatSymbolRefAttr column_gain, std::optional<float> factor) {
  mlir::OpBuilder builder(anchor->getContext());
  builder.setInsertionPointAfter(anchor);
  return builder.create<WeightOp>(
      anchor->getLoc(), builder.getStringAttr(UniqueName(module, name)), mlir::TypeAttr::get(type),
      mlir::ArrayAttr(), source, column_gain,
      factor ? builder.getF32FloatAttr(*factor) : mlir::FloatAttr());
}

WeightOp CreateConcatWeight(mlir::ModuleOp module, mlir::Operation* anchor, std::string name,
                            mlir::Type type, llvm::ArrayRef<mlir::Attribute> sources) {
  mlir::OpBuilder builder(anchor->getContext());
  builder.setInsertionPointAfter(anchor);
  return builder.create<WeightOp>(anchor->getLoc(), builder.getStringAttr(UniqueName(module, name)),
                                     mlir::TypeAttr::get(type), builder.getArrayAttr(sources),
                                     mlir::FlatSymbolRefAttr(), mlir::FlatSymbolRefAttr(),
                                     mlir::FloatAttr());
}

llvm::StringRef StorageFormatOf(WeightOp weight) {
  if (auto stored = weight->getAttrOfType<mlir::StringAttr>(kStoredFormatAttr)) {
    return stored.getValue();
  }
  if (auto blocks = weight->getAttrOfType<mlir::StringAttr>(kCheckpointFormatAttr)) {
    return blocks.getValue();
  }
  return "";
}

bool StoredExactlyAsF32(WeightOp weight) {
  llvm::StringRef format = StorageFormatOf(weight);
  return weight.getTensorType().getElementType().isF32() && (format.empty() || format == "f32");
}

void SetStorageFormat(WeightOp weight, llvm::StringRef format) {
  if (format.empty()) return;
  weight->setAttr(kStoredFormatAttr, mlir::StringAttr::get(weight->getContext(), format));
}

WeightOp LookupWeight(mlir::ModuleOp module, mlir::FlatSymbolRefAttr symbol) {
  return mlir::dyn_cast_or_null<WeightOp>(
      mlir::SymbolTable::lookupSymbolIn(module, symbol.getAttr()));
}

}  // namespace cortiq
