// mark-rows: which rows of a prompt batch each op of the decode step must run on (see
// Passes.td): every row if its result reaches a KV-cache append, the logits rows otherwise.
#include "compiler/dialect/CortiqDialect.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"

namespace cortiq {
namespace {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

// FLOPs per row of a matrix-vector product with a [rows, cols] weight: one multiply and one add
// per weight element.
uint64_t ProductFlops(mlir::Value input, mlir::Value result) {
  const auto elements = [](mlir::Value v) {
    return static_cast<uint64_t>(v.getType().cast<mlir::RankedTensorType>().getNumElements());
  };
  return 2 * elements(input) * elements(result);
}

class MarkRowsPass : public MarkRowsBase<MarkRowsPass> {
 public:
  MarkRowsPass() = default;
  explicit MarkRowsPass(bool taps_all_rows) { tapsAllRows = taps_all_rows; }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    const llvm::StringLiteral decode_step = CortiqDialect::getDecodeStepFunctionName();
    auto func = module.lookupSymbol<mlir::func::FuncOp>(decode_step);
    if (!func || func.getBody().empty()) {
      module.emitError() << "mark-rows: no '" << decode_step << "' function";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError() << "mark-rows: '" << decode_step << "' must be a single block";
      return signalPassFailure();
    }
    mlir::Builder builder(&getContext());
    const mlir::StringAttr all = builder.getStringAttr(stringifyRows(Rows::all));
    const mlir::StringAttr logits = builder.getStringAttr(stringifyRows(Rows::logits));
    // Every user of a value follows it in the block, so one backward walk sees each op after
    // all of its users have been decided.
    llvm::DenseSet<mlir::Operation*> all_rows;
    RowSet on_all, on_logits;
    uint64_t lm_head_flops = 0;
    for (mlir::Operation& op : llvm::reverse(func.getBody().front())) {
      if (op.hasTrait<mlir::OpTrait::IsTerminator>()) continue;
      bool on_all_rows = mlir::isa<KvAppendOp>(op) || (tapsAllRows && mlir::isa<LayerOutputOp>(op));
      for (mlir::Operation* user : op.getUsers()) {
        if (on_all_rows) break;
        on_all_rows = all_rows.contains(user);
      }
      if (on_all_rows) all_rows.insert(&op);
      op.setAttr(CortiqDialect::getRowsAttrName(), on_all_rows ? all : logits);
      RowSet& set = on_all_rows ? on_all : on_logits;
      ++set.ops;
      if (auto linear = mlir::dyn_cast<LinearOp>(op)) {
        set.linear_flops += ProductFlops(linear.getInput(), linear.getResult());
      } else if (auto head = mlir::dyn_cast<LmHeadOp>(op)) {
        lm_head_flops += ProductFlops(head.getInput(), head.getResult());
      }
    }
    if (report) {
      const uint64_t linear = on_all.linear_flops + on_logits.linear_flops;
      mlir::emitRemark(module.getLoc())
          << "mark-rows: all rows: " << on_all.ops << " ops, " << on_all.linear_flops
          << " linear FLOPs per row; logits rows: " << on_logits.ops << " ops, "
          << on_logits.linear_flops << " linear FLOPs per row ("
          << llvm::formatv("{0:F1}", linear == 0 ? 0.0 : 100.0 * on_logits.linear_flops / linear)
                 .str()
          << "% of the linears); lm_head " << lm_head_flops << " FLOPs per logits row";
    }
  }

 private:
  // One row set's share of the decode step.
  struct RowSet {
    uint64_t ops = 0;
    uint64_t linear_flops = 0;  // per row, of its cortiq.linear ops
  };
};

}  // namespace

std::unique_ptr<mlir::Pass> createMarkRowsPass(bool taps_all_rows) {
  return std::make_unique<MarkRowsPass>(taps_all_rows);
}

}  // namespace cortiq
