//===- GenerateBackward.cpp - the moe-generate-backward pass --------------===//
//
// Reverse-mode differentiation of a block function, op by op, into a new
// function `<name>_forward_backward` next to it: the forward as written
// (moe.block expanded first), then the adjoint of every op in reverse order.
// Every forward value stays available to the backward (remat policy `none`:
// the backward reads what the forward computed); which of them to recompute
// instead is the remat pass's business.
//
// The adjoint rules (shared/docs/moe-semantics.md, section 1, "Backward"):
//   y = combine(rows, perm, w)      d rows = scale_rows(gather_rows(dy, perm), w sorted)
//                                   (preweighted: no scale)
//   rows = pack(x, ...)             d x = combine(d rows, perm, w) preweighted:
//   rows = gather_rows(x, perm)       each token sums its K row gradients
//   out = gmm(lhs, rhs)             d lhs = gmm(d out, rhs) transpose_rhs,
//                                   d rhs = tgmm(lhs, d out)
//   out = gmm(lhs, rhs) transposed  d lhs = gmm(d out, rhs), d rhs = tgmm(d out, lhs)
//   a = swiglu(h)                   d h = swiglu_grad(d a, h)
//   out = scale_rows(in, s)         d in = scale_rows(d out, s) (d s below)
//   out = gmm(lhs, rhs) + bias      d bias[e] = column sums of group e of d out
//                                   (tgmm of a column of ones)
//   s = sigmoid(z) (shared gate)    d z = d s * s * (1 - s); its scale_rows
//                                   gives d s = rowdot(d out, in) always
//   logits = x @ r + broadcast(b)   d b = the column sums of d logits
//   C = matmul(A, B) (shared expert) d A = d C B^T, d B = A^T d C
//   truncf / extf / addf            the cast back / both operands
//   out = gmm(lhs, quantize(w))     int8, straight-through: d lhs = gmm(d out,
//                                   dequantize(w), transpose_rhs), d w =
//                                   tgmm(lhs, d out) in float
//   fake_quant, dequantize(quantize) the identity (straight-through)
//   psum / all_gather / reduce_scatter / all_to_all (per shard, loss summed
//                                   over shards): psum / reduce_scatter /
//                                   all_gather / all_to_all back by recv_counts
// Routing is fixed by default, as in the seeds' forward_backward: route, the
// routing weights and the permutation get no gradient. With routing-grad
// (the permutation and ids stay fixed: the top-k is piecewise constant):
//   y = combine(rows, perm, w)      d w = scatter_slots(rowdot(gather_rows(dy, perm), rows))
//   out = scale_rows(in, s)         d s = rowdot(d out, in)
//   sorted w = pack(...)            d w = scatter_slots(d sorted w, perm)
//   ids, w = route(logits)          d logits = route_grad(d w, logits)
//
// Why by hand: upstream MLIR has no automatic differentiation (Enzyme works
// on LLVM IR, where the grouped structure the backward gmms need is gone).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/PassUtils.h"

#include "dialect/MoeOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEGENERATEBACKWARD
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

/// A new tensor shaped like `like` with element type `element`.
Value emptyLike(OpBuilder &b, Location loc, Value like, Type element) {
  return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, like), element);
}

/// A tensor shaped like `like` filled with the constant `value` (its type
/// is the element type).
Value filledLike(OpBuilder &b, Location loc, Value like, TypedAttr value) {
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, emptyLike(b, loc, like, value.getType()))
      .getResult(0);
}

/// a + b, folded when both are constants.
OpFoldResult addIndex(OpBuilder &b, Location loc, OpFoldResult a, OpFoldResult c) {
  std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(c);
  if (x && y)
    return b.getIndexAttr(*x + *y);
  auto value = [&](OpFoldResult v) -> Value {
    if (auto k = getConstantIntValue(v))
      return arith::ConstantIndexOp::create(b, loc, *k);
    return cast<Value>(v);
  };
  return arith::AddIOp::create(b, loc, value(a), value(c)).getResult();
}

/// [rows, cols] -> [cols, rows].
Value transposed(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  std::swap(sizes[0], sizes[1]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, init, ArrayRef<int64_t>{1, 0}).getResult()[0];
}

