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
// Spelled as a textual pipeline: it reads like the mlir-opt command a user
// would type to reproduce any stage, and `moec --emit=mlir --stop-after`
// style debugging maps one to one onto it.
static constexpr llvm::StringLiteral kExpand =
    "moe-expand-block,canonicalize,cse,"
    "moe-emit-c-interface";
// Between the two: moe-attach-target, moe-select-lowering with the
// pipeline's options, moe-lower-to-loops.
static constexpr llvm::StringLiteral kToLLVM =
    "func.func(convert-elementwise-to-linalg),"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "canonicalize,"
    "buffer-deallocation-pipeline,"
    // The deallocation pipeline clones returned buffers it does not own
    // (constants, arguments), so the caller can always free a result.
    "convert-bufferization-to-memref,"
    // Buffers by live range into one arena (the deallocation pipeline frees
    // each only at the end of its block).
    "func.func(moe-plan-buffers),"
    "moe-copies-to-linalg,"
    "convert-scf-to-openmp,"
    "convert-linalg-to-loops,"
    "expand-strided-metadata,lower-affine,"
    // bf16 arithmetic as f32 between extf and truncf, then the truncations
    // LLVM cannot do natively as integer rounding: no __truncsfbf2 calls
    // (Passes.td); before convert-vector-to-llvm, which converts arith
    // ops on vectors too.
    "func.func(arith-emulate-unsupported-floats{source-types=bf16 target-type=f32},"
    "moe-expand-bf16-truncation),"
    // The microkernel's vector ops (AVX-512 with the host's features;
    // x86vector for the AVX512_BF16 dot products).
    "moe-approximate-vector-math,convert-vector-to-llvm{enable-x86vector},"
    // Before scf-to-cf: it inlines each memref.alloca_scope (per-iteration
    // stack scratch) between stacksave and stackrestore, and a scope may
    // only hold one block.
    "finalize-memref-to-llvm,"
    "convert-scf-to-cf,convert-math-to-llvm,"
    "convert-arith-to-llvm,convert-index-to-llvm,"
    "convert-func-to-llvm,"
    // Branches that carry AMX tiles, then the rest of cf.
    "moe-convert-amx-to-llvm,convert-cf-to-llvm,convert-openmp-to-llvm,"
    "reconcile-unrealized-casts";

void mlir::moe::buildToLLVMPipeline(OpPassManager &pm, const ToLLVMOptions &options) {
  if (failed(parsePassPipeline(kExpand, pm)))
    llvm::report_fatal_error("moe-to-llvm refers to an unregistered pass");
  // The strategy, decided and written into the IR, then followed.
  MoeAttachTargetOptions target;
  target.cpu = options.targetCpu;
  pm.addPass(createMoeAttachTarget(target));
  MoeSelectLoweringOptions select;
  select.gmmStrategy = options.gmmStrategy;
  select.gmmTiling = options.gmmTiling;
  select.tuningTable = options.tuningTable;
  pm.addPass(createMoeSelectLowering(select));
  pm.addPass(createMoeLowerToLoops());
  if (failed(parsePassPipeline(kToLLVM, pm)))
    llvm::report_fatal_error("moe-to-llvm refers to an unregistered pass");
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
