//===- Partition.cpp - the moe-partition pass -----------------------------===//
//
// Turns a single-device block function into the program one shard of a
// (data, expert, model) mesh runs (SPMD), for data parallelism, for each
// expert-parallel dispatch (dense masked, compact, ring, all-to-all) and for
// their mix on a 2-D mesh. The function's arguments and result take their
// per-shard shapes; `moe.split` on each says which mesh axes split which of
// its dimensions (the host cuts full inputs and assembles results by it).
//
// Why by hand rather than upstream's sharding-propagation + shard-partition:
// those partition ops that implement the ShardingInterface one at a time,
// with equal splits; an MoE dispatch is a choice of algorithm over the whole
// block (which rows move, where the ragged groups form, which collective
// closes it), not a per-op propagation, and the all-to-all is ragged.
//
//===----------------------------------------------------------------------===//

#include "dialect/MoeOps.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "runtime/RuntimeAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

namespace mlir::moe {
#define GEN_PASS_DEF_MOEPARTITION
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

constexpr StringLiteral kAxisNames[] = {"data", "expert", "model"};

struct Mesh {
  SmallVector<std::string> axes;
  SmallVector<int64_t> shape;
  int64_t size(StringRef axis) const {
    for (auto [a, s] : llvm::zip(axes, shape))
      if (a == axis)
        return s;
    return 1;
  }
  std::optional<int16_t> index(StringRef axis) const {
    for (auto [i, a] : llvm::enumerate(axes))
      if (a == axis)
        return int16_t(i);
    return std::nullopt;
  }
  std::string str() const {
    std::string s;
    for (auto [a, n] : llvm::zip(axes, shape))
      s += (s.empty() ? "" : ",") + a + "=" + std::to_string(n);
    return s;
  }
};

/// "data=2,expert=2" (axes among data, expert, model, each once, sizes >= 1).
FailureOr<Mesh> parseMesh(StringRef text, std::string &error) {
  Mesh mesh;
  SmallVector<StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty()) {
    error = "an empty mesh";
    return failure();
  }
  for (StringRef item : items) {
    auto [name, size] = item.trim().split('=');
    int64_t n;
    if (!llvm::is_contained(kAxisNames, name)) {
      error = ("unknown mesh axis '" + name + "' (axes: data, expert, model)").str();
      return failure();
    }
    if (size.getAsInteger(10, n) || n < 1) {
      error = ("mesh axis '" + name + "' needs a size >= 1 (got '" + size + "')").str();
      return failure();
    }
    if (llvm::is_contained(mesh.axes, name.str())) {
      error = ("mesh axis '" + name + "' given twice").str();
      return failure();
    }
    mesh.axes.push_back(name.str());
    mesh.shape.push_back(n);
  }
  return mesh;
}

/// The block function's pieces: the block and which argument feeds each
/// operand.
struct BlockFunction {
  func::FuncOp func;
  BlockOp block;
};

FailureOr<BlockFunction> matchBlockFunction(func::FuncOp func) {
  SmallVector<BlockOp> blocks;
  func.walk([&](BlockOp op) { blocks.push_back(op); });
  if (blocks.size() != 1)
    return func.emitError() << "moe-partition: '" << func.getName()
                            << "' must hold exactly one moe.block (it has " << blocks.size()
                            << ")";
  BlockOp block = blocks.front();
  for (Value operand : block->getOperands())
    if (!isa<BlockArgument>(operand) ||
        cast<BlockArgument>(operand).getOwner() != &func.getBody().front())
      return block.emitError("moe-partition: every operand of the block must be an argument "
                             "of its function (the partitioner places arguments on the mesh)");
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (ret.getNumOperands() != 1 || ret.getOperand(0) != block.getResult() ||
      func.getBody().front().getOperations().size() != 2)
    return func.emitError() << "moe-partition: '" << func.getName()
                            << "' must return its moe.block's result and do nothing else";
  return BlockFunction{func, block};
}

struct MoePartitionPass : mlir::moe::impl::MoePartitionBase<MoePartitionPass> {
  using MoePartitionBase::MoePartitionBase;

