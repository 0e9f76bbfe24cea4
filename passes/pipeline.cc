// The default pass pipeline of cortiq-compile.
#include "passes/Passes.h"

namespace cortiq {

void buildDefaultPipeline(mlir::OpPassManager& pm) {
  pm.addPass(createFoldConstantsPass());
  pm.addPass(createFoldNormGainPass());
  pm.addPass(createFuseLinearPass());
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createPlanBuffersPass());
}

}  // namespace cortiq
