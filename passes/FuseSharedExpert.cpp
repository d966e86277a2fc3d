//===- FuseSharedExpert.cpp - the moe-fuse-shared-expert pass -------------===//

#include "dialect/MoeOps.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEFUSESHAREDEXPERT
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

//===----------------------------------------------------------------------===//
// mode=matmul
//===----------------------------------------------------------------------===//

/// The zero-filled accumulator a matmul starts from, or null.
linalg::FillOp zeroInit(linalg::MatmulOp mm) {
  auto fill = mm.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return nullptr;
  return fill;
}

/// swiglu(x @ sw1, x @ sw3), both from zero, becomes swiglu(x @ [sw1 | sw3]).
struct FuseSharedGateUp : OpRewritePattern<SwigluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SwigluOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2)
      return failure();
    auto gate = op.getInputs()[0].getDefiningOp<linalg::MatmulOp>();
    auto up = op.getInputs()[1].getDefiningOp<linalg::MatmulOp>();
    if (!gate || !up || gate == up || gate->getBlock() != up->getBlock() ||
        gate.getInputs()[0] != up.getInputs()[0] || !gate->hasOneUse() ||
        !up->hasOneUse() || !zeroInit(gate) || !zeroInit(up) ||
        gate.getResultTypes() != up.getResultTypes())
      return failure();
    rewriter.setInsertionPoint(gate->isBeforeInBlock(up) ? up : gate);
    Location loc = op.getLoc();
    Value sw13 = concatWeights(rewriter, loc, gate.getInputs()[1], up.getInputs()[1], /*dim=*/1);
    Value h = matmulF32(rewriter, loc, gate.getInputs()[0], sw13);
    rewriter.setInsertionPoint(op);
    Value act = SwigluOp::create(rewriter, loc, ValueRange{h}, op.getActivationAttr(),
                                 op.getAlphaAttr(), op.getLimitAttr(), /*interleaved=*/UnitAttr());
    if (act.getType() != op.getType())
      act = tensor::CastOp::create(rewriter, loc, op.getType(), act);
    rewriter.replaceOp(op, act);
    rewriter.eraseOp(gate);
    rewriter.eraseOp(up);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// mode=grouped
//===----------------------------------------------------------------------===//

/// `w [rows, cols]` zero-padded to `[rows, newCols]` (or `[newRows, cols]`).
Value padTo(OpBuilder &b, Location loc, Value w, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(w.getType());
  if (type.getShape() == shape)
    return w;
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  Value filled = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  SmallVector<int64_t> offsets(shape.size(), 0), strides(shape.size(), 1);
  MLIRContext *ctx = b.getContext();
  return tensor::InsertSliceOp::create(b, loc, w, filled, getAsIndexOpFoldResult(ctx, offsets),
                                       getAsIndexOpFoldResult(ctx, type.getShape()),
                                       getAsIndexOpFoldResult(ctx, strides));
}

/// Columns [offset, offset + width) of a 2-D weight.
Value columns(OpBuilder &b, Location loc, Value w, int64_t offset, int64_t width) {
  auto type = cast<RankedTensorType>(w.getType());
  SmallVector<int64_t> offsets = {0, offset}, sizes = {type.getDimSize(0), width},
                       strides = {1, 1};
  MLIRContext *ctx = b.getContext();
  return tensor::ExtractSliceOp::create(b, loc, w, getAsIndexOpFoldResult(ctx, offsets),
                                        getAsIndexOpFoldResult(ctx, sizes),
                                        getAsIndexOpFoldResult(ctx, strides));
}

/// A shared projection [H, S] as c experts [c, H, M]: pad to c * M columns,
/// split the columns into c blocks, move the block index first.
Value asExperts(OpBuilder &b, Location loc, Value w, int64_t c, int64_t m) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t h = type.getDimSize(0);
  Type element = type.getElementType();
  Value padded = padTo(b, loc, w, {h, c * m});
  auto split = RankedTensorType::get({h, c, m}, element);
  Value blocks = tensor::ExpandShapeOp::create(b, loc, split, padded,
                                               ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{c, h, m}, element);
  return linalg::TransposeOp::create(b, loc, blocks, init, ArrayRef<int64_t>{1, 0, 2})
      .getResult()[0];
}

