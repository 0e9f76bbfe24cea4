// plan-buffers: liveness over the decode step and arena offsets for every value (see
// Passes.td); the allocation itself is PlanArena in buffer_allocator.h.
#include "compiler/dialect/CortiqDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/buffer_allocator.h"
#include "runtime/plan.h"

namespace cortiq {
namespace {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

class PlanBuffersPass : public PlanBuffersBase<PlanBuffersPass> {
 public:
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    const llvm::StringLiteral decode_step = CortiqDialect::getDecodeStepFunctionName();
    auto func = module.lookupSymbol<mlir::func::FuncOp>(decode_step);
    if (!func || func.getBody().empty()) {
      module.emitError() << "plan-buffers: no '" << decode_step << "' function";
      return signalPassFailure();
    }
    llvm::DenseMap<mlir::Value, int32_t> index;
    std::vector<BufferRequest> requests;
    llvm::SmallVector<mlir::Operation*> producers;
    int32_t step = 0;
    for (mlir::Operation& op : func.getBody().front()) {
      for (mlir::Value operand : op.getOperands()) {
        auto it = index.find(operand);
        if (it != index.end()) requests[it->second].uses.push_back(step);
      }
      if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
        for (mlir::Value v : ret.getOperands()) {
          auto it = index.find(v);
          if (it != index.end()) requests[it->second].pinned = true;
        }
      }
      if (op.getNumResults() == 1 && op.getResult(0).getType().isa<mlir::RankedTensorType>()) {
        mlir::Value result = op.getResult(0);
        BufferRequest request;
        request.def = step;
        const int64_t elements =
            result.getType().cast<mlir::RankedTensorType>().getNumElements();
        if (elements <= 0 || static_cast<uint64_t>(elements) > kMaxArenaBytes / 4) {
          op.emitError() << "plan-buffers: a value of " << elements
                         << " elements does not fit the activation arena (at most "
                         << kMaxArenaBytes << " bytes)";
          return signalPassFailure();
        }
        request.bytes = 4 * static_cast<uint64_t>(elements);
        if (auto slice = mlir::dyn_cast<SliceOp>(op)) {
          request.view_of = index.lookup(slice.getInput());
          request.view_offset = 4 * static_cast<uint64_t>(slice.getOffset());
        } else if (auto tap = mlir::dyn_cast<LayerOutputOp>(op)) {
          request.view_of = index.lookup(tap.getInput());
          request.pinned = true;  // observed after the step (--dump-layers)
        } else if (op.hasTrait<OpTrait::InPlace>()) {
          // The result may overwrite an operand that dies here (Cortiq_InPlace).
          for (mlir::Value operand : op.getOperands()) {
            auto it = index.find(operand);
            if (it != index.end()) request.in_place_of.push_back(it->second);
          }
        }
        index[result] = static_cast<int32_t>(requests.size());
        requests.push_back(std::move(request));
        producers.push_back(&op);
      }
      ++step;
    }
    // The runtime's contract (runtime/plan.h): buffers at kBufferAlignment, the arena at most
    // kMaxArenaBytes (ValidatePlan rejects anything larger).
    BufferPlan plan = PlanArena(requests, kBufferAlignment);
    if (plan.arena_bytes > kMaxArenaBytes) {
      module.emitError() << "plan-buffers: the activation arena would need " << plan.arena_bytes
                         << " bytes (at most " << kMaxArenaBytes << ")";
      return signalPassFailure();
    }
    mlir::Builder builder(&getContext());
    for (size_t i = 0; i < producers.size(); ++i) {
      producers[i]->setAttr(CortiqDialect::getArenaOffsetAttrName(),
                            builder.getI64IntegerAttr(static_cast<int64_t>(plan.offsets[i])));
    }
    module->setAttr(CortiqDialect::getArenaBytesAttrName(),
                    builder.getI64IntegerAttr(static_cast<int64_t>(plan.arena_bytes)));
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createPlanBuffersPass() { return std::make_unique<PlanBuffersPass>(); }

}  // namespace cortiq