  /// A mesh that does not parse is an error of the pipeline's text, reported
  /// where mlir-opt reports a bad pass option (no source location: the
  /// module did nothing wrong).
  LogicalResult initializeOptions(StringRef options,
                                  function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(MoePartitionBase::initializeOptions(options, errorHandler)))
      return failure();
    std::string error;
    if (!meshOption.empty() && failed(parseMesh(meshOption, error)))
      return errorHandler("moe-partition: mesh '" + meshOption + "': " + error);
    return success();
  }

  Mesh mesh;
  std::string gridName;
  int64_t dataSize = 1, expertSize = 1;
  /// The block's expert count before its weights take their per-shard
  /// shapes (after which the block would count only the local ones).
  int64_t experts = 0;

  /// The mesh a declared grid describes (axes named by `moe.axes`).
  static FailureOr<Mesh> meshOfGrid(shard::GridOp grid) {
    auto names = grid->getAttrOfType<ArrayAttr>(kAxesAttrName);
    if (!names)
      return grid.emitError() << "moe-partition: the grid needs a '" << kAxesAttrName
                              << "' attribute naming its axes";
    Mesh mesh;
    for (auto [name, size] : llvm::zip(names, grid.getShape())) {
      StringRef n = cast<StringAttr>(name).getValue();
      if (!llvm::is_contained(kAxisNames, n))
        return grid.emitError() << "moe-partition: unknown mesh axis '" << n
                                << "' (axes: data, expert, model)";
      if (ShapedType::isDynamic(size))
        return grid.emitError("moe-partition: the grid's axis sizes must be static");
      mesh.axes.push_back(n.str());
      mesh.shape.push_back(size);
    }
    return mesh;
  }

  /// The grid the program runs on: the `mesh` option's (declared here as a
  /// shard.grid named `grid` unless the module has that very grid), or the
  /// one the module declares.
  LogicalResult findOrDeclareGrid(ModuleOp module) {
    if (meshOption.empty()) {
      SmallVector<shard::GridOp> grids(module.getOps<shard::GridOp>());
      if (grids.size() != 1)
        return module.emitError("moe-partition: give the mesh (mesh=data=2,expert=2) or "
                                "declare exactly one shard.grid with moe.axes");
      auto declared = meshOfGrid(grids[0]);
      if (failed(declared))
        return failure();
      mesh = *declared;
      gridName = grids[0].getSymName().str();
      return success();
    }
    std::string error;
    auto parsed = parseMesh(meshOption, error);
    if (failed(parsed))
      return module.emitError() << "moe-partition: mesh '" << meshOption << "': " << error;
    mesh = *parsed;
    gridName = gridOption;
    if (auto existing = module.lookupSymbol<shard::GridOp>(gridName)) {
      auto declared = meshOfGrid(existing);
      if (failed(declared))
        return failure();
      if (declared->str() != mesh.str())
        return existing.emitError() << "moe-partition: grid @" << gridName << " is "
                                    << declared->str() << ", not the mesh " << mesh.str();
      return success();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    auto grid = shard::GridOp::create(b, module.getLoc(), gridName, mesh.shape);
    SmallVector<Attribute> names;
    for (const std::string &a : mesh.axes)
      names.push_back(b.getStringAttr(a));
    grid->setAttr(kAxesAttrName, b.getArrayAttr(names));
    return success();
  }

  /// `moe.split`: for each dimension, the mesh axes splitting it.
  ArrayAttr splitAttr(Builder &b, ArrayRef<SmallVector<std::string>> dims) {
    SmallVector<Attribute> perDim;
    for (const auto &axes : dims) {
      SmallVector<Attribute> names;
      for (const std::string &a : axes)
        names.push_back(b.getStringAttr(a));
      perDim.push_back(b.getArrayAttr(names));
    }
    return b.getArrayAttr(perDim);
  }

  /// `type` with dimension `dim` divided by `parts` (dynamic stays dynamic).
  FailureOr<RankedTensorType> splitType(Operation *at, RankedTensorType type, int64_t dim,
                                        int64_t parts, StringRef what) {
    SmallVector<int64_t> shape(type.getShape());
    if (!ShapedType::isDynamic(shape[dim])) {
      if (shape[dim] % parts != 0)
        return at->emitError() << "moe-partition: " << what << " (" << shape[dim]
                               << ") does not split evenly over " << parts << " shards";
      shape[dim] /= parts;
    }
    return RankedTensorType::get(shape, type.getElementType());
  }

  LogicalResult partition(BlockFunction f) {
    BlockOp block = f.block;
    func::FuncOp func = f.func;
    MLIRContext *ctx = func.getContext();
    Builder attrs(ctx);
    Location loc = block.getLoc();
    experts = block.getNumExperts();
    bool ep = expertSize > 1;
    EpDispatch dispatch = epDispatch;
    if (ep && experts % expertSize != 0)
      return block.emitError() << "moe-partition: " << experts
                               << " experts do not split evenly over expert=" << expertSize;
    if (capacityFactor < 0 || capacityRound < 1)
      return func.emitError("moe-partition: capacity-factor must be >= 0 and capacity-round >= 1");
    if (ep && dispatch == EpDispatch::dense && capacityFactor > 0)
      return func.emitError("moe-partition: ep-dispatch=dense computes every row; a capacity "
                            "factor applies to compact, ring and a2a");
    int64_t local = experts / expertSize;

    // Tokens split over data, and over expert too when the dispatch moves
    // rows between expert shards (ring, all-to-all).
    SmallVector<std::string> tokenAxes;
    if (mesh.index("data"))
      tokenAxes.push_back("data");
    bool tokensOverExpert = ep && (dispatch == EpDispatch::ring || dispatch == EpDispatch::a2a);
    if (tokensOverExpert)
      tokenAxes.push_back("expert");
    int64_t tokenParts = dataSize * (tokensOverExpert ? expertSize : 1);

    // New argument types and their splits.
    Block &body = func.getBody().front();
    SmallVector<Type> argTypes;
    SmallVector<Attribute> argSplits;
    DenseSet<Value> expertWeights(block.getExpertGateUp().begin(), block.getExpertGateUp().end());
    expertWeights.insert(block.getExpertDown());
    // The experts' biases go with their experts; the router's (and the
    // selection bias, the shared gate) are replicated: every shard routes
    // over all logits.
    for (Value bias : {block.getGateUpBias(), block.getDownBias()})
      if (bias)
        expertWeights.insert(bias);
    for (BlockArgument arg : body.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      SmallVector<SmallVector<std::string>> split(type ? type.getRank() : 0);
      Type newType = arg.getType();
      bool tokenRows = arg == block.getX() || arg == block.getRouterLogits() ||
                       arg == block.getNullDraws();
      if (type && tokenRows) {
        auto t = splitType(block, type, 0, tokenParts, "the token count");
        if (failed(t))
          return failure();
        newType = *t;
        split[0] = tokenAxes;
      } else if (type && ep && expertWeights.contains(arg)) {
        auto t = splitType(block, type, 0, expertSize, "the expert count");
        if (failed(t))
          return failure();
        newType = *t;
        split[0] = {"expert"};
      }
      argTypes.push_back(newType);
      argSplits.push_back(splitAttr(attrs, split));
    }
    auto resultType = cast<RankedTensorType>(block.getType());
    auto localResult = splitType(block, resultType, 0, tokenParts, "the token count");
    if (failed(localResult))
      return failure();
    for (auto [arg, type] : llvm::zip(body.getArguments(), argTypes))
      arg.setType(type);

    IRRewriter b(ctx);
    b.setInsertionPoint(block);
    Value out;
    if (!ep) {
      // Data parallel: the same block over this shard's tokens.
      auto clone = cast<BlockOp>(b.clone(*block));
      clone.getResult().setType(*localResult);
      out = clone.getResult();
    } else {
      FailureOr<Value> routed = dispatch == EpDispatch::a2a ? allToAll(b, loc, block, local)
                                                  : expertShards(b, loc, block, dispatch, local);
      if (failed(routed))
        return failure();
      out = *routed;
      if (block.hasSharedExpert())
        out = arith::AddFOp::create(b, loc, out, buildSharedExpert(b, loc, block, block.getX()));
      if (out.getType() != *localResult)
        out = tensor::CastOp::create(b, loc, *localResult, out);
    }
    block.getResult().replaceAllUsesWith(out);
    block.erase();

    func.setFunctionType(FunctionType::get(ctx, argTypes, {*localResult}));
    for (auto [i, split] : llvm::enumerate(argSplits))
      func.setArgAttr(i, kSplitAttrName, split);
    SmallVector<SmallVector<std::string>> resultSplit(resultType.getRank());
    resultSplit[0] = tokenAxes;
    func.setResultAttr(0, kSplitAttrName, splitAttr(attrs, resultSplit));
    func->setAttr(kMeshAttrName, FlatSymbolRefAttr::get(ctx, gridName));
    func->setAttr(kParallelAttrName,
                  attrs.getStringAttr(ep ? ("ep-" + kEpDispatchChoices.name(dispatch)).str()
                                        : std::string("dp")));
    return success();
  }

  /// This shard's index along the expert axis, as i32.
  Value expertCoordinate(OpBuilder &b, Location loc) {
    Value index = shard::ProcessMultiIndexOp::create(
                      b, loc, gridName, ArrayRef<shard::GridAxis>{*mesh.index("expert")})
                      .getResult()[0];
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }

  /// `ids` shifted so that this shard's experts are 0..local-1; every other
  /// id (another shard's expert, a null) falls outside.
  Value shiftToLocal(OpBuilder &b, Location loc, Value ids, int64_t local) {
    Value first = arith::MulIOp::create(b, loc, expertCoordinate(b, loc),
                                        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(local)));
    return arith::SubIOp::create(b, loc, ids, splatLike(b, loc, ids, first));
  }

  Value splatLike(OpBuilder &b, Location loc, Value like, Value scalar) {
    auto type = cast<RankedTensorType>(like.getType());
    SmallVector<Value> dyn;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dyn.push_back(tensor::DimOp::create(b, loc, like, i));
    return tensor::SplatOp::create(b, loc, scalar, type, dyn);
  }

  Value constantLike(OpBuilder &b, Location loc, Value like, TypedAttr value) {
    return splatLike(b, loc, like, arith::ConstantOp::create(b, loc, value));
  }

  /// The rows a shard's buffer holds for `rows` possible assignments: all of
  /// them without a capacity factor, else max(L, ceil(cf * rows / D))
  /// rounded up to `capacity-round` (semantics doc section 2).
  FailureOr<std::optional<int64_t>> capacityFor(BlockOp block, int64_t rows, int64_t local) {
    if (capacityFactor == 0)
      return std::optional<int64_t>();
    if (ShapedType::isDynamic(rows))
      return block.emitError("moe-partition: a capacity factor needs a static token count");
    int64_t c = std::max<int64_t>(local, int64_t(std::ceil(capacityFactor * rows / expertSize)));
    c = (c + capacityRound - 1) / capacityRound * capacityRound;
    return std::optional<int64_t>(c);
  }

  /// Tells the runtime (moert_count_dropped_rows) how many assignment rows
  /// `ids` routes to this shard's `local` experts and how many of them a
  /// buffer of `capacity` rows drops: the count is computed with the block,
  /// the host reports it.
  void countDropped(OpBuilder &b, Location loc, Value ids, int64_t local, int64_t capacity) {
    MLIRContext *ctx = b.getContext();
    auto i64 = b.getI64Type();
    auto constant = [&](int64_t v, Type t) -> Value {
      return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, v));
    };
    Value init = linalg::FillOp::create(b, loc, constant(0, i64),
                                        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i64)
                                            .getResult())
                     .getResult(0);
    auto all = AffineMap::getMultiDimIdentityMap(2, ctx);
    auto none = AffineMap::get(2, 0, {}, ctx);
    Value count =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{ids}, ValueRange{init},
            ArrayRef<AffineMap>{all, none},
            ArrayRef<utils::IteratorType>{utils::IteratorType::reduction,
                                          utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value lo = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, args[0],
                                               arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(0)));
              Value hi = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, args[0],
                                               arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(local)));
              Value mine = arith::ExtUIOp::create(nb, nl, nb.getI64Type(),
                                                  arith::AndIOp::create(nb, nl, lo, hi));
              linalg::YieldOp::create(nb, nl, ValueRange{arith::AddIOp::create(nb, nl, args[1], mine)});
            })
            .getResult(0);
    Value rows = tensor::ExtractOp::create(b, loc, count, ValueRange{});
    Value dropped = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, rows, constant(capacity, i64)), constant(0, i64));
    auto fn = declareRuntimeFunction(b.getInsertionBlock()->getParentOp(),
                                     moec::abi::countDroppedRowsEntryPoint(),
                                     FunctionType::get(ctx, {i64, i64}, {}));
    func::CallOp::create(b, loc, fn, ValueRange{rows, dropped});
  }

  /// Dense masked, compact and ring: each shard computes its local experts
  /// over the tokens of its expert group; psum (or reduce-scatter, for the
  /// ring) closes the block.
  FailureOr<Value> expertShards(IRRewriter &b, Location loc, BlockOp block, EpDispatch dispatch,
                                int64_t local) {
    Value x = block.getX(), logits = block.getRouterLogits(), draws = block.getNullDraws();
    auto axes = b.getStrArrayAttr({"expert"});
    auto grid = FlatSymbolRefAttr::get(b.getContext(), gridName);
    auto gather = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(type.getShape());
      if (!ShapedType::isDynamic(shape[0]))
        shape[0] *= expertSize;
      return AllGatherOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), v,
                                 grid, axes, b.getI64IntegerAttr(0));
    };
    if (dispatch == EpDispatch::ring) {
      x = gather(x);
      if (logits)
        logits = gather(logits);
      if (draws)
        draws = gather(draws);
    }
    Routing route = buildRoute(b, loc, block, x, logits, draws);
    Value ids = shiftToLocal(b, loc, route.ids, local);
    Value weights = route.weights;
    int64_t tokens = cast<RankedTensorType>(x.getType()).getDimSize(0);
    int64_t assignments = ShapedType::isDynamic(tokens) ? tokens : tokens * block.getK();

    Value partial;
    if (dispatch == EpDispatch::dense) {
      // The seeds' first EP: every assignment row is computed on every
      // shard; other shards' rows (and nulls) go to a dummy group L of zero
      // weights and their routing weight is masked to 0.
      Value zero = constantLike(b, loc, ids, b.getI32IntegerAttr(0));
      Value bound = constantLike(b, loc, ids, b.getI32IntegerAttr(local));
      Value inRange = arith::AndIOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, ids, zero),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ids, bound));
      Value denseIds = arith::SelectOp::create(b, loc, inRange, ids, bound);
      Value masked = arith::SelectOp::create(
          b, loc, inRange, weights, constantLike(b, loc, weights, b.getF32FloatAttr(0)));
      auto withDummy = [&](Value w) {
        auto type = cast<RankedTensorType>(w.getType());
        SmallVector<int64_t> shape(type.getShape());
        shape[0] = 1;
        auto zeros = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(RankedTensorType::get(shape, type.getElementType()),
                                           b.getZeroAttr(type.getElementType())));
        return concatWeights(b, loc, w, zeros, 0);
      };
      SmallVector<Value> gateUp;
      for (Value w : block.getExpertGateUp())
        gateUp.push_back(withDummy(w));
      auto dummyBias = [&](Value bias) { return bias ? withDummy(bias) : Value(); };
      partial = buildRoutedExperts(b, loc, block, x, denseIds, masked, local + 1, gateUp,
                                   dummyBias(block.getGateUpBias()),
                                   withDummy(block.getExpertDown()),
                                   dummyBias(block.getDownBias()));
    } else {
      auto capacity = capacityFor(block, assignments, local);
      if (failed(capacity))
        return failure();
      partial = buildRoutedExperts(b, loc, block, x, ids, weights, experts,
                                   block.getExpertGateUp(), block.getGateUpBias(),
                                   block.getExpertDown(), block.getDownBias(),
                                   PackScope{local, *capacity});
      if (*capacity)
        countDropped(b, loc, ids, local, **capacity);
    }
    if (dispatch == EpDispatch::ring) {
      auto type = cast<RankedTensorType>(partial.getType());
      SmallVector<int64_t> shape(type.getShape());
      if (!ShapedType::isDynamic(shape[0]))
        shape[0] /= expertSize;
      return Value(ReduceScatterOp::create(
          b, loc, RankedTensorType::get(shape, type.getElementType()), partial, grid, axes,
          b.getI64IntegerAttr(0)));
    }
    return Value(PsumOp::create(b, loc, partial, grid, axes));
  }

  /// All-to-all: every assignment row goes to the shard owning its expert
  /// (with its local expert id), is computed there and comes back; the
  /// routing weights are applied at home, in the combine.
  FailureOr<Value> allToAll(IRRewriter &b, Location loc, BlockOp block, int64_t local) {
    Value x = block.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t tokens = xType.getDimSize(0), k = block.getK();
    if (ShapedType::isDynamic(tokens))
      return block.emitError("moe-partition: ep-dispatch=a2a needs a static token count "
                             "(its receive buffers are sized at compile time)");
    auto grid = FlatSymbolRefAttr::get(b.getContext(), gridName);
    auto axes = b.getStrArrayAttr({"expert"});
    Routing route = buildRoute(b, loc, block, x, block.getRouterLogits());
    Value ids = route.ids, weights = route.weights;
    // Sorted by global expert is sorted by destination shard.
    auto pack = PackOp::create(b, loc, x, ids, weights, b.getI64IntegerAttr(experts),
                               b.getI64IntegerAttr(0), IntegerAttr(), IntegerAttr(),
                               block.getPackStrategyAttr());
    auto i32 = b.getI32Type();
    // Rows per destination: the sums of each shard's L group sizes.
    Value sizes2d = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({expertSize, local}, i32), pack.getGroupSizes(),
        ArrayRef<ReassociationIndices>{{0, 1}});
    auto sendType = RankedTensorType::get({expertSize}, i32);
    Value init = linalg::FillOp::create(
                     b, loc, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)).getResult(),
                     tensor::EmptyOp::create(b, loc, sendType.getShape(), i32).getResult())
                     .getResult(0);
    Value send = linalg::ReduceOp::create(
                     b, loc, ValueRange{sizes2d}, ValueRange{init}, ArrayRef<int64_t>{1},
                     [](OpBuilder &nb, Location nl, ValueRange args) {
                       Value s = arith::AddIOp::create(nb, nl, args[0], args[1]);
                       linalg::YieldOp::create(nb, nl, s);
                     })
                     .getResult(0);
    // Each row's destination-local expert id + 1: the zero rows padding the
    // receive buffer (id 0) then belong to no local group.
    int64_t rows = tokens * k;
    Value flatIds = tensor::CollapseShapeOp::create(b, loc, ids,
                                                    ArrayRef<ReassociationIndices>{{0, 1}});
    Value idColumn = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({rows, 1}, i32), flatIds,
        ArrayRef<ReassociationIndices>{{0, 1}});
    Value sortedIds = GatherRowsOp::create(b, loc, idColumn, pack.getPermutation(),
                                           b.getI64IntegerAttr(1));
    Value localIds = arith::AddIOp::create(
        b, loc,
        arith::RemSIOp::create(b, loc, sortedIds,
                               constantLike(b, loc, sortedIds, b.getI32IntegerAttr(local))),
        constantLike(b, loc, sortedIds, b.getI32IntegerAttr(1)));

    // Worst case every row of every peer comes here; a capacity factor
    // sizes the buffer for cf times the fair share (over it: a run error).
    int64_t capacity = rows * expertSize;
    if (capacityFactor > 0) {
      capacity = std::max<int64_t>(1, int64_t(std::ceil(capacityFactor * rows)));
      capacity = (capacity + capacityRound - 1) / capacityRound * capacityRound;
    }
    auto recvType = RankedTensorType::get({capacity, xType.getDimSize(1)}, xType.getElementType());
    // Llama-4 weights the expert's input: the rows leave already weighted
    // and come back to be summed as they are.
    Value sent = pack.getRows();
    if (block.getWeightInput())
      sent = ScaleRowsOp::create(b, loc, sent, pack.getSortedWeights());
    auto a2a = AllToAllOp::create(b, loc, TypeRange{recvType, sendType}, sent, send,
                                  grid, axes);
    auto idsA2a = AllToAllOp::create(b, loc,
                                     TypeRange{RankedTensorType::get({capacity, 1}, i32), sendType},
                                     localIds, send, grid, axes);

    // The local experts over the received rows, unweighted.
    auto ones = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({capacity, 1}, b.getF32Type()),
                                       b.getF32FloatAttr(1.0f)));
    auto localPack = PackOp::create(b, loc, a2a.getReceived(), idsA2a.getReceived(), ones,
                                    b.getI64IntegerAttr(local + 1), b.getI64IntegerAttr(1),
                                    b.getI64IntegerAttr(local), IntegerAttr(),
                                    block.getPackStrategyAttr());
    Value down = buildExpertMlp(b, loc, block, localPack.getRows(), localPack.getGroupSizes(),
                                block.getExpertGateUp(), block.getGateUpBias(),
                                block.getExpertDown(), block.getDownBias(),
                                /*preweight=*/Value());
    Value inReceiveOrder = CombineOp::create(b, loc, down, localPack.getPermutation(), ones,
                                             block.getCombineStrategyAttr(), b.getUnitAttr());
    auto back = AllToAllOp::create(
        b, loc,
        TypeRange{cast<RankedTensorType>(pack.getRows().getType()), sendType}, inReceiveOrder,
        a2a.getRecvCounts(), grid, axes);
    return Value(CombineOp::create(b, loc, back.getReceived(), pack.getPermutation(), weights,
                                   block.getCombineStrategyAttr(),
                                   block.getWeightInput() ? b.getUnitAttr() : UnitAttr()));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<BlockFunction> targets;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool named = llvm::is_contained(functions, func.getName().str());
      if (!functions.empty() && !named)
        continue;
      if (functions.empty() && (!func.isPublic() || func.getOps<BlockOp>().empty()))
        continue;
      auto matched = matchBlockFunction(func);
      if (failed(matched))
        return signalPassFailure();
      targets.push_back(*matched);
    }
    if (targets.empty()) {
      module.emitError("moe-partition: no function with a moe.block to partition (it splits "
                       "moe.block ops: partition before moe-expand-block or moe-quantize "
                       "expands them)");
      return signalPassFailure();
    }
    if (failed(findOrDeclareGrid(module)))
      return signalPassFailure();
    dataSize = mesh.size("data");
    expertSize = mesh.size("expert");
    if (mesh.size("model") > 1) {
      module.emitError() << "moe-partition: the mesh " << mesh.str()
                         << " splits the model axis; tensor (model) parallelism is not "
                            "partitioned yet (give model=1)";
      return signalPassFailure();
    }
    for (BlockFunction &f : targets)
      if (failed(partition(f)))
        return signalPassFailure();
  }
};

} // namespace

std::string mlir::moe::meshSpecError(StringRef mesh) {
  std::string error;
  (void)parseMesh(mesh, error);
  return error;
}

std::optional<std::vector<std::pair<std::string, int64_t>>>
mlir::moe::meshAxes(StringRef mesh, std::string &error) {
  FailureOr<Mesh> parsed = parseMesh(mesh, error);
  if (failed(parsed))
    return std::nullopt;
  std::vector<std::pair<std::string, int64_t>> axes;
  for (auto [axis, size] : llvm::zip(parsed->axes, parsed->shape))
    axes.push_back({axis, size});
  return axes;
}
