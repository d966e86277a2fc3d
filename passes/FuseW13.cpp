//===- FuseW13.cpp - the moe-fuse-w13 pass --------------------------------===//

#include "dialect/MoeOps.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEFUSEW13
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {
struct FuseGateUpGmms : OpRewritePattern<SwigluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SwigluOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2)
      return failure();
    auto gate = op.getInputs()[0].getDefiningOp<GmmOp>();
    auto up = op.getInputs()[1].getDefiningOp<GmmOp>();
    // Same rows, same groups, forward form, and nobody else reads the two
    // halves (a backward would need them apart).
    if (!gate || !up || gate == up || gate->getBlock() != up->getBlock() ||
        gate.getLhs() != up.getLhs() ||
        gate.getGroupSizes() != up.getGroupSizes() || gate.getTransposeRhs() ||
        up.getTransposeRhs() || !gate->hasOneUse() || !up->hasOneUse())
      return failure();
    // int8 weights keep their own scales (per expert ones cannot be
    // concatenated); the microkernel fuses the two-gmm form as it is. Fuse
    // before moe-quantize instead.
    if (gate.isQuantized() || up.isQuantized())
      return failure();
    // A block gives a bias to one fused gate_up only; two biased gmms stay.
    if (gate.getBias() || up.getBias())
      return failure();
    // At the later of the two, where every operand of both is defined.
    rewriter.setInsertionPoint(gate->isBeforeInBlock(up) ? up : gate);
    Value w13 = concatWeights(rewriter, op.getLoc(), gate.getRhs(), up.getRhs(), /*dim=*/2);
    auto gmm = GmmOp::create(rewriter, gate.getLoc(), gate.getLhs(), w13, gate.getGroupSizes());
    rewriter.setInsertionPoint(op);
    Value act = SwigluOp::create(rewriter, op.getLoc(), ValueRange{gmm}, op.getActivationAttr(),
                                 op.getAlphaAttr(), op.getLimitAttr(), /*interleaved=*/UnitAttr());
    if (act.getType() != op.getType())
      act = tensor::CastOp::create(rewriter, op.getLoc(), op.getType(), act);
    rewriter.replaceOp(op, act);
    rewriter.eraseOp(gate);
    rewriter.eraseOp(up);
    return success();
  }
};

struct MoeFuseW13Pass : mlir::moe::impl::MoeFuseW13Base<MoeFuseW13Pass> {
  using MoeFuseW13Base::MoeFuseW13Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseGateUpGmms>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
