//===- PassUtils.cpp - IR-building helpers the moe passes share --------------===//

#include "passes/PassUtils.h"

#include "dialect/MoeDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::moe;

namespace {
/// Row-major concatenation of two dense constants along `dim`.
DenseElementsAttr concatConstants(DenseElementsAttr a, DenseElementsAttr b,
                                  RankedTensorType type, int64_t dim) {
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(b.getType());
  int64_t outer = 1;
  for (int64_t i = 0; i < dim; ++i)
    outer *= aType.getDimSize(i);
  int64_t aInner = aType.getNumElements() / outer, bInner = bType.getNumElements() / outer;
  auto aValues = llvm::to_vector(a.getValues<Attribute>());
  auto bValues = llvm::to_vector(b.getValues<Attribute>());
  SmallVector<Attribute> values;
  values.reserve(type.getNumElements());
  for (int64_t o = 0; o < outer; ++o) {
    values.append(aValues.begin() + o * aInner, aValues.begin() + (o + 1) * aInner);
    values.append(bValues.begin() + o * bInner, bValues.begin() + (o + 1) * bInner);
  }
  return DenseElementsAttr::get(type, values);
}
} // namespace

GmmLoweringAttr mlir::moe::fastLoweringOf(Operation *op) {
  auto lowering = op ? op->getAttrOfType<GmmLoweringAttr>(kLoweringAttrName) : GmmLoweringAttr();
  return lowering && !lowering.isReference() ? lowering : GmmLoweringAttr();
}

bool mlir::moe::readsThroughGather(Operation *op) {
  auto gmm = dyn_cast<GmmOp>(op);
  GmmLoweringAttr lowering = gmm ? fastLoweringOf(gmm) : GmmLoweringAttr();
  return lowering && lowering.fuses("gather") && gmm.getLhs().getDefiningOp<GatherRowsOp>();
}

bool mlir::moe::gatherFusedIntoUsers(GatherRowsOp gather) {
  return !gather->use_empty() && llvm::all_of(gather->getUses(), [](OpOperand &use) {
           return use.getOperandNumber() == 0 && readsThroughGather(use.getOwner());
         });
}

func::FuncOp mlir::moe::declareRuntimeFunction(Operation *op, StringRef name,
                                              FunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(b, op->getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

Value mlir::moe::concatWeights(OpBuilder &b, Location loc, Value x, Value y,
                               int64_t dim) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto yType = cast<RankedTensorType>(y.getType());
  SmallVector<int64_t> shape(xType.getShape());
  shape[dim] += yType.getDimSize(dim);
  auto type = RankedTensorType::get(shape, xType.getElementType());
  DenseElementsAttr xConst, yConst;
  if (matchPattern(x, m_Constant(&xConst)) && matchPattern(y, m_Constant(&yConst)))
    return arith::ConstantOp::create(b, loc, type, concatConstants(xConst, yConst, type, dim));
  return tensor::ConcatOp::create(b, loc, type, dim, ValueRange{x, y});
}

Value mlir::moe::matmulF32(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto f32 = b.getF32Type();
  auto type = RankedTensorType::get({lhsType.getDimSize(0), rhsType.getDimSize(1)}, f32);
  SmallVector<Value> dynamicSizes;
  if (type.isDynamicDim(0))
    dynamicSizes.push_back(tensor::DimOp::create(b, loc, lhs, 0));
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), f32, dynamicSizes);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  return linalg::MatmulOp::create(b, loc, TypeRange{type}, ValueRange{lhs, rhs},
                                  ValueRange{init})
      .getResult(0);
}

