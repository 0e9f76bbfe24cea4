// cortiq-opt: an mlir-opt-style driver with the cortiq dialect and passes registered.
#include "compiler/dialect/CortiqDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "passes/Passes.h"

int main(int argc, char** argv) {
  cortiq::registerCortiqPasses();
  cortiq::registerCortiqPipelines();
  mlir::DialectRegistry registry;
  registry.insert<cortiq::CortiqDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cortiq optimizer driver\n", registry));
}