/// [E, N]: the column sums of each group's rows of `rows [R, N]` (a gmm
/// bias's gradient), as the tgmm of a column of ones: the grouped kernels
/// already walk the groups.
Value groupColumnSums(OpBuilder &b, Location loc, Value rows, Value sizes) {
  auto type = cast<RankedTensorType>(rows.getType());
  Type element = type.getElementType();
  SmallVector<OpFoldResult> shape = {tensor::getMixedSizes(b, loc, rows)[0], b.getIndexAttr(1)};
  Value ones = linalg::FillOp::create(
                   b, loc, arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 1.0)).getResult(),
                   tensor::EmptyOp::create(b, loc, shape, element).getResult())
                   .getResult(0);
  Value sums = TgmmOp::create(b, loc, ones, rows, sizes);
  return tensor::CollapseShapeOp::create(b, loc, sums, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
}

/// The adjoints of the values of one function, summed as they arrive.
class Adjoints {
public:
  Adjoints(OpBuilder &b) : b(b) {}
  void add(Location loc, Value of, Value grad) {
    grad = castTo(b, loc, grad, of.getType());
    auto [it, inserted] = map.try_emplace(of, grad);
    if (!inserted)
      it->second = arith::AddFOp::create(b, loc, it->second, grad);
  }
  Value get(Value of) const { return map.lookup(of); }

private:
  OpBuilder &b;
  DenseMap<Value, Value> map;
};

/// The routing weights sorted like the rows of `perm`: pack's sorted weights
/// when a pack made `perm` from `weights`, else gathered (w[perm[r]]).
Value sortedWeights(OpBuilder &b, Location loc, Value perm, Value weights) {
  if (auto pack = perm.getDefiningOp<PackOp>(); pack && pack.getWeights() == weights)
    return pack.getSortedWeights();
  auto weightsType = cast<RankedTensorType>(weights.getType());
  int64_t flat = weightsType.isDynamicDim(0) ? ShapedType::kDynamic
                                              : weightsType.getDimSize(0) * weightsType.getDimSize(1);
  auto column = RankedTensorType::get({flat, 1}, weightsType.getElementType());
  Value asRows = tensor::CollapseShapeOp::create(b, loc, weights, ArrayRef<ReassociationIndices>{{0, 1}});
  asRows = tensor::ExpandShapeOp::create(b, loc, column, asRows,
                                         ArrayRef<ReassociationIndices>{{0, 1}});
  Value gathered = GatherRowsOp::create(b, loc, asRows, perm, b.getI64IntegerAttr(1));
  return tensor::CollapseShapeOp::create(b, loc, gathered, ArrayRef<ReassociationIndices>{{0, 1}});
}

/// The per-token sum of the K row gradients `drows` (pack's and
/// gather_rows' adjoint): a combine of unweighted rows. `tokenWeights`
/// [T, K] only gives combine T and K; preweighted, it reads no values.
Value sumTokenRows(OpBuilder &b, Location loc, Value drows, Value perm, Value tokenWeights) {
  return CombineOp::create(b, loc, drows, perm, tokenWeights, CombineStrategy::unsort,
                           /*preweighted=*/true);
}

/// Zeros [T, K] for the T rows of `tokens`: the shape operand of
/// sumTokenRows where no routing weights are at hand.
Value zeroTokenWeights(OpBuilder &b, Location loc, Value tokens, int64_t k) {
  auto f32 = b.getF32Type();
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSizes(b, loc, tokens)[0], b.getIndexAttr(k)};
  Value empty = tensor::EmptyOp::create(b, loc, sizes, f32);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// out[r] = sum_h a[r, h] * b[r, h] in f32: the gradient of a per-row
/// scale. A plain linalg.generic: upstream's loops are all it needs.
Value rowDot(OpBuilder &b, Location loc, Value a, Value bv) {
  auto f32 = b.getF32Type();
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> size = {tensor::getMixedSizes(b, loc, a)[0]};
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
  Value init =
      linalg::FillOp::create(b, loc, zero, tensor::EmptyOp::create(b, loc, size, f32).getResult())
          .getResult(0);
  AffineMap both = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{a, bv}, ValueRange{init},
             ArrayRef<AffineMap>{both, both, row},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               auto widen = [&](Value v) -> Value {
                 return v.getType() == f32 ? v : arith::ExtFOp::create(nb, nl, f32, v).getResult();
               };
               Value product = arith::MulFOp::create(nb, nl, widen(args[0]), widen(args[1]));
               linalg::YieldOp::create(nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[2], product)});
             })
      .getResult(0);
}