mlir::moe::Routing mlir::moe::buildRoute(OpBuilder &b, Location loc, moe::BlockOp block,
                                         Value x, Value logits, Value draws) {
  if (!logits)
    logits = block.getRouterLogits();
  if (!logits) {
    logits = matmulF32(b, loc, x ? x : block.getX(), block.getRouterWeight());
    if (Value bias = block.getRouterBias())
      logits = addRowBias(b, loc, logits, bias);
  }
  // The null policy is the route's only with null experts to apply it to
  // (drawn nulls apply it in moe.null_slots).
  auto policy = block.getNullExperts() ? block.getNullPolicyAttr()
                                       : NullPolicyAttr::get(b.getContext(), NullPolicy::independent);
  auto route = RouteOp::create(b, loc, logits, block.getSelectionBias(), block.getKAttr(),
                               block.getScoringAttr(), block.getOrderAttr(),
                               block.getRenormalizeAttr(), block.getNullExpertsAttr(), policy,
                               block.getGroupsAttr(), block.getTopkGroupsAttr(),
                               block.getGroupScoreAttr(), block.getRoutedScalingAttr());
  Routing routing{route.getIds(), route.getWeights()};
  if (!draws)
    draws = block.getNullDraws();
  if (!draws)
    return routing;
  auto nulled = NullSlotsOp::create(b, loc, routing.ids, routing.weights, draws,
                                    block.getNullFractionAttr(),
                                    // The router's experts: the weights may be
                                    // one shard's already (moe-partition).
                                    b.getI64IntegerAttr(route.getNumExperts()),
                                    block.getNullPolicyAttr(), block.getRenormalizeAttr());
  return {nulled.getNewIds(), nulled.getNewWeights()};
}

Value mlir::moe::buildRoutedExperts(OpBuilder &b, Location loc, moe::BlockOp block, Value x,
                                    Value ids, Value weights, int64_t experts,
                                    ValueRange gateUp, Value gateUpBias, Value down,
                                    Value downBias, PackScope scope) {
  auto optional = [&](std::optional<int64_t> v) {
    return v ? b.getI64IntegerAttr(*v) : IntegerAttr();
  };
  auto pack = PackOp::create(b, loc, x, ids, weights, b.getI64IntegerAttr(experts),
                             /*expert_offset=*/b.getI64IntegerAttr(0),
                             optional(scope.localExperts), optional(scope.capacity),
                             block.getPackStrategyAttr());
  Value rows = pack.getRows();
  if (block.getWeightInput())
    rows = ScaleRowsOp::create(b, loc, rows, pack.getSortedWeights());
  Value out = buildExpertMlp(b, loc, block, rows, pack.getGroupSizes(), gateUp, gateUpBias, down,
                             downBias, block.getPreweight() ? pack.getSortedWeights() : Value());
  bool weighted = block.getPreweight() || block.getWeightInput();
  return CombineOp::create(b, loc, out, pack.getPermutation(), weights,
                           block.getCombineStrategyAttr(),
                           weighted ? b.getUnitAttr() : UnitAttr());
}

Value mlir::moe::buildExpertMlp(OpBuilder &b, Location loc, BlockOp block, Value rows,
                                Value sizes, ValueRange gateUp, Value gateUpBias, Value down,
                                Value downBias, Value preweight) {
  SmallVector<Value> h;
  for (Value w : gateUp)
    h.push_back(GmmOp::create(b, loc, rows, w, sizes, /*rhs_scales=*/Value(), gateUpBias));
  Value act = buildActivation(b, loc, block, h);
  if (preweight)
    act = ScaleRowsOp::create(b, loc, act, preweight);
  return GmmOp::create(b, loc, act, down, sizes, /*rhs_scales=*/Value(), downBias);
}

Value mlir::moe::buildActivation(OpBuilder &b, Location loc, BlockOp block, ValueRange h) {
  return SwigluOp::create(b, loc, h, block.getActivationAttr(), block.getAlphaAttr(),
                          block.getLimitAttr(), block.getInterleavedAttr());
}

Value mlir::moe::addRowBias(OpBuilder &b, Location loc, Value m, Value bias) {
  // A broadcast and an add that upstream lowers as they are, and that the
  // backward knows (the bias's gradient sums the rows back).
  auto type = cast<RankedTensorType>(m.getType());
  auto biasType = cast<RankedTensorType>(bias.getType());
  if (biasType.getElementType() != type.getElementType())
    bias = castTo(b, loc, bias, biasType.clone(type.getElementType()));
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(tensor::DimOp::create(b, loc, m, 0));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dyn);
  Value rows = linalg::BroadcastOp::create(b, loc, bias, init, ArrayRef<int64_t>{0}).getResult()[0];
  return arith::AddFOp::create(b, loc, m, rows);
}

