// fuse-elementwise: gelu·mul, norm + residual add and layer_scalar become single fused steps
// (see Passes.td).
#include "compiler/dialect/CortiqDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "passes/Passes.h"

namespace cortiq {
namespace {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

// mul(gelu_tanh(a), b) or mul(b, gelu_tanh(a)) → gelu_tanh_mul(a, b).
struct FuseGeluMul : public mlir::OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(MulOp mul, mlir::PatternRewriter& rewriter) const override {
    for (int gate_side = 0; gate_side < 2; ++gate_side) {
      mlir::Value gate_value = mul->getOperand(gate_side);
      auto gelu = gate_value.getDefiningOp<GeluTanhOp>();
      if (!gelu || !gelu->hasOneUse()) continue;
      rewriter.replaceOpWithNewOp<GeluTanhMulOp>(mul, mul.getType(), gelu.getInput(),
                                                 mul->getOperand(1 - gate_side));
      rewriter.eraseOp(gelu);
      return mlir::success();
    }
    return mlir::failure();
  }
};

// add(h, rms_norm(x)) or add(rms_norm(x), h) → residual_rms_norm(h, x).
struct FuseResidualNorm : public mlir::OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(AddOp add, mlir::PatternRewriter& rewriter) const override {
    for (int norm_side = 1; norm_side >= 0; --norm_side) {
      auto norm = add->getOperand(norm_side).getDefiningOp<RmsNormOp>();
      if (!norm || !norm->hasOneUse()) continue;
      rewriter.replaceOpWithNewOp<ResidualRmsNormOp>(
          add, add.getType(), add->getOperand(1 - norm_side), norm.getInput(),
          norm.getGainAttr(), mlir::FlatSymbolRefAttr(), norm.getGroupSizeAttr(),
          norm.getEpsAttr());
      rewriter.eraseOp(norm);
      return mlir::success();
    }
    return mlir::failure();
  }
};

// layer_scalar(residual_rms_norm(...)) → residual_rms_norm(...) scalar @layer_scalar.
struct FuseLayerScalar : public mlir::OpRewritePattern<LayerScalarOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(LayerScalarOp op,
                                      mlir::PatternRewriter& rewriter) const override {
    auto residual = op.getInput().getDefiningOp<ResidualRmsNormOp>();
    if (!residual || !residual->hasOneUse() || residual.getScalarAttr()) return mlir::failure();
    rewriter.updateRootInPlace(residual, [&] { residual.setScalarAttr(op.getScalarAttr()); });
    rewriter.replaceOp(op, residual.getResult());
    return mlir::success();
  }
};

class FuseElementwisePass : public FuseElementwiseBase<FuseElementwisePass> {
 public:
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<FuseGeluMul, FuseResidualNorm, FuseLayerScalar>(&getContext());
    mlir::GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (mlir::failed(mlir::applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                                        config))) {
      signalPassFailure();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}

}  // namespace cortiq