/// Where a per-shard function (moe-partition) runs: its grid and how each
/// of its tensors lies on it. The backward of such a function is that of the
/// global loss: the loss sums over the shards that hold distinct parts of y
/// and counts the global elements; every shard holding a replica of y seeds
/// 1/replicas of the cotangent (the collectives' adjoints sum over shards);
/// the gradient of an argument replicated over some axes is the sum of its
/// replicas' gradients (a psum over them), of a split one the shard's part.
struct ShardPlacement {
  FunctionMesh mesh;

  /// The axes splitting some dimension of a tensor with these attributes.
  static SmallVector<StringRef> splitAxes(DictionaryAttr attrs, Type type) {
    SmallVector<StringRef> split;
    for (const auto &axes : moe::splitAxes(attrs, cast<RankedTensorType>(type).getRank()))
      llvm::append_range(split, axes);
    return split;
  }

  /// The grid's axes such a tensor is replicated on, in grid order.
  SmallVector<StringRef> replicatedAxes(DictionaryAttr attrs, Type type) const {
    SmallVector<StringRef> split = splitAxes(attrs, type), replicated;
    for (StringRef axis : mesh.axes)
      if (!llvm::is_contained(split, axis))
        replicated.push_back(axis);
    return replicated;
  }

  int64_t shards(ArrayRef<StringRef> over) const {
    int64_t n = 1;
    for (StringRef axis : over)
      n *= mesh.sizes[llvm::find(mesh.axes, axis) - mesh.axes.begin()];
    return n;
  }

  /// `v` summed over the shards of `over` (itself when `over` is empty).
  Value sum(OpBuilder &b, Location loc, Value v, ArrayRef<StringRef> over) const {
    if (over.empty())
      return v;
    return PsumOp::create(b, loc, v, mesh.grid, b.getStrArrayAttr(over));
  }
};