Value mlir::moe::buildSharedExpert(OpBuilder &b, Location loc, BlockOp block, Value x) {
  SmallVector<Value> gateUp;
  for (Value w : block.getSharedGateUp())
    gateUp.push_back(matmulF32(b, loc, x, w));
  Value act = SwigluOp::create(b, loc, gateUp);
  Value out = matmulF32(b, loc, act, block.getSharedDown());
  if (Value gate = block.getSharedGate()) {
    // Qwen2-MoE: times sigmoid(x @ w_gate), one gate per token.
    Value z = matmulF32(b, loc, x, gate);
    Value column = tensor::CollapseShapeOp::create(b, loc, z, ArrayRef<ReassociationIndices>{{0, 1}});
    out = ScaleRowsOp::create(b, loc, out, SigmoidOp::create(b, loc, column));
  }
  Type element = getElementTypeOrSelf(x.getType());
  if (element != b.getF32Type())
    out = arith::TruncFOp::create(b, loc,
                                  cast<RankedTensorType>(out.getType()).clone(element), out);
  return out;
}

bool mlir::moe::isSharedExpertMatmul(linalg::MatmulOp mm) {
  if (mm.hasUserDefinedMaps() ||
      !cast<RankedTensorType>(mm.getInputs()[1].getType()).hasStaticShape())
    return false;
  auto fill = mm.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return false;
  bool feedsSwiglu = llvm::any_of(mm->getUsers(), [](Operation *u) { return isa<SwigluOp>(u); });
  // The down projection reads the activation, through a truncf for bf16.
  Value act = mm.getInputs()[0];
  if (auto trunc = act.getDefiningOp<arith::TruncFOp>())
    act = trunc.getIn();
  bool readsSwiglu = static_cast<bool>(act.getDefiningOp<SwigluOp>());
  return feedsSwiglu || readsSwiglu;
}

Value mlir::moe::asOneExpert(OpBuilder &b, Location loc, Value w) {
  auto wType = cast<RankedTensorType>(w.getType());
  auto w3Type = RankedTensorType::get({1, wType.getDimSize(0), wType.getDimSize(1)},
                                      wType.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, w3Type, w,
                                       ArrayRef<ReassociationIndices>{{0, 1}, {2}});
}

std::pair<Value, Value> mlir::moe::OneGroupRows::get(OpBuilder &b, Location loc, Value x,
                                                     Type element) {
  auto [it, inserted] = made.try_emplace({x, element});
  if (!inserted)
    return it->second;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(x);
  Value rows = x;
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType() != element)
    rows = arith::ExtFOp::create(b, loc, type.clone(element), x);
  Value count = arith::IndexCastOp::create(b, loc, b.getI32Type(), tensor::DimOp::create(b, loc, x, 0));
  Value sizes = tensor::FromElementsOp::create(b, loc, RankedTensorType::get({1}, b.getI32Type()),
                                               ValueRange{count});
  return it->second = {rows, sizes};
}

void mlir::moe::replaceMatmul(OpBuilder &b, linalg::MatmulOp mm, Value result) {
  Type type = mm.getResult(0).getType();
  if (result.getType() != type) {
    b.setInsertionPoint(mm);
    result = tensor::CastOp::create(b, mm.getLoc(), type, result);
  }
  mm.getResult(0).replaceAllUsesWith(result);
  Value init = mm.getOutputs()[0];
  mm.erase();
  if (auto fill = init.getDefiningOp<linalg::FillOp>(); fill && fill->use_empty()) {
    Value empty = fill.getOutputs()[0];
    fill.erase();
    if (Operation *def = empty.getDefiningOp(); def && isa<tensor::EmptyOp>(def) && def->use_empty())
      def->erase();
  }
}

Value mlir::moe::castTo(OpBuilder &b, Location loc, Value v, Type type) {
  auto from = cast<RankedTensorType>(v.getType());
  auto to = cast<RankedTensorType>(type);
  if (from.getElementType() == to.getElementType())
    return v;
  auto target = from.clone(to.getElementType());
  if (from.getElementType().getIntOrFloatBitWidth() < to.getElementType().getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, target, v);
  return arith::TruncFOp::create(b, loc, target, v);
}
