// Helpers shared by the cortiq passes: the decode-step body, and derived-weight creation.
#ifndef CORTIQ_PASSES_PASS_UTIL_H_
#define CORTIQ_PASSES_PASS_UTIL_H_

#include <optional>
#include <string>

#include "compiler/dialect/CortiqDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace cortiq {

// Declares a derived weight `@name` (uniqued if taken) of `type` right after `anchor` (a
// cortiq.weight), so a derived weight follows its sources in the module, stored as `stored`
// (nullopt: no stored format recorded, as before assign-storage-formats).
//   scale:       weight(name) = scale(@source) [columns(@gain)] [factor(f)]
//   concat_rows: weight(name) = concat_rows(@sources...)
WeightOp CreateScaledWeight(mlir::ModuleOp module, mlir::Operation* anchor, std::string name,
                            mlir::Type type, mlir::FlatSymbolRefAttr source,
                            mlir::FlatSymbolRefAttr column_gain, std::optional<float> factor,
                            std::optional<StorageFormat> stored);
WeightOp CreateConcatWeight(mlir::ModuleOp module, mlir::Operation* anchor, std::string name,
                            mlir::Type type, llvm::ArrayRef<mlir::Attribute> sources,
                            std::optional<StorageFormat> stored);

// The format `weight` will be stored in, as far as the module says: its `stored_format` (set by
// assign-storage-formats), else the block format the checkpoint holds it in
// (`checkpoint_format`), else nullopt (its element type decides).
std::optional<StorageFormat> StorageFormatOf(WeightOp weight);

// True when `weight` holds exactly the f32 values of its type: f32 elements stored as f32, so
// a pass may replace it by a derived weight without any rounding.
bool StoredExactlyAsF32(WeightOp weight);

// The cortiq.weight named by `symbol`, or null.
WeightOp LookupWeight(mlir::ModuleOp module, mlir::FlatSymbolRefAttr symbol);

}  // namespace cortiq

#endif  // CORTIQ_PASSES_PASS_UTIL_H_
