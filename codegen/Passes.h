//===- Passes.h - moe code generation passes and pipelines ------*- C++ -*-===//
#ifndef MOEC_CODEGEN_PASSES_H
#define MOEC_CODEGEN_PASSES_H

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "strategy/GmmStrategy.h"

namespace mlir {
class DialectRegistry;
namespace moe {

#define GEN_PASS_DECL
#include "codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/Passes.h.inc"

/// The options of `moe-to-llvm`: the target (moe-attach-target) and those of
/// moe-select-lowering (what moec and moe-bench expose as --gmm-strategy and
/// the tiles).
struct ToLLVMOptions : public PassPipelineOptions<ToLLVMOptions> {
  Option<std::string> targetCpu{*this, "target-cpu",
                                llvm::cl::desc("LLVM CPU to select the lowering for (empty: the "
                                               "module's #moe.target, else moec's, else the host)"),
                                llvm::cl::init("")};
  Option<strategy::GmmStrategy> gmmStrategy{*this, "gmm-strategy",
                                            llvm::cl::desc("which kernel kinds the gmms may use"),
                                            strategy::kGmmStrategyChoices.values(),
                                            llvm::cl::init(strategy::GmmStrategy::microkernel)};
  Option<std::string> gmmTiling{*this, "gmm-tiling",
                                llvm::cl::desc("gmm tiles, e.g. mr=6,nv=4,kc=256,nc=256,mc=192"),
                                llvm::cl::init("")};
  Option<std::string> tuningTable{*this, "tuning-table",
                                  llvm::cl::desc("tuning table to take gmm tiles from"),
                                  llvm::cl::init("")};
  Option<bool> prepareWeights{*this, "prepare-weights",
                              llvm::cl::desc("add <f>_prepare_weights and <f>_prepared: the gmm "
                                             "weights packed once, at load time (moe-prepare-weights)"),
                              llvm::cl::init(false)};
  Option<bool> stageTimers{*this, "stage-timers",
                           llvm::cl::desc("mark each stage of every function for the runtime's "
                                          "stage timer (moe-mark-stages)"),
                           llvm::cl::init(false)};
};

/// Its first part, on tensors: expand blocks, attach the target, select
/// every gmm's lowering, with `prepare-weights` add each public
/// function's prepared form, and with `stage-timers` mark each function's
/// stages. Running it twice changes nothing (a target and
/// lowerings written already are kept): a host reads the new functions'
/// signatures between this and moe-to-llvm.
void buildStrategyPipeline(OpPassManager &pm, const ToLLVMOptions &options);

/// The whole way from the moe dialect to the LLVM dialect: expand blocks,
/// lower the primitives to loops, bufferize, lower to LLVM. Public functions
/// get a C interface.
void buildToLLVMPipeline(OpPassManager &pm, const ToLLVMOptions &options);
void buildToLLVMPipeline(OpPassManager &pm);

/// Registers the codegen passes, the upstream passes `moe-to-llvm` uses, and
/// the `moe-to-llvm` pipeline.
void registerCodegenPassesAndPipelines();

/// Everything a context needs to run `moe-to-llvm`: bufferization and
/// to-LLVM interfaces of the upstream dialects involved.
void registerCodegenInterfaces(DialectRegistry &registry);

} // namespace moe
} // namespace mlir

#endif // MOEC_CODEGEN_PASSES_H
