// fold-constants: scalar scales moved into an RMS norm's epsilon, a norm's gain or an embedding
// lookup's scale, where they cost nothing (see Passes.td for the rules and their numerics).
#include <cmath>

#include "compiler/dialect/CortiqDialect.h"
#include "passes/Passes.h"
#include "passes/pass_util.h"

namespace cortiq {
namespace {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

class FoldConstantsPass : public FoldConstantsBase<FoldConstantsPass> {
 public:
  void runOnOperation() override {
    module_ = getOperation();
    bool changed = true;
    while (changed) {
      changed = false;
      llvm::SmallVector<ScaleOp> scales;
      module_.walk([&](ScaleOp op) { scales.push_back(op); });
      for (ScaleOp scale : scales) {
        if (FoldScale(scale)) changed = true;
      }
    }
  }

 private:
  // Multiplies the value produced by `producer` (with no other user) by `factor` at no cost,
  // or returns false. Handles an embedding lookup (its scale), a gained RMS norm (a derived
  // gain) and another scale (its factor).
  bool CanAbsorb(mlir::Operation* producer) {
    if (!producer || !producer->hasOneUse()) return false;
    if (mlir::isa<EmbeddingOp, ScaleOp>(producer)) return true;
    if (auto norm = mlir::dyn_cast<RmsNormOp>(producer)) return static_cast<bool>(norm.getGainAttr());
    return false;
  }
  void Absorb(mlir::Operation* producer, double factor) {
    mlir::Builder builder(producer->getContext());
    if (auto lookup = mlir::dyn_cast<EmbeddingOp>(producer)) {
      lookup.setScaleAttr(builder.getF32FloatAttr(lookup.getScale().convertToDouble() * factor));
    } else if (auto scale = mlir::dyn_cast<ScaleOp>(producer)) {
      scale.setFactorAttr(builder.getF32FloatAttr(scale.getFactor().convertToDouble() * factor));
    } else {
      auto norm = mlir::cast<RmsNormOp>(producer);
      WeightOp gain = LookupWeight(module_, norm.getGainAttr());
      auto f32_type = mlir::RankedTensorType::get(gain.getTensorType().getShape(),
                                                  builder.getF32Type());
      // An f32 gain computed in f32 is stored as f32 (once formats are assigned: every 1-D
      // weight is).
      std::optional<StorageFormat> stored;
      if (gain.getStoredFormat()) stored = StorageFormat::F32;
      WeightOp scaled = CreateScaledWeight(module_, gain, (gain.getSymName() + ".scaled").str(),
                                           f32_type, norm.getGainAttr(), mlir::FlatSymbolRefAttr(),
                                           static_cast<float>(factor), stored);
      norm.setGainAttr(mlir::FlatSymbolRefAttr::get(scaled.getSymNameAttr()));
    }
  }

  bool FoldScale(ScaleOp scale) {
    const double c = scale.getFactor().convertToDouble();
    mlir::Value input = scale.getInput();
    mlir::Operation* producer = input.getDefiningOp();
    mlir::Builder builder(scale->getContext());

    // scale → rms_norm: rms(c z; eps) = rms(z; eps / c^2) for c > 0.
    if (c > 0.0 && scale->hasOneUse()) {
      if (auto norm = mlir::dyn_cast<RmsNormOp>(*scale->getUsers().begin())) {
        norm.setEpsAttr(builder.getF32FloatAttr(norm.getEps().convertToDouble() / (c * c)));
        norm->setOperand(0, input);
        scale->erase();
        return true;
      }
    }
    // A scale of an embedding / another scale / a gained norm: into the producer.
    if (CanAbsorb(producer)) {
      Absorb(producer, c);
      scale.getResult().replaceAllUsesWith(input);
      scale->erase();
      return true;
    }
    // A scale of a sum: into both addends.
    if (auto add = mlir::dyn_cast_or_null<AddOp>(producer)) {
      mlir::Operation* lhs = add.getLhs().getDefiningOp();
      mlir::Operation* rhs = add.getRhs().getDefiningOp();
      if (add->hasOneUse() && lhs != rhs && CanAbsorb(lhs) && CanAbsorb(rhs)) {
        Absorb(lhs, c);
        Absorb(rhs, c);
        scale.getResult().replaceAllUsesWith(input);
        scale->erase();
        return true;
      }
    }
    return false;
  }

  mlir::ModuleOp module_;
};

}  // namespace

std::unique_ptr<mlir::Pass> createFoldConstantsPass() {
  return std::make_unique<FoldConstantsPass>();
}

}  // namespace cortiq
