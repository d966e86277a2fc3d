//===- Pipelines.cpp - moe-to-llvm -----------------------------------------===//

#include "codegen/Passes.h"
#include "passes/Passes.h"
#include "strategy/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

// Parallel loops (scf.parallel from the lowerings) run on LLVM's OpenMP
// runtime, libomp: upstream already has the thread pool, the work sharing
// and the lowering, so moec does not write its own.
//
// Built from the passes' typed create functions and option structs, so a
// renamed pass or option is a compile error, not a fatal error at the first
// run. The textual form a user types into moe-opt to reproduce any stage is
// what `pm.printAsTextualPipeline` prints (moe-opt --moe-to-llvm
// --dump-pass-pipeline; docs/codegen.md).
void mlir::moe::buildStrategyPipeline(OpPassManager &pm, const ToLLVMOptions &options) {
  pm.addPass(createMoeExpandBlock());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The strategy, decided and written into the IR (then followed).
  MoeAttachTargetOptions target;
  target.cpu = options.targetCpu;
  pm.addPass(createMoeAttachTarget(target));
  MoeSelectLoweringOptions select;
  select.gmmStrategy = options.gmmStrategy;
  select.gmmTiling = options.gmmTiling;
  select.tuningTable = options.tuningTable;
  pm.addPass(createMoeSelectLowering(select));
  if (options.prepareWeights)
    pm.addPass(createMoePrepareWeights());
  // Last: the prepared functions are marked too, and the strategy's ops
  // are the ones the lowering will see.
  if (options.stageTimers)
    pm.addPass(createMoeMarkStages());
}

void mlir::moe::buildToLLVMPipeline(OpPassManager &pm, const ToLLVMOptions &options) {
  buildStrategyPipeline(pm, options);
  // After the passes that add public functions.
  pm.addPass(createMoeEmitCInterface());
  pm.addPass(createMoeLowerToLoops());

  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  // The deallocation pipeline clones returned buffers it does not own
  // (constants, arguments), so the caller can always free a result.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Buffers by live range into one arena (the deallocation pipeline frees
  // each only at the end of its block).
  pm.addNestedPass<func::FuncOp>(createMoePlanBuffers());
  pm.addPass(createMoeCopiesToLinalg());
  // The large linalg ops as parallel loops, before they go to the threads.
  pm.addNestedPass<func::FuncOp>(createMoeParallelLinalg());
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 arithmetic as f32 between extf and truncf, then the truncations
  // LLVM cannot do natively as integer rounding: no __truncsfbf2 calls
  // (Passes.td); before convert-vector-to-llvm, which converts arith ops on
  // vectors too.
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  emulate.targetTypeStr = "f32";
  OpPassManager &perFunction = pm.nest<func::FuncOp>();
  perFunction.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  perFunction.addPass(createMoeExpandBf16Conversions());
  // The microkernel's vector ops (AVX-512 with the host's features;
  // x86vector for the AVX512_BF16 dot products).
  pm.addPass(createMoeApproximateVectorMath());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  // Before scf-to-cf: it inlines each memref.alloca_scope (per-iteration
  // stack scratch) between stacksave and stackrestore, and a scope may only
  // hold one block.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // Branches that carry AMX tiles, then the rest of cf.
  pm.addPass(createMoeConvertAmxToLLVM());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::moe::buildToLLVMPipeline(OpPassManager &pm) {
  buildToLLVMPipeline(pm, ToLLVMOptions());
}

void mlir::moe::registerCodegenPassesAndPipelines() {
  registerMoeCodegenPasses();
  registerMoeStrategyPasses();
  registerMoePassesAndPipelines();
  registerTransformsPasses();
  registerLinalgPasses();
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  memref::registerExpandStridedMetadataPass();
  registerLowerAffinePass();
  registerConvertBufferizationToMemRefPass();
  registerSCFToControlFlowPass();
  registerConvertMathToLLVMPass();
  registerConvertVectorToLLVMPass();
  registerFinalizeMemRefToLLVMConversionPass();
  registerArithToLLVMConversionPass();
  registerConvertIndexToLLVMPass();
  registerConvertFuncToLLVMPass();
  registerConvertControlFlowToLLVMPass();
  registerConvertSCFToOpenMPPass();
  registerConvertOpenMPToLLVMPass();
  registerReconcileUnrealizedCastsPass();
  arith::registerArithEmulateUnsupportedFloatsPass();
  PassPipelineRegistration<ToLLVMOptions>(
      "moe-to-llvm",
      "From the moe dialect to the LLVM dialect: expand blocks, lower the "
      "primitives to loops, bufferize, convert to LLVM",
      [](OpPassManager &pm, const ToLLVMOptions &options) {
        buildToLLVMPipeline(pm, options);
      });
}

void mlir::moe::registerCodegenInterfaces(DialectRegistry &registry) {
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}
