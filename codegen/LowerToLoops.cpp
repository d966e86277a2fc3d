//===- LowerToLoops.cpp - the moe-lower-to-loops pass ---------------------===//

#include "codegen/Lowerings.h"
#include "codegen/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOELOWERTOLOOPS
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {
struct MoeLowerToLoopsPass
    : mlir::moe::impl::MoeLowerToLoopsBase<MoeLowerToLoopsPass> {
  using MoeLowerToLoopsBase::MoeLowerToLoopsBase;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<MoeDialect>(op->getDialect()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    bool failed = false;
    for (Operation *op : ops) {
      llvm::TypeSwitch<Operation *>(op)
          .Case([&](RouteOp o) { codegen::lowerRoute(rewriter, o); })
          .Case([&](PackOp o) { codegen::lowerPack(rewriter, o); })
          .Case([&](GatherRowsOp o) { codegen::lowerGatherRows(rewriter, o); })
          .Case([&](GmmOp o) { codegen::lowerGmm(rewriter, o); })
          .Case([&](TgmmOp o) { codegen::lowerTgmm(rewriter, o); })
          .Case([&](SwigluOp o) { codegen::lowerSwiglu(rewriter, o); })
          .Case([&](SwigluGradOp o) { codegen::lowerSwigluGrad(rewriter, o); })
          .Case([&](ScaleRowsOp o) { codegen::lowerScaleRows(rewriter, o); })
          .Case([&](CombineOp o) { codegen::lowerCombine(rewriter, o); })
          .Case([&](BlockOp o) {
            o.emitError("moe.block must be expanded before lowering (run "
                        "-moe-expand-block first, or the moe-to-llvm pipeline)");
            failed = true;
          })
          .Default([&](Operation *o) {
            o->emitError() << "'" << o->getName()
                           << "' is a collective and has no single-device "
                              "lowering; compile the per-shard program with "
                              "a sharded pipeline";
            failed = true;
          });
    }
    if (failed)
      signalPassFailure();
  }
};
} // namespace
