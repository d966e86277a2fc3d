//===- Pipelines.cpp - named moe pipelines --------------------------------===//

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::moe::buildDefaultPipeline(OpPassManager &pm,
                                     const DefaultPipelineOptions &options) {
  if (options.expandBlocks)
    pm.addPass(createMoeExpandBlock());
  if (options.lowerCollectives)
    pm.addPass(createMoeCollectivesToShard());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::moe::registerMoePassesAndPipelines() {
  registerMoePasses();
  PassPipelineRegistration<DefaultPipelineOptions>(
      "moe-default",
      "The default moe pipeline: expand moe.block into primitives, then "
      "canonicalize and CSE",
      buildDefaultPipeline);
}
