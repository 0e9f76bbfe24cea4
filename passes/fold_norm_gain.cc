// fold-norm-gain: W (x_hat * g) = (W diag(g)) x_hat — an RMS norm's gain moves into the columns
// of the linears that read the normalized vector (see Passes.td).
#include "compiler/dialect/CortiqDialect.h"
#include "passes/Passes.h"
#include "passes/pass_util.h"

namespace cortiq {
namespace {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

class FoldNormGainPass : public FoldNormGainBase<FoldNormGainPass> {
 public:
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    // Tables also used for lookups keep their values: folding a gain into them would change
    // the embeddings.
    llvm::DenseSet<mlir::Attribute> lookup_tables;
    module.walk([&](EmbeddingOp op) { lookup_tables.insert(op.getTableAttr()); });

    llvm::SmallVector<RmsNormOp> norms;
    module.walk([&](RmsNormOp op) { norms.push_back(op); });
    for (RmsNormOp norm : norms) {
      auto gain = norm.getGainAttr();
      auto type = norm.getResult().getType().cast<mlir::RankedTensorType>();
      if (!gain || static_cast<int64_t>(norm.getGroupSize()) != type.getNumElements() || norm->use_empty()) continue;
      auto exact = [&](mlir::FlatSymbolRefAttr weight) {
        WeightOp op = LookupWeight(module, weight);
        // Folding into a weight that is rounded or quantized later would change its stored
        // values (Q8_0/Q4_0 blocks would no longer be llama.cpp's blocks of the checkpoint).
        return op && (allowRounding || StoredExactlyAsF32(op));
      };
      bool foldable = llvm::all_of(norm->getUsers(), [&](mlir::Operation* user) {
        if (auto linear = mlir::dyn_cast<LinearOp>(user)) return exact(linear.getWeightAttr());
        if (auto head = mlir::dyn_cast<LmHeadOp>(user))
          return !lookup_tables.contains(head.getTableAttr()) && exact(head.getTableAttr());
        return false;
      });
      if (!foldable) continue;
      for (mlir::Operation* user : llvm::make_early_inc_range(norm->getUsers())) {
        mlir::FlatSymbolRefAttr weight_attr =
            mlir::isa<LinearOp>(user) ? mlir::cast<LinearOp>(user).getWeightAttr()
                                      : mlir::cast<LmHeadOp>(user).getTableAttr();
        WeightOp weight = LookupWeight(module, weight_attr);
        if (!weight) return signalPassFailure();
        WeightOp folded = CreateScaledWeight(
            module, weight, (weight.getSymName() + ".gain").str(), weight.getType(), weight_attr,
            gain, std::nullopt, StorageFormatOf(weight));
        auto folded_attr = mlir::FlatSymbolRefAttr::get(folded.getSymNameAttr());
        if (auto linear = mlir::dyn_cast<LinearOp>(user)) {
          linear.setWeightAttr(folded_attr);
        } else {
          mlir::cast<LmHeadOp>(user).setTableAttr(folded_attr);
        }
      }
      norm->removeAttr(norm.getGainAttrName());
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createFoldNormGainPass() {
  return std::make_unique<FoldNormGainPass>();
}

}  // namespace cortiq
