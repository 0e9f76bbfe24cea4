// The default pass pipeline of cortiq-compile.
#include "mlir/Pass/PassRegistry.h"
#include "passes/Passes.h"

namespace cortiq {

void buildDefaultPipeline(mlir::OpPassManager& pm) {
  pm.addPass(createFoldConstantsPass());
  pm.addPass(createFoldNormGainPass());
  pm.addPass(createFuseLinearPass());
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createMarkRowsPass());
  pm.addPass(createPlanBuffersPass());
}

}  // namespace cortiq

namespace cortiq {

void registerCortiqPipelines() {
  mlir::PassPipelineRegistration<>("cortiq-default", "the default pipeline of cortiq-compile",
                                   buildDefaultPipeline);
}

}  // namespace cortiq
