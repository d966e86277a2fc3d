//===- MoeCanonicalize.cpp - moe folders and canonicalization patterns ----===//
//
// Only rewrites that are exact: they change which ops compute a value, never
// the value (up to float rounding of mathematically equal expressions).
//
//===----------------------------------------------------------------------===//

#include "dialect/MoeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::moe;

//===----------------------------------------------------------------------===//
// moe.route: one canonical spelling for configurations that compute the same
//===----------------------------------------------------------------------===//

namespace {
/// Without null experts:
///  - softmax_then_topk with softmax scoring and renormalisation is exactly
///    topk_then_softmax (softmax over the K chosen logits), which needs no
///    softmax over all E columns;
///  - topk_then_softmax with softmax already sums to one: renormalize is a
///    no-op;
///  - with k = E every expert is chosen and the order of top-k and scoring
///    does not matter: the canonical order is topk_then_softmax.
struct CanonicalizeRouteConfig : OpRewritePattern<RouteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RouteOp op,
                                PatternRewriter &rewriter) const override {
    // Selection by (biased, grouped) scores is not selection by logits: the
    // orders are not interchangeable there.
    if (op.getNullExperts() != 0 || op.getSelectionBias() || op.getGroups() > 1)
      return failure();
    RouteOrder order = op.getOrder();
    bool renormalize = op.getRenormalize();
    bool softmax = op.getScoring() == Scoring::softmax;
    auto columns = cast<RankedTensorType>(op.getLogits().getType()).getDimSize(1);
    if (softmax && order == RouteOrder::softmax_then_topk && renormalize)
      order = RouteOrder::topk_then_softmax;
    if (!ShapedType::isDynamic(columns) && (int64_t)op.getK() == columns)
      order = RouteOrder::topk_then_softmax;
    if (softmax && order == RouteOrder::topk_then_softmax)
      renormalize = false;
    if (order == op.getOrder() && renormalize == op.getRenormalize())
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setOrder(order);
      op.setRenormalize(renormalize);
    });
    return success();
  }
};
} // namespace

void RouteOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add<CanonicalizeRouteConfig>(context);
}

//===----------------------------------------------------------------------===//
// moe.gmm / moe.tgmm: all groups empty
//===----------------------------------------------------------------------===//

namespace {
bool allGroupsEmpty(Value groupSizes) {
  DenseIntElementsAttr sizes;
  if (!matchPattern(groupSizes, m_Constant(&sizes)))
    return false;
  return llvm::all_of(sizes.getValues<APInt>(),
                      [](const APInt &v) { return v.isZero(); });
}

/// A zero tensor of `type`, taking dynamic sizes from `like` (same rank).
Value zerosLike(PatternRewriter &rewriter, Location loc, RankedTensorType type,
                Value like) {
  Value zero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, like, i));
  return tensor::SplatOp::create(rewriter, loc, zero, type, dynamicSizes);
}

/// With constant all-zero group sizes every row belongs to no group, so the
/// grouped matmul is all zeros and its weights are never read.
template <typename OpTy>
struct EmptyGroupsToZeros : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!allGroupsEmpty(op.getGroupSizes()))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    // gmm rows follow lhs; tgmm's result is fully static.
    rewriter.replaceOp(op, zerosLike(rewriter, op.getLoc(), type, op.getLhs()));
    return success();
  }
};
} // namespace

void GmmOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<EmptyGroupsToZeros<GmmOp>>(context);
}

void TgmmOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<EmptyGroupsToZeros<TgmmOp>>(context);
}

//===----------------------------------------------------------------------===//
// moe.swiglu: two halves of one tensor are the fused form
//===----------------------------------------------------------------------===//

namespace {
/// swiglu(h[:, 0:M], h[:, M:2M]) where h is [R, 2M] is swiglu(h): the fused
/// form reads h once and lets the fusion passes keep it in the gmm epilogue.
struct SwigluOfHalves : OpRewritePattern<SwigluOp> {
  using OpRewritePattern::OpRewritePattern;

  /// True when `slice` takes all rows of its source and columns
  /// [offset, offset + width) with unit strides.
  static bool isColumnBlock(tensor::ExtractSliceOp slice, int64_t offset,
                            int64_t width) {
    if (slice.getSourceType().getRank() != 2 ||
        slice.getResultType().getRank() != 2)
      return false;
    auto offsets = slice.getMixedOffsets();
    auto sizes = slice.getMixedSizes();
    auto strides = slice.getMixedStrides();
    if (!isConstantIntValue(offsets[0], 0) ||
        !isConstantIntValue(offsets[1], offset) ||
        !isConstantIntValue(sizes[1], width) ||
        !isConstantIntValue(strides[0], 1) || !isConstantIntValue(strides[1], 1))
      return false;
    int64_t rows = slice.getSourceType().getDimSize(0);
    if (!ShapedType::isDynamic(rows))
      return isConstantIntValue(sizes[0], rows);
    auto dim = dyn_cast_if_present<Value>(sizes[0]);
    auto dimOp = dim ? dim.getDefiningOp<tensor::DimOp>() : tensor::DimOp();
    return dimOp && dimOp.getSource() == slice.getSource() &&
           isConstantIntValue(dimOp.getIndex(), 0);
  }

  LogicalResult matchAndRewrite(SwigluOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2)
      return failure();
    auto gate = op.getInputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
    auto up = op.getInputs()[1].getDefiningOp<tensor::ExtractSliceOp>();
    if (!gate || !up || gate.getSource() != up.getSource())
      return failure();
    int64_t width = gate.getSourceType().getDimSize(1);
    if (ShapedType::isDynamic(width) || width % 2 != 0)
      return failure();
    if (!isColumnBlock(gate, 0, width / 2) ||
        !isColumnBlock(up, width / 2, width / 2))
      return failure();
    auto fused = SwigluOp::create(rewriter, op.getLoc(), ValueRange{gate.getSource()},
                                  op.getActivationAttr(), op.getAlphaAttr(), op.getLimitAttr(),
                                  /*interleaved=*/UnitAttr());
    // The slices may have carried a more static row count than the source.
    Value result = fused.getResult();
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, op.getLoc(), op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void SwigluOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<SwigluOfHalves>(context);
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult ScaleRowsOp::fold(FoldAdaptor adaptor) {
  // Scaling by exactly one is the identity.
  auto scale = dyn_cast_if_present<SplatElementsAttr>(adaptor.getScale());
  if (scale && scale.getSplatValue<APFloat>().isExactlyValue(1.0))
    return getInput();
  return {};
}

namespace {
/// A collective over axes whose shards multiply to one moves nothing.
bool isSingleShard(Operation *op, FlatSymbolRefAttr gridRef, ArrayAttr axes) {
  SymbolTableCollection symbols;
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, gridRef);
  auto names = grid ? grid->getAttrOfType<ArrayAttr>(kAxesAttrName) : nullptr;
  if (!names || axes.empty())
    return false;
  for (Attribute axis : axes) {
    auto it = llvm::find(names, axis);
    if (it == names.end())
      return false;
    if (grid.getShape()[std::distance(names.begin(), it)] != 1)
      return false;
  }
  return true;
}
} // namespace

OpFoldResult PsumOp::fold(FoldAdaptor) {
  return isSingleShard(*this, getGridAttr(), getAxes()) ? getInput() : Value();
}

OpFoldResult AllGatherOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() &&
      isSingleShard(*this, getGridAttr(), getAxes()))
    return getInput();
  return {};
}

OpFoldResult ReduceScatterOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() &&
      isSingleShard(*this, getGridAttr(), getAxes()))
    return getInput();
  return {};
}
