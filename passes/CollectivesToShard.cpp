//===- CollectivesToShard.cpp - named-axis collectives to shard ops -------===//

#include "dialect/MoeOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOECOLLECTIVESTOSHARD
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

struct MoeCollectivesToShardPass
    : mlir::moe::impl::MoeCollectivesToShardBase<MoeCollectivesToShardPass> {
  using MoeCollectivesToShardBase::MoeCollectivesToShardBase;

  void runOnOperation() override {
    SymbolTableCollection symbols;
    IRRewriter rewriter(&getContext());
    bool failedAny = false;

    // Resolves the op's axis names to shard.grid axis indices; the verifier
    // has already checked them, so a failure here means unverified input.
    auto axesOf = [&](Operation *op, FlatSymbolRefAttr grid,
                      ArrayAttr axes) -> DenseI16ArrayAttr {
      auto resolved = resolveGridAxes(op, symbols, grid, axes);
      if (failed(resolved)) {
        failedAny = true;
        return nullptr;
      }
      return rewriter.getDenseI16ArrayAttr(resolved->indices);
    };
    auto sum = shard::ReductionKindAttr::get(&getContext(),
                                             shard::ReductionKind::Sum);

    getOperation()->walk([&](Operation *op) {
      rewriter.setInsertionPoint(op);
      if (auto psum = dyn_cast<PsumOp>(op)) {
        auto axes = axesOf(op, psum.getGridAttr(), psum.getAxes());
        if (!axes)
          return;
        rewriter.replaceOpWithNewOp<shard::AllReduceOp>(
            op, psum.getType(), psum.getGridAttr(), axes, psum.getInput(), sum);
      } else if (auto gather = dyn_cast<AllGatherOp>(op)) {
        auto axes = axesOf(op, gather.getGridAttr(), gather.getAxes());
        if (!axes)
          return;
        rewriter.replaceOpWithNewOp<shard::AllGatherOp>(
            op, gather.getType(), gather.getGridAttr(), axes, gather.getInput(),
            rewriter.getIndexAttr(gather.getDim()));
      } else if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
        auto axes = axesOf(op, scatter.getGridAttr(), scatter.getAxes());
        if (!axes)
          return;
        rewriter.replaceOpWithNewOp<shard::ReduceScatterOp>(
            op, scatter.getType(), scatter.getGridAttr(), axes,
            scatter.getInput(), sum, rewriter.getIndexAttr(scatter.getDim()));
      }
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
