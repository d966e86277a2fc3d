//===- ExpandBlock.cpp - moe.block to primitive ops -----------------------===//

#include "dialect/MoeOps.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEEXPANDBLOCK
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

/// Builds the primitive ops of `op` before it and replaces it with them.
void expandBlock(RewriterBase &rewriter, BlockOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Routing route = buildRoute(rewriter, loc, op);
  Value out = buildRoutedExperts(rewriter, loc, op, op.getX(), route.ids, route.weights,
                                 op.getNumExperts(), op.getExpertGateUp(), op.getGateUpBias(),
                                 op.getExpertDown(), op.getDownBias());

  if (op.hasSharedExpert())
    out = arith::AddFOp::create(rewriter, loc, out,
                                buildSharedExpert(rewriter, loc, op, op.getX()));
  // Combine infers [T, H] from the weights; the block's type may carry a
  // more static token count from x.
  if (out.getType() != op.getType())
    out = tensor::CastOp::create(rewriter, loc, op.getType(), out);
  rewriter.replaceOp(op, out);
}

struct MoeExpandBlockPass
    : mlir::moe::impl::MoeExpandBlockBase<MoeExpandBlockPass> {
  using MoeExpandBlockBase::MoeExpandBlockBase;

  void runOnOperation() override {
    // One rewrite per block that cannot fail on verified IR, so a walk
    // suffices; folding and canonicalizing the result is the pipeline's job.
    SmallVector<BlockOp> blocks;
    getOperation()->walk([&](BlockOp op) { blocks.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (BlockOp op : blocks) {
      expandBlock(rewriter, op);
      ++numBlocksExpanded;
    }
  }
};

} // namespace