void expandWithSharedGroups(RewriterBase &rw, BlockOp op) {
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value x = op.getX();
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  int64_t hidden = xType.getDimSize(1), experts = op.getNumExperts(),
          mlp = op.getExpertDim(), shared = op.getSharedDim();
  int64_t c = (shared + mlp - 1) / mlp;

  // Routing, then c more slots per token: experts E..E+c-1 with weight 1.
  // Null ids (>= E) move past the new experts.
  Routing route = buildRoute(rw, loc, op);
  auto idsType = cast<RankedTensorType>(route.ids.getType());
  SmallVector<Value> dyn;
  if (idsType.isDynamicDim(0))
    dyn.push_back(tensor::DimOp::create(rw, loc, route.ids, 0));
  auto i32 = rw.getI32Type();
  auto splatI32 = [&](int64_t v, RankedTensorType type) -> Value {
    Value s = arith::ConstantOp::create(rw, loc, rw.getI32IntegerAttr(v));
    return tensor::SplatOp::create(rw, loc, s, type, dyn);
  };
  Value isNull = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::sge, route.ids,
                                       splatI32(experts, idsType));
  Value shifted = arith::AddIOp::create(rw, loc, route.ids, splatI32(c, idsType));
  Value ids = arith::SelectOp::create(rw, loc, isNull, shifted, route.ids);
  auto extraType = RankedTensorType::get({idsType.getDimSize(0), c}, i32);
  Value extraIds = tensor::GenerateOp::create(
      rw, loc, extraType, dyn, [&](OpBuilder &b, Location l, ValueRange idx) {
        Value id = arith::AddIOp::create(b, l, idx[1], arith::ConstantIndexOp::create(b, l, experts));
        tensor::YieldOp::create(b, l, arith::IndexCastOp::create(b, l, i32, id).getResult());
      });
  Value one = arith::ConstantOp::create(rw, loc, rw.getF32FloatAttr(1.0f));
  Value extraWeights = tensor::SplatOp::create(
      rw, loc, one, RankedTensorType::get(extraType.getShape(), rw.getF32Type()), dyn);
  auto concatColumns = [&](Value a, Value b) -> Value {
    auto t = cast<RankedTensorType>(a.getType());
    auto type = RankedTensorType::get({t.getDimSize(0), t.getDimSize(1) + c}, t.getElementType());
    return tensor::ConcatOp::create(rw, loc, type, 1, ValueRange{a, b});
  };
  Value allIds = concatColumns(ids, extraIds);
  Value allWeights = concatColumns(route.weights, extraWeights);

  // Weights: [E + c, H, 2M] and [E + c, M, H].
  auto gateUp = op.getExpertGateUp();
  Value w13 = gateUp.size() == 1 ? gateUp[0] : concatWeights(rw, loc, gateUp[0], gateUp[1], 2);
  auto sharedGateUp = op.getSharedGateUp();
  Value sgate = sharedGateUp.size() == 2 ? sharedGateUp[0]
                                         : columns(rw, loc, sharedGateUp[0], 0, shared);
  Value sup = sharedGateUp.size() == 2 ? sharedGateUp[1]
                                       : columns(rw, loc, sharedGateUp[0], shared, shared);
  Value shared13 = concatWeights(rw, loc, asExperts(rw, loc, sgate, c, mlp),
                                 asExperts(rw, loc, sup, c, mlp), 2);
  Value allW13 = concatWeights(rw, loc, w13, shared13, 0);
  Value sw2 = padTo(rw, loc, op.getSharedDown(), {c * mlp, hidden});
  Value sharedDown = tensor::ExpandShapeOp::create(
      rw, loc, RankedTensorType::get({c, mlp, hidden}, element), sw2,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value allW2 = concatWeights(rw, loc, op.getExpertDown(), sharedDown, 0);

  // The routed block over E + c experts.
  Value out = buildRoutedExperts(rw, loc, op, op.getX(), allIds, allWeights, experts + c,
                                 ValueRange{allW13}, /*gateUpBias=*/Value(), allW2,
                                 /*downBias=*/Value());
  // Said on the gmms: moe-quantize{mode=int8_routed} must not quantize
  // the shared expert with the routed ones.
  for (Value w : {allW13, allW2})
    for (Operation *user : w.getUsers())
      if (isa<GmmOp>(user))
        user->setAttr(kSharedGroupsAttrName, rw.getI64IntegerAttr(c));
  if (out.getType() != op.getType())
    out = tensor::CastOp::create(rw, loc, op.getType(), out);
  rw.replaceOp(op, out);
}

struct MoeFuseSharedExpertPass
    : mlir::moe::impl::MoeFuseSharedExpertBase<MoeFuseSharedExpertPass> {
  using MoeFuseSharedExpertBase::MoeFuseSharedExpertBase;
  void runOnOperation() override {
    if (mode == "matmul") {
      RewritePatternSet patterns(&getContext());
      patterns.add<FuseSharedGateUp>(&getContext());
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        signalPassFailure();
      return;
    }
    if (mode != "grouped") {
      getOperation()->emitError() << "moe-fuse-shared-expert: mode must be 'matmul' or "
                                     "'grouped', got '"
                                  << mode << "'";
      return signalPassFailure();
    }
    SmallVector<BlockOp> blocks;
    getOperation()->walk([&](BlockOp op) {
      // The shared groups run the routed experts' MLP with weight 1: not
      // for a block whose routed experts differ from a plain SwiGLU MLP
      // (biases, GPT-OSS's activation) or whose shared expert is gated
      // (Qwen2-MoE). Those keep their shared expert as it is.
      bool plainExperts = op.getActivation() == Activation::swiglu && !op.getInterleaved() &&
                          !op.getGateUpBias() && !op.getDownBias();
      if (op.hasSharedExpert() && plainExperts && !op.getSharedGate())
        blocks.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (BlockOp op : blocks)
      expandWithSharedGroups(rewriter, op);
  }
};

} // namespace
