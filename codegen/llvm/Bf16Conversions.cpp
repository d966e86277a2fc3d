//===- Bf16Conversions.cpp - the moe-expand-bf16-conversions pass -----------===//
//
// Rewrites the arith.truncf f32 -> bf16 that LLVM would turn into
// __truncsfbf2 calls, and the vector arith.extf bf16 -> f32 it would
// scalarize, with upstream's bf16 expansion patterns (Passes.td says why):
// the patterns are applied to those ops alone, so the vector truncations a
// CPU with AVX512_BF16 converts natively keep the instruction.
//
//===----------------------------------------------------------------------===//

#include "strategy/TargetCpu.h"
#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEEXPANDBF16CONVERSIONS
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
struct MoeExpandBf16ConversionsPass
    : mlir::moe::impl::MoeExpandBf16ConversionsBase<MoeExpandBf16ConversionsPass> {
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
          << "moe-expand-bf16-conversions: vectors must be auto, true or false (got '"
          << vectors << "')";
      return signalPassFailure();
    }
    SmallVector<Operation *> conversions;
    getOperation()->walk([&](Operation *op) {
      if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        if (getElementTypeOrSelf(trunc.getType()).isBF16() &&
            (expandVectors || !isa<VectorType>(trunc.getType())))
          conversions.push_back(op);
      } else if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
        // A widening is a 16-bit shift on any CPU: LLVM's x86 backend does
        // it for scalars but splits a vector one into scalar shifts and
        // spills (the bf16 weight pack at T 16 ran 7x slower than f32's).
        if (isa<VectorType>(ext.getType()) && getElementTypeOrSelf(ext.getIn().getType()).isBF16() &&
            getElementTypeOrSelf(ext.getType()).isF32())
          conversions.push_back(op);
      }
    });
    if (conversions.empty())
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyOpPatternsGreedily(conversions, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
