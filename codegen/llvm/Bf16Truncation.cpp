//===- Bf16Truncation.cpp - the moe-expand-bf16-truncation pass -----------===//
//
// Rewrites the arith.truncf f32 -> bf16 that LLVM would turn into
// __truncsfbf2 calls with upstream's bf16 expansion patterns (Passes.td
// says why): the patterns are applied to those ops alone, so the vector
// truncations a CPU with AVX512_BF16 converts natively keep the instruction.
//
//===----------------------------------------------------------------------===//

#include "strategy/TargetCpu.h"
#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEEXPANDBF16TRUNCATION
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
struct MoeExpandBf16TruncationPass
    : mlir::moe::impl::MoeExpandBf16TruncationBase<MoeExpandBf16TruncationPass> {
  using Base::Base;

  void runOnOperation() override {
    bool expandVectors;
    if (vectors == "auto") {
      // The module's #moe.target where it has one (moe-attach-target).
      auto module = isa<ModuleOp>(getOperation()) ? cast<ModuleOp>(getOperation())
                                                  : getOperation()->getParentOfType<ModuleOp>();
      auto target = module ? module->getAttrOfType<mlir::moe::TargetAttr>(mlir::moe::kTargetAttrName)
                           : mlir::moe::TargetAttr();
      expandVectors = target ? !target.hasFeature("avx512bf16")
                             : !mlir::moe::strategy::targetCpuFeatures().lookup("avx512bf16");
    }
    else if (vectors == "true" || vectors == "false")
      expandVectors = vectors == "true";
    else {
      emitError(getOperation()->getLoc())
          << "moe-expand-bf16-truncation: vectors must be auto, true or false (got '"
          << vectors << "')";
      return signalPassFailure();
    }
    SmallVector<Operation *> truncations;
    getOperation()->walk([&](arith::TruncFOp op) {
      if (getElementTypeOrSelf(op.getType()).isBF16() &&
          (expandVectors || !isa<VectorType>(op.getType())))
        truncations.push_back(op);
    });
    if (truncations.empty())
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyOpPatternsGreedily(truncations, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
