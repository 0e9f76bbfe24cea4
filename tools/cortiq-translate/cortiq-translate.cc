// cortiq-translate: an mlir-translate-style driver. --cortiq-to-plan lowers the decode step of a
// `cortiq` module (LowerToPlan, compiler/lower/plan_lowering.h) to the runtime plan, checks it
// with ValidatePlan as the artifact writer does, and prints it as text (plan_text.h), so that
// lowering is tested by FileCheck like the passes.
#include <algorithm>

#include "compiler/dialect/CortiqDialect.h"
#include "compiler/lower/plan_lowering.h"
#include "llvm/Support/CommandLine.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "runtime/plan.h"
#include "tools/cortiq-translate/plan_text.h"

namespace {

llvm::cl::opt<int64_t> max_batch("max-batch",
                                 llvm::cl::desc("Plan::max_batch of --cortiq-to-plan (as "
                                                "cortiq-compile --max-batch)"),
                                 llvm::cl::init(cortiq::LoweringOptions().max_batch));

mlir::LogicalResult CortiqToPlan(mlir::ModuleOp module, llvm::raw_ostream& output) {
  cortiq::LoweringOptions options;
  options.max_batch = max_batch;
  absl::StatusOr<cortiq::Plan> plan = cortiq::LowerToPlan(module, options);
  if (!plan.ok()) return mlir::emitError(module.getLoc()) << std::string(plan.status().message());
  // Lowering leaves every weight at offset 0 (the writer lays them out): a section as large as
  // the largest weight holds each of them.
  uint64_t section_bytes = 0;
  for (const cortiq::WeightEntry& w : plan->weights) {
    section_bytes = std::max(section_bytes, w.size_bytes);
  }
  absl::Status valid = cortiq::ValidatePlan(*plan, section_bytes);
  if (!valid.ok()) return mlir::emitError(module.getLoc())
           << "invalid plan: " << std::string(valid.message());
  output << cortiq::PlanToText(*plan);
  return mlir::success();
}

}  // namespace

int main(int argc, char** argv) {
  mlir::TranslateFromMLIRRegistration to_plan(
      "cortiq-to-plan", CortiqToPlan, [](mlir::DialectRegistry& registry) {
        registry.insert<cortiq::CortiqDialect, mlir::func::FuncDialect>();
      });
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "cortiq translation driver")) ? 1 : 0;
}