struct GenerateBackward : moe::impl::MoeGenerateBackwardBase<GenerateBackward> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> sources;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn.isPrivate() || fn->hasAttr(kGradientArgs))
        continue;
      if (!functions.empty() && !llvm::is_contained(functions, fn.getSymName()))
        continue;
      bool hasMoe = false;
      fn.walk([&](Operation *op) { hasMoe |= isa<MoeDialect>(op->getDialect()); });
      if (hasMoe || !functions.empty())
        sources.push_back(fn);
    }
    for (StringRef name : functions)
      if (!module.lookupSymbol<func::FuncOp>(name)) {
        module.emitError() << "moe-generate-backward: no function @" << name;
        return signalPassFailure();
      }
    for (func::FuncOp fn : sources)
      if (failed(generate(fn)))
        return signalPassFailure();
  }

  static constexpr StringLiteral kGradientArgs = kGradientArgsAttrName;

  LogicalResult generate(func::FuncOp source) {
    ModuleOp module = getOperation();
    std::string name = (source.getSymName() + "_forward_backward").str();
    if (module.lookupSymbol(name))
      return source.emitError() << "moe-generate-backward: @" << name << " exists already";
    if (source.getNumResults() != 1 || !isa<RankedTensorType>(source.getResultTypes()[0]) ||
        cast<RankedTensorType>(source.getResultTypes()[0]).getRank() != 2)
      return source.emitError() << "moe-generate-backward: @" << source.getSymName()
                                << " must return one [tokens, hidden] tensor, the block output";
    if (!source.getBody().hasOneBlock())
      return source.emitError() << "moe-generate-backward: @" << source.getSymName()
                                << " has control flow; only straight-line blocks are differentiated";

    std::optional<ShardPlacement> placement;
    if (std::optional<FunctionMesh> mesh = functionMesh(source))
      placement = ShardPlacement{*mesh};
    DictionaryAttr ySplit = source.getResultAttrDict(0);
    Type yType = source.getResultTypes()[0];

    OpBuilder mb(module.getContext());
    mb.setInsertionPointAfter(source);
    auto fb = cast<func::FuncOp>(mb.clone(*source));
    fb.setSymName(name);
    // moe.block to the primitives the rules know.
    OpPassManager expand(func::FuncOp::getOperationName());
    expand.addPass(createMoeExpandBlock());
    if (failed(runPipeline(expand, fb)))
      return failure();

    Block &body = fb.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value y = ret.getOperand(0);
    Location loc = ret.getLoc();
    OpBuilder b(ret);
    Adjoints adjoints(b);

    // The forward's ops, last first (collected before the loss adds any).
    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);

    // The loss and the seed: mean(y^2) with dy = 2 y / (T H), or the
    // caller's cotangent; per shard, the global loss and 1/replicas of its
    // cotangent on each replica of y (ShardPlacement).
    SmallVector<StringRef> yShards, yReplicas;
    if (placement) {
      yShards = ShardPlacement::splitAxes(ySplit, yType);
      yReplicas = placement->replicatedAxes(ySplit, yType);
    }
    int64_t replicas = placement ? placement->shards(yReplicas) : 1;
    Value first;
    if (loss == BackwardLoss::cotangent) {
      Value dy = body.addArgument(y.getType(), loc);
      // The caller's dy must be shaped like y: where y's size is dynamic
      // (the tokens) only the inputs decide it, so the check is made at run
      // time; unchecked, a shorter dy would be read past its end.
      auto yType = cast<RankedTensorType>(y.getType());
      for (int64_t d = 0; d < yType.getRank(); ++d) {
        if (!yType.isDynamicDim(d))
          continue;
        Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           tensor::DimOp::create(b, loc, y, d),
                                           tensor::DimOp::create(b, loc, dy, d));
        cf::AssertOp::create(b, loc, same,
                             "the cotangent dy differs from y in dimension " +
                                 std::to_string(d));
      }
      adjoints.add(loc, y, scaled(b, loc, dy, 1.0 / double(replicas)));
      first = y;
    } else {
      auto [lossValue, dy] = meanSquare(b, loc, y, placement, yShards, replicas);
      adjoints.add(loc, y, dy);
      first = lossValue;
    }

    for (Operation *op : llvm::reverse(forward)) {
      if (op->getBlock() != &body || isa<func::ReturnOp>(op))
        continue;
      if (llvm::none_of(op->getResults(), [&](Value r) { return adjoints.get(r); }))
        continue;
      if (failed(adjoint(b, op, adjoints)))
        return failure();
    }

    // Results: the loss (or y), then the gradient of each argument the
    // output depends on differentiably, in argument order; per shard, each
    // placed like its argument (summed over the argument's replicas).
    SmallVector<Value> results = {first};
    // Only the placement carries over to a result: a gradient is placed
    // like its argument, the loss is one replicated scalar.
    auto placed = [&](DictionaryAttr attrs) {
      SmallVector<NamedAttribute> entries;
      if (auto split = attrs ? attrs.getNamed(kSplitAttrName) : std::nullopt)
        entries.push_back(*split);
      return b.getDictionaryAttr(entries);
    };
    DictionaryAttr scalarPlacement =
        placement ? b.getDictionaryAttr(b.getNamedAttr(kSplitAttrName, b.getArrayAttr({})))
                   : b.getDictionaryAttr({});
    SmallVector<DictionaryAttr> resultAttrs = {loss == BackwardLoss::cotangent ? placed(ySplit)
                                                                   : scalarPlacement};
    SmallVector<int64_t> gradientArgs;
    for (BlockArgument arg : body.getArguments().take_front(source.getNumArguments()))
      if (Value g = adjoints.get(arg)) {
        DictionaryAttr argSplit = source.getArgAttrDict(arg.getArgNumber());
        if (placement)
          g = placement->sum(b, loc, g, placement->replicatedAxes(argSplit, arg.getType()));
        results.push_back(g);
        resultAttrs.push_back(placed(argSplit));
        gradientArgs.push_back(arg.getArgNumber());
      }
    func::ReturnOp::create(b, loc, results);
    ret.erase();
    markAdjoint(body, forward, first);
    fb.setFunctionType(FunctionType::get(module.getContext(), body.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
    // The cotangent argument lies like y.
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i < source.getNumArguments(); ++i) {
      DictionaryAttr d = source.getArgAttrDict(i);
      argAttrs.push_back(d ? d : b.getDictionaryAttr({}));
    }
    if (loss == BackwardLoss::cotangent)
      argAttrs.push_back(placed(ySplit));
    fb.setAllArgAttrs(argAttrs);
    fb.setAllResultAttrs(resultAttrs);
    fb->setAttr(kGradientArgs, b.getDenseI64ArrayAttr(gradientArgs));
    return success();
  }

  /// Tags every op the backward added with moe.adjoint, the boundary the
  /// remat pass works from. The loss itself (what `loss` is computed from)
  /// is part of the forward: what the backward reads of it, like y for dy,
  /// is kept across the boundary as any other forward value.
  static void markAdjoint(Block &body, ArrayRef<Operation *> forward, Value loss) {
    DenseSet<Operation *> forwardOps(forward.begin(), forward.end());
    SmallVector<Value> work = {loss};
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || !forwardOps.insert(def).second)
        continue;
      llvm::append_range(work, def->getOperands());
    }
    UnitAttr unit = UnitAttr::get(body.getParent()->getContext());
    for (Operation &op : body.without_terminator())
      if (!forwardOps.contains(&op))
        op.setAttr(kAdjointAttrName, unit);
  }

  /// loss = sum(y^2) / (T H) as tensor<f32>, and dy = y * 2 / (T H). Per
  /// shard (placement given), the sum and T H are global (the local sums
  /// added over `yShards`, the axes splitting y) and dy is divided among
  /// y's `replicas`.
  std::pair<Value, Value> meanSquare(OpBuilder &b, Location loc, Value y,
                                     const std::optional<ShardPlacement> &placement,
                                     ArrayRef<StringRef> yShards, int64_t replicas) {
    auto f32 = b.getF32Type();
    Value y32 = castTo(b, loc, y, cast<RankedTensorType>(y.getType()).clone(f32));
    Value squares = arith::MulFOp::create(b, loc, y32, y32);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
    Value scalar = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f32);
    Value init = linalg::FillOp::create(b, loc, zero, scalar)
                     .getResult(0);
    Value sum = linalg::ReduceOp::create(
                    b, loc, ValueRange{squares}, ValueRange{init}, ArrayRef<int64_t>{0, 1},
                    [](OpBuilder &nb, Location nl, ValueRange args) {
                      linalg::YieldOp::create(nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
                    })
                    .getResult(0);
    int64_t shards = 1;
    if (placement && !yShards.empty()) {
      // As tensor<1xf32>: the collectives move rank-1 buffers.
      Value local = tensor::ExtractOp::create(b, loc, sum, ValueRange{});
      Value one = tensor::FromElementsOp::create(b, loc, RankedTensorType::get({1}, f32),
                                                 ValueRange{local});
      Value global = placement->sum(b, loc, one, yShards);
      Value first = arith::ConstantIndexOp::create(b, loc, 0);
      sum = tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, f32),
          ValueRange{tensor::ExtractOp::create(b, loc, global, ValueRange{first})});
      shards = placement->shards(yShards);
    }
    // 1 / (T H), T known only at run time.
    Value tokens = tensor::DimOp::create(b, loc, y, 0);
    Value hidden = tensor::DimOp::create(b, loc, y, 1);
    Value count = arith::MulIOp::create(b, loc, tokens, hidden);
    if (shards != 1)
      count = arith::MulIOp::create(b, loc, count, arith::ConstantIndexOp::create(b, loc, shards));
    Value countF = arith::UIToFPOp::create(b, loc, f32, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), count));
    Value inv = arith::DivFOp::create(b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f)), countF);
    Value lossValue = arith::MulFOp::create(b, loc, sum, tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, f32), ValueRange{inv}));
    Value twice = arith::MulFOp::create(
        b, loc, inv, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(2.0f / float(replicas))));
    Value scale = linalg::FillOp::create(b, loc, twice, emptyLike(b, loc, y, f32)).getResult(0);
    return {lossValue, arith::MulFOp::create(b, loc, y32, scale)};
  }

  /// v * factor (v itself for 1).
  static Value scaled(OpBuilder &b, Location loc, Value v, double factor) {
    if (factor == 1.0)
      return v;
    Type element = getElementTypeOrSelf(v);
    return arith::MulFOp::create(b, loc, v,
                                 filledLike(b, loc, v, FloatAttr::get(element, factor)));
  }

  LogicalResult adjoint(OpBuilder &b, Operation *op, Adjoints &adjoints) {
    Location loc = op->getLoc();
    auto grad = [&](Value v) { return adjoints.get(v); };
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](CombineOp o) {
          Value dy = grad(o.getOut());
          int64_t k = cast<RankedTensorType>(o.getWeights().getType()).getDimSize(1);
          Value drows = GatherRowsOp::create(b, loc, dy, o.getPermutation(), b.getI64IntegerAttr(k));
          if (!o.getPreweighted()) {
            if (routingGrad)
              adjoints.add(loc, o.getWeights(),
                           ScatterSlotsOp::create(b, loc, rowDot(b, loc, drows, o.getRows()),
                                                  o.getPermutation(), o.getWeights()));
            drows = ScaleRowsOp::create(b, loc, drows,
                                        sortedWeights(b, loc, o.getPermutation(), o.getWeights()));
          }
          adjoints.add(loc, o.getRows(), drows);
          return success();
        })
        .Case([&](PackOp o) {
          // The rows, and with routing-grad the sorted weights (ids and
          // permutation are integers: fixed).
          if (Value drows = grad(o.getRows()))
            adjoints.add(loc, o.getX(), sumTokenRows(b, loc, drows, o.getPermutation(), o.getWeights()));
          if (Value dsorted = grad(o.getSortedWeights()); dsorted && routingGrad)
            adjoints.add(loc, o.getWeights(),
                         ScatterSlotsOp::create(b, loc, dsorted, o.getPermutation(), o.getWeights()));
          return success();
        })
        .Case([&](GatherRowsOp o) {
          if (!isa<FloatType>(cast<RankedTensorType>(o.getSrc().getType()).getElementType()))
            return success();
          adjoints.add(loc, o.getSrc(),
                       sumTokenRows(b, loc, grad(o.getRows()), o.getPermutation(),
                                    zeroTokenWeights(b, loc, o.getSrc(), o.getK())));
          return success();
        })
        .Case([&](GmmOp o) {
          Value dout = grad(o.getOut());
          if (o.isQuantized()) {
            // The training form of int8 (straight-through estimator): the
            // rounding of rows and weights passes gradients as the identity
            // would. The rows' gradient goes through the int8 weights the
            // forward multiplied by (dequantized); the float weights that
            // moe.quantize read get theirs in float, from the float rows.
            auto lhsType = cast<RankedTensorType>(o.getLhs().getType());
            auto rhsType = cast<RankedTensorType>(o.getRhs().getType());
            Value weights = castTo(b, loc, DequantizeOp::create(b, loc, o.getRhs(), o.getRhsScales()),
                                   rhsType.clone(lhsType.getElementType()));
            adjoints.add(loc, o.getLhs(), GmmOp::create(b, loc, dout, weights, o.getGroupSizes(),
                                                        /*transpose_rhs=*/true));
            if (auto quantize = o.getRhs().getDefiningOp<QuantizeOp>())
              adjoints.add(loc, quantize.getInput(),
                           TgmmOp::create(b, loc, o.getLhs(), dout, o.getGroupSizes()));
            if (Value bias = o.getBias())
              adjoints.add(loc, bias, groupColumnSums(b, loc, dout, o.getGroupSizes()));
            return success();
          }
          if (Value bias = o.getBias())
            adjoints.add(loc, bias, groupColumnSums(b, loc, dout, o.getGroupSizes()));
          if (!o.getTransposeRhs()) {
            adjoints.add(loc, o.getLhs(), GmmOp::create(b, loc, dout, o.getRhs(), o.getGroupSizes(),
                                                        /*transpose_rhs=*/true));
            adjoints.add(loc, o.getRhs(), TgmmOp::create(b, loc, o.getLhs(), dout, o.getGroupSizes()));
          } else {
            adjoints.add(loc, o.getLhs(), GmmOp::create(b, loc, dout, o.getRhs(), o.getGroupSizes(),
                                                        /*transpose_rhs=*/false));
            adjoints.add(loc, o.getRhs(), TgmmOp::create(b, loc, dout, o.getLhs(), o.getGroupSizes()));
          }
          return success();
        })
        .Case([&](SwigluOp o) {
          auto g = SwigluGradOp::create(b, loc, o.getInputs(), grad(o.getOut()),
                                        o.getActivationAttr(), o.getAlphaAttr(), o.getLimitAttr(),
                                        o.getInterleavedAttr());
          for (auto [input, dinput] : llvm::zip(o.getInputs(), g.getInputGrads()))
            adjoints.add(loc, input, dinput);
          return success();
        })
        .Case([&](ScaleRowsOp o) {
          adjoints.add(loc, o.getInput(), ScaleRowsOp::create(b, loc, grad(o.getOut()), o.getScale()));
          // The routing weights (pack's sorted weights: preweight, Llama-4's
          // weighted input) get a gradient with routing-grad only; any
          // other scale (Qwen2-MoE's shared-expert gate) always.
          if (routingGrad || !o.getScale().getDefiningOp<PackOp>())
            adjoints.add(loc, o.getScale(), rowDot(b, loc, grad(o.getOut()), o.getInput()));
          return success();
        })
        .Case([&](SigmoidOp o) {
          // d z = d s * s * (1 - s), on the forward's s.
          Value s = o.getOut();
          Value one = filledLike(b, loc, s, b.getF32FloatAttr(1.0f));
          Value slope = arith::MulFOp::create(b, loc, s, arith::SubFOp::create(b, loc, one, s));
          adjoints.add(loc, o.getInput(), arith::MulFOp::create(b, loc, grad(o.getOut()), slope));
          return success();
        })
        .Case([&](linalg::BroadcastOp o) -> LogicalResult {
          // The router bias on every row: its gradient sums the rows.
          Value g = grad(o.getResult()[0]);
          auto inType = cast<RankedTensorType>(o.getInput().getType());
          auto f32 = b.getF32Type();
          Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
          Value init = linalg::FillOp::create(
                           b, loc, zero,
                           tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, o.getInput()), f32)
                               .getResult())
                           .getResult(0);
          Value g32 = castTo(b, loc, g, cast<RankedTensorType>(g.getType()).clone(f32));
          Value sum = linalg::ReduceOp::create(
                          b, loc, ValueRange{g32}, ValueRange{init}, o.getDimensions(),
                          [](OpBuilder &nb, Location nl, ValueRange args) {
                            linalg::YieldOp::create(nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
                          })
                          .getResult(0);
          adjoints.add(loc, o.getInput(), castTo(b, loc, sum, inType));
          return success();
        })
        .Case([&](linalg::MatmulOp o) -> LogicalResult {
          if (o.hasUserDefinedMaps())
            return o.emitError("moe-generate-backward: no adjoint rule for a linalg.matmul "
                               "with indexing maps");
          Value a = o.getInputs()[0], bm = o.getInputs()[1];
          Value dc = grad(o.getResult(0));
          adjoints.add(loc, a, matmulF32(b, loc, dc, transposed(b, loc, bm)));
          adjoints.add(loc, bm, matmulF32(b, loc, transposed(b, loc, a), dc));
          // C = C0 + A B: the initial accumulator gets dC too (a zero fill,
          // as ExpandBlock makes it, takes it and passes nothing on).
          adjoints.add(loc, o.getOutputs()[0], dc);
          return success();
        })
        // The collectives, per shard, for a loss summed over the shards
        // (each shard's cotangent is its own): the adjoint of a sum over
        // the shards is a sum over them, of a gather the matching scatter
        // and back, of an all-to-all the all-to-all that returns each block
        // to its sender.
        .Case([&](PsumOp o) {
          adjoints.add(loc, o.getInput(),
                       PsumOp::create(b, loc, grad(o.getResult()), o.getGridAttr(), o.getAxesAttr()));
          return success();
        })
        .Case([&](AllGatherOp o) {
          adjoints.add(loc, o.getInput(),
                       ReduceScatterOp::create(b, loc, o.getInput().getType(), grad(o.getResult()),
                                               o.getGridAttr(), o.getAxesAttr(), o.getDimAttr()));
          return success();
        })
        .Case([&](ReduceScatterOp o) {
          adjoints.add(loc, o.getInput(),
                       AllGatherOp::create(b, loc, o.getInput().getType(), grad(o.getResult()),
                                           o.getGridAttr(), o.getAxesAttr(), o.getDimAttr()));
          return success();
        })
        .Case([&](AllToAllOp o) {
          // Rows past the received blocks are padding (zeros): no gradient
          // reaches a sender from them; rows past the sent blocks were never
          // sent, and the return leaves them zero.
          Value back = AllToAllOp::create(b, loc, o.getRows().getType(), o.getSendCounts().getType(),
                                          grad(o.getReceived()), o.getRecvCounts(),
                                          o.getGridAttr(), o.getAxesAttr())
                           .getReceived();
          adjoints.add(loc, o.getRows(), back);
          return success();
        })
        .Case([&](arith::AddFOp o) {
          adjoints.add(loc, o.getLhs(), grad(o.getResult()));
          adjoints.add(loc, o.getRhs(), grad(o.getResult()));
          return success();
        })
        // int8's fake quantization and quantize-dequantize chains: the
        // straight-through estimator (the rounding's gradient is taken as 1).
        .Case([&](FakeQuantOp o) {
          adjoints.add(loc, o.getInput(), grad(o.getOut()));
          return success();
        })
        .Case([&](DequantizeOp o) {
          if (auto quantize = o.getValues().getDefiningOp<QuantizeOp>())
            adjoints.add(loc, quantize.getInput(), grad(o.getOut()));
          return success();
        })
        // The shared expert's weights as one group (moe-quantize).
        .Case([&](tensor::ExpandShapeOp o) {
          adjoints.add(loc, o.getSrc(),
                       tensor::CollapseShapeOp::create(b, loc, o.getSrcType(), grad(o.getResult()),
                                                       o.getReassociationIndices()));
          return success();
        })
        .Case([&](tensor::CollapseShapeOp o) {
          adjoints.add(loc, o.getSrc(),
                       tensor::ExpandShapeOp::create(b, loc, o.getSrcType(), grad(o.getResult()),
                                                     o.getReassociationIndices()));
          return success();
        })
        .Case<arith::TruncFOp, arith::ExtFOp>([&](Operation *o) {
          adjoints.add(loc, o->getOperand(0), grad(o->getResult(0)));
          return success();
        })
        .Case([&](RouteOp o) {
          // Reached only with routing-grad (nothing else gives the weights
          // a gradient); the ids are integers.
          if (Value dw = grad(o.getWeights()))
            adjoints.add(loc, o.getLogits(),
                         RouteGradOp::create(b, loc, dw, o.getLogits(), o.getSelectionBias(),
                                             o.getScoringAttr(), o.getOrderAttr(),
                                             o.getRenormalizeAttr(), o.getNullExpertsAttr(),
                                             o.getNullPolicyAttr(), o.getGroupsAttr(),
                                             o.getTopkGroupsAttr(), o.getGroupScoreAttr(),
                                             o.getRoutedScalingAttr()));
          return success();
        })
        .Case([&](NullSlotsOp o) -> LogicalResult {
          // Reached only with routing-grad. Without renormalisation a kept
          // slot passes its gradient through and a null slot stops it.
          Value g = grad(o.getNewWeights());
          if (!g)
            return success();
          if (o.getRenormalize())
            return o.emitError("moe-generate-backward: routing-grad through moe.null_slots "
                               "with renormalize has no adjoint rule yet; route with "
                               "renormalize off or keep the routing fixed");
          Value experts =
              filledLike(b, loc, o.getNewIds(), b.getI32IntegerAttr(o.getExperts()));
          Value kept = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, o.getNewIds(),
                                             experts);
          adjoints.add(loc, o.getWeights(),
                       arith::SelectOp::create(b, loc, kept, g,
                                               filledLike(b, loc, g, b.getF32FloatAttr(0))));
          return success();
        })
        // The dense masked EP's operands (moe-partition): weights with a
        // zero dummy expert appended, routing weights masked to 0.
        .Case([&](tensor::ConcatOp o) {
          Value g = grad(o.getResult());
          int64_t dim = o.getDim();
          SmallVector<OpFoldResult> offsets(o.getRank(), b.getIndexAttr(0));
          SmallVector<OpFoldResult> strides(o.getRank(), b.getIndexAttr(1));
          OpFoldResult at = b.getIndexAttr(0);
          for (Value input : o.getInputs()) {
            SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
            offsets[dim] = at;
            if (isa<FloatType>(cast<RankedTensorType>(input.getType()).getElementType()))
              adjoints.add(loc, input,
                           tensor::ExtractSliceOp::create(
                               b, loc, cast<RankedTensorType>(input.getType()), g, offsets,
                               sizes, strides));
            at = addIndex(b, loc, at, sizes[dim]);
          }
          return success();
        })
        .Case([&](arith::SelectOp o) {
          Value g = grad(o.getResult());
          Value zero = filledLike(b, loc, g, cast<TypedAttr>(b.getZeroAttr(getElementTypeOrSelf(g))));
          adjoints.add(loc, o.getTrueValue(),
                       arith::SelectOp::create(b, loc, o.getCondition(), g, zero));
          adjoints.add(loc, o.getFalseValue(),
                       arith::SelectOp::create(b, loc, o.getCondition(), zero, g));
          return success();
        })
        .Case([&](tensor::CastOp o) {
          adjoints.add(loc, o.getSource(),
                       tensor::CastOp::create(b, loc, o.getSource().getType(), grad(o.getResult())));
          return success();
        })
        .Case([&](tensor::SplatOp o) -> LogicalResult {
          // A splat constant (dense EP's masked weight) has no gradient.
          if (matchPattern(o.getInput(), m_Constant()))
            return success();
          return o.emitError("moe-generate-backward: no adjoint rule for a tensor.splat of a "
                             "computed value");
        })
        .Case<linalg::FillOp, tensor::EmptyOp, arith::ConstantOp>(
            [&](Operation *) { return success(); })
        .Default([&](Operation *o) {
          return o->emitError() << "moe-generate-backward: no adjoint rule for '" << o->getName()
                                << "'";
        });
  }
};

} // namespace
