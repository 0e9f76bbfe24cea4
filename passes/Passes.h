// The cortiq graph passes (declared in Passes.td) and the default pipeline of cortiq-compile.
#ifndef CORTIQ_PASSES_PASSES_H_
#define CORTIQ_PASSES_PASSES_H_

#include <memory>
#include <optional>

#include "compiler/dialect/CortiqDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace cortiq {

// assign-storage-formats{weights=... tables=... mix=... q4_0x16=... q8_0x16=... q4_kx16=...
// q5_kx16=...}; nullopt / "" leaves an option empty.
std::unique_ptr<mlir::Pass> createAssignStorageFormatsPass(
    std::optional<StorageFormat> weights = std::nullopt,
    std::optional<StorageFormat> tables = std::nullopt, llvm::StringRef mix = "",
    bool q4_0x16 = true, bool q8_0x16 = true, bool q4_kx16 = true, bool q5_kx16 = true);
std::unique_ptr<mlir::Pass> createFoldConstantsPass();
std::unique_ptr<mlir::Pass> createFoldNormGainPass();
std::unique_ptr<mlir::Pass> createFuseLinearPass();
std::unique_ptr<mlir::Pass> createFuseElementwisePass();
// mark-rows{taps-all-rows=...}.
std::unique_ptr<mlir::Pass> createMarkRowsPass(bool taps_all_rows = false);
std::unique_ptr<mlir::Pass> createPlanBuffersPass();

// The pipeline cortiq-compile runs by default, after assign-storage-formats (which takes its
// flags): fold-constants, fold-norm-gain, fuse-linear, fuse-elementwise, mark-rows,
// plan-buffers (folds first so the fused weights are built from the folded ones; the rows and
// the buffers last, over the final ops and their order).
void buildDefaultPipeline(mlir::OpPassManager& pm);

// Registers buildDefaultPipeline as the pipeline "cortiq-default" (for --pass-pipeline and
// cortiq-opt --cortiq-default).
void registerCortiqPipelines();

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

}  // namespace cortiq

#endif  // CORTIQ_PASSES_PASSES_H_
