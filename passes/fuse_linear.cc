// fuse-linear: linears reading the same input become one linear over stacked rows followed by
// slice views of its result (see Passes.td).
#include "compiler/dialect/CortiqDialect.h"
#include "mlir/IR/Builders.h"
#include "passes/Passes.h"
#include "passes/pass_util.h"

namespace cortiq {
namespace {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

// "{a,b}" between the names' common prefix and common suffix, e.g.
// "layers.0.mlp.{gate_proj,up_proj}.weight".
std::string FusedName(llvm::ArrayRef<std::string> names) {
  size_t prefix = names[0].size(), suffix = names[0].size();
  for (const std::string& n : names) {
    size_t p = 0;
    while (p < prefix && p < n.size() && n[p] == names[0][p]) ++p;
    prefix = p;
    size_t s = 0;
    while (s < suffix && s < n.size() && n[n.size() - 1 - s] == names[0][names[0].size() - 1 - s])
      ++s;
    suffix = s;
  }
  // Cut at separators so the parts stay whole words.
  while (prefix > 0 && names[0][prefix - 1] != '.' && names[0][prefix - 1] != '_') --prefix;
  std::string out = names[0].substr(0, prefix) + "{";
  for (size_t i = 0; i < names.size(); ++i) {
    size_t end = names[i].size() - suffix;
    if (end < prefix) end = prefix;
    out += (i ? "," : "") + names[i].substr(prefix, end - prefix);
  }
  return out + "}" + names[0].substr(names[0].size() - suffix);
}

class FuseLinearPass : public FuseLinearBase<FuseLinearPass> {
 public:
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    // Group linears by their input value, in program order.
    llvm::MapVector<mlir::Value, llvm::SmallVector<LinearOp>> groups;
    module.walk([&](LinearOp op) { groups[op.getInput()].push_back(op); });
    for (auto& [input, linears] : groups) {
      if (linears.size() < 2) continue;
      // Only weights stored in one format can share a row stream (and GGUF blocks stay blocks).
      std::optional<StorageFormat> format;
      bool one_format = true;
      for (LinearOp linear : linears) {
        WeightOp weight = LookupWeight(module, linear.getWeightAttr());
        if (!weight) return signalPassFailure();
        if (linear == linears[0]) format = StorageFormatOf(weight);
        one_format &= StorageFormatOf(weight) == format;
      }
      if (!one_format) continue;
      llvm::SmallVector<mlir::Attribute> sources;
      llvm::SmallVector<std::string> names;
      int64_t rows = 0;
      mlir::Type element;
      WeightOp last_source;
      for (LinearOp linear : linears) {
        WeightOp weight = LookupWeight(module, linear.getWeightAttr());
        if (!weight) return signalPassFailure();
        mlir::Type e = weight.getTensorType().getElementType();
        element = !element || element == e ? e : mlir::Float32Type::get(&getContext());
        rows += weight.getTensorType().getDimSize(0);
        sources.push_back(linear.getWeightAttr());
        names.push_back(weight.getSymName().str());
        if (!last_source || last_source->isBeforeInBlock(weight)) last_source = weight;
      }
      const int64_t cols = linears[0].getInput().getType().cast<mlir::RankedTensorType>().getDimSize(0);
      WeightOp fused = CreateConcatWeight(module, last_source, FusedName(names),
                                          mlir::RankedTensorType::get({rows, cols}, element),
                                          sources, format);
      // The fused linear takes the place of the first one; the others' results become views.
      mlir::OpBuilder builder(linears[0]);
      auto f32 = builder.getF32Type();
      auto result = builder.create<LinearOp>(
          linears[0].getLoc(), mlir::RankedTensorType::get({rows}, f32), input,
          mlir::FlatSymbolRefAttr::get(fused.getSymNameAttr()));
      int64_t offset = 0;
      for (LinearOp linear : linears) {
        auto type = linear.getResult().getType().cast<mlir::RankedTensorType>();
        auto slice = builder.create<SliceOp>(linear.getLoc(), type, result.getResult(),
                                             static_cast<uint64_t>(offset));
        offset += type.getDimSize(0);
        linear.getResult().replaceAllUsesWith(slice.getResult());
      }
      // Erased only now: the builder inserts before linears[0].
      for (LinearOp linear : linears) linear.erase();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createFuseLinearPass() { return std::make_unique<FuseLinearPass>(); }

}  // namespace cortiq
