//===- MoeOps.cpp - moe op verifiers and result type inference ------------===//
//
// Result type inference runs before the verifier (while parsing and building),
// so it never assumes a well-formed op: where an operand has the wrong rank it
// infers a dynamic size and leaves the message to the verifier, which names
// the operand and the dimension that disagree.
//
//===----------------------------------------------------------------------===//

#include "dialect/MoeOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::moe;

static constexpr int64_t kDyn = ShapedType::kDynamic;

namespace {
/// Size of dimension `i` of `t`, or dynamic when `t` is not a ranked tensor
/// with that many dimensions (inference must not crash on bad input).
int64_t dimOf(Type t, unsigned i) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || i >= rt.getRank())
    return kDyn;
  return rt.getDimSize(i);
}
int64_t dimOf(Value v, unsigned i) { return dimOf(v.getType(), i); }

Type elementOf(Value v) { return getElementTypeOrSelf(v.getType()); }

bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Prints a dimension the way MLIR types do: `?` for dynamic.
std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

/// Emits "<what> (a) does not match <other> (b)" when the sizes are both
/// static and differ.
LogicalResult expectDim(Operation *op, int64_t a, StringRef what, int64_t b,
                        StringRef other) {
  if (compatible(a, b))
    return success();
  return op->emitOpError() << what << " (" << dimStr(a) << ") does not match "
                           << other << " (" << dimStr(b) << ")";
}

/// A dimension that must be known at compile time (experts, hidden, widths).
LogicalResult expectStatic(Operation *op, int64_t d, StringRef what) {
  if (!ShapedType::isDynamic(d))
    return success();
  return op->emitOpError() << what << " must be static";
}

LogicalResult expectSameElement(Operation *op, Value a, StringRef aName,
                                Value b, StringRef bName) {
  if (elementOf(a) == elementOf(b))
    return success();
  return op->emitOpError() << aName << " element type " << elementOf(a)
                           << " does not match " << bName << " element type "
                           << elementOf(b);
}

/// The routing configuration shared by moe.route and moe.block.
LogicalResult verifyRouterConfig(Operation *op, int64_t columns, int64_t k,
                                 int64_t nullExperts, NullPolicy policy,
                                 bool drawnNulls = false) {
  if (ShapedType::isDynamic(columns))
    return op->emitOpError(
        "router logits must have a static expert dimension");
  if (nullExperts < 0)
    return op->emitOpError() << "null_experts (" << nullExperts
                             << ") must not be negative";
  if (nullExperts >= columns)
    return op->emitOpError()
           << "null_experts (" << nullExperts << ") leaves no real expert among "
           << columns << " router columns";
  if (k < 1 || k > columns)
    return op->emitOpError() << "top-k (" << k << ") must be in [1, " << columns
                             << "] (router columns)";
  if (nullExperts == 0 && !drawnNulls && policy != NullPolicy::independent)
    return op->emitOpError() << "null_policy " << stringifyNullPolicy(policy)
                             << " has no effect without null_experts or null_fraction";
  return success();
}

/// The selection knobs moe.route, moe.route_grad and moe.block share:
/// group-limited selection, the selection bias (length `biasLength`, or
/// none when negative) and the routed scaling factor.
LogicalResult verifySelection(Operation *op, int64_t columns, int64_t k, int64_t nullExperts,
                              RouteOrder order, int64_t biasLength, int64_t groups,
                              int64_t topkGroups, GroupScore groupScore, double scaling) {
  if (!(scaling > 0) || !std::isfinite(scaling))
    return op->emitOpError() << "routed_scaling (" << scaling
                             << ") must be a positive finite number";
  if (groups < 1)
    return op->emitOpError() << "groups (" << groups << ") must be at least 1";
  if (groups == 1 && topkGroups != 1)
    return op->emitOpError() << "topk_groups (" << topkGroups
                             << ") has no effect without groups (> 1)";
  if (groups == 1 && groupScore != GroupScore::max)
    return op->emitOpError() << "group_score " << stringifyGroupScore(groupScore)
                             << " has no effect without groups (> 1)";
  // biasLength: -1 for no bias, else its (maybe dynamic) length.
  bool hasBias = biasLength != -1;
  if (hasBias && ShapedType::isDynamic(biasLength))
    return op->emitOpError("selection_bias length must be static (one value per router column)");
  bool byScores = groups > 1 || hasBias;
  if (!byScores)
    return success();
  const char *what = groups > 1 ? "group-limited selection" : "a selection bias";
  if (order != RouteOrder::softmax_then_topk)
    return op->emitOpError() << what
                             << " chooses by scores: it needs order softmax_then_topk";
  if (nullExperts != 0)
    return op->emitOpError() << what << " does not combine with null_experts";
  if (hasBias &&
      failed(expectDim(op, biasLength, "selection_bias length", columns, "router columns")))
    return failure();
  if (groups == 1)
    return success();
  if (columns % groups != 0)
    return op->emitOpError() << "groups (" << groups << ") must divide the " << columns
                             << " router columns";
  int64_t perGroup = columns / groups;
  if (topkGroups < 1 || topkGroups > groups)
    return op->emitOpError() << "topk_groups (" << topkGroups << ") must be in [1, " << groups
                             << "] (groups)";
  if (k > topkGroups * perGroup)
    return op->emitOpError() << "top-k (" << k << ") exceeds the " << topkGroups * perGroup
                             << " experts of the " << topkGroups << " kept groups of "
                             << perGroup;
  if (groupScore == GroupScore::top2_sum && perGroup < 2)
    return op->emitOpError() << "group_score top2_sum needs groups of at least 2 experts, got "
                             << perGroup;
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// moe.route
//===----------------------------------------------------------------------===//

int64_t RouteOp::getNumExperts() {
  int64_t columns = dimOf(getLogits(), 1);
  return ShapedType::isDynamic(columns) ? kDyn
                                        : columns - (int64_t)getNullExperts();
}

LogicalResult RouteOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  int64_t tokens = dimOf(adaptor.getLogits(), 0);
  int64_t k = static_cast<int64_t>(adaptor.getK());
  if (k < 0)
    k = kDyn;
  types.push_back(RankedTensorType::get({tokens, k}, IntegerType::get(ctx, 32)));
  types.push_back(RankedTensorType::get({tokens, k}, Float32Type::get(ctx)));
  return success();
}

void RouteOp::build(OpBuilder &builder, OperationState &state, Value logits, int64_t k) {
  MLIRContext *ctx = builder.getContext();
  build(builder, state, logits, /*selection_bias=*/Value(), builder.getI64IntegerAttr(k),
        ScoringAttr::get(ctx, Scoring::softmax),
        RouteOrderAttr::get(ctx, RouteOrder::topk_then_softmax), /*renormalize=*/UnitAttr(),
        builder.getI64IntegerAttr(0), NullPolicyAttr::get(ctx, NullPolicy::independent),
        builder.getI64IntegerAttr(1), builder.getI64IntegerAttr(1),
        GroupScoreAttr::get(ctx, GroupScore::max), builder.getF64FloatAttr(1.0));
}

LogicalResult RouteOp::verify() {
  int64_t columns = dimOf(getLogits(), 1);
  if (failed(verifyRouterConfig(*this, columns, getK(), getNullExperts(), getNullPolicy())))
    return failure();
  return verifySelection(*this, columns, getK(), getNullExperts(), getOrder(),
                         getSelectionBias() ? dimOf(getSelectionBias(), 0) : -1, getGroups(),
                         getTopkGroups(), getGroupScore(), getRoutedScaling().convertToDouble());
}

//===----------------------------------------------------------------------===//
// moe.route_grad
//===----------------------------------------------------------------------===//

LogicalResult RouteGradOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  // Inference runs before the verifier: the logits may be of any type here.
  auto f32 = Float32Type::get(ctx);
  auto logits = dyn_cast<RankedTensorType>(adaptor.getLogits().getType());
  types.push_back(logits ? logits.clone(f32) : RankedTensorType::get({kDyn, kDyn}, f32));
  return success();
}

LogicalResult RouteGradOp::verify() {
  Operation *op = *this;
  if (failed(expectStatic(op, dimOf(getWeightsGrad(), 1),
                          "top-k (weights_grad dimension 1)")) ||
      failed(expectDim(op, dimOf(getWeightsGrad(), 0), "token count of weights_grad",
                       dimOf(getLogits(), 0), "token count of logits")))
    return failure();
  int64_t columns = dimOf(getLogits(), 1), k = dimOf(getWeightsGrad(), 1);
  if (failed(verifyRouterConfig(op, columns, k, getNullExperts(), getNullPolicy())))
    return failure();
  return verifySelection(op, columns, k, getNullExperts(), getOrder(),
                         getSelectionBias() ? dimOf(getSelectionBias(), 0) : -1, getGroups(),
                         getTopkGroups(), getGroupScore(), getRoutedScaling().convertToDouble());
}

//===----------------------------------------------------------------------===//
// moe.null_slots
//===----------------------------------------------------------------------===//

double mlir::moe::nullSlotProbability(double fraction, int64_t k, NullPolicy policy) {
  if (policy == NullPolicy::independent || fraction <= 0 || fraction >= 1 || k <= 1)
    return fraction;
  // The expected null fraction 1 - (1/K) sum_j (1 - p)^j grows with p from
  // 0 to 1: bisection to well below a float's resolution.
  auto expected = [&](double p) {
    double keep = 1, sum = 0;
    for (int64_t j = 0; j < k; ++j)
      sum += (keep *= 1 - p);
    return 1 - sum / double(k);
  };
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; ++i) {
    double mid = 0.5 * (lo + hi);
    (expected(mid) < fraction ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double NullSlotsOp::getSlotProbability() {
  return nullSlotProbability(getFraction().convertToDouble(), dimOf(getIds(), 1), getPolicy());
}

namespace {
LogicalResult verifyNullFraction(Operation *op, double fraction) {
  if (!(fraction >= 0 && fraction <= 1))
    return op->emitOpError() << "null fraction (" << llvm::formatv("{0}", fraction).str()
                             << ") must be in [0, 1]";
  return success();
}
} // namespace

LogicalResult NullSlotsOp::verify() {
  Operation *op = *this;
  if (failed(verifyNullFraction(op, getFraction().convertToDouble())))
    return failure();
  if (getExperts() < 1)
    return emitOpError() << "experts (" << getExperts() << ") must be positive";
  for (auto [v, name] : {std::pair{getWeights(), "weights"}, {getDraws(), "draws"}})
    if (failed(expectDim(op, dimOf(v, 0), std::string("token count of ") + name,
                         dimOf(getIds(), 0), "token count of ids")) ||
        failed(expectDim(op, dimOf(v, 1), std::string("slots of ") + name, dimOf(getIds(), 1),
                         "slots of ids")))
      return failure();
  return expectStatic(op, dimOf(getIds(), 1), "top-k (ids dimension 1)");
}

//===----------------------------------------------------------------------===//
// moe.pack
//===----------------------------------------------------------------------===//

int64_t PackOp::getNumLocalExperts() {
  if (auto local = getLocalExperts())
    return *local;
  return (int64_t)getExperts() - (int64_t)getExpertOffset();
}

LogicalResult PackOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  int64_t tokens = dimOf(adaptor.getX(), 0);
  int64_t k = dimOf(adaptor.getIds(), 1);
  int64_t rows = kDyn;
  if (auto capacity = adaptor.getCapacity()) {
    if (static_cast<int64_t>(*capacity) >= 0)
      rows = static_cast<int64_t>(*capacity);
  } else if (!ShapedType::isDynamic(tokens) && !ShapedType::isDynamic(k)) {
    rows = tokens * k;
  }
  // Default-valued attributes are not populated yet while parsing.
  IntegerAttr offsetAttr = adaptor.getExpertOffsetAttr();
  int64_t offset = offsetAttr ? offsetAttr.getInt() : 0;
  int64_t local = adaptor.getLocalExperts()
                      ? (int64_t)*adaptor.getLocalExperts()
                      : (int64_t)adaptor.getExperts() - offset;
  if (local < 0)
    local = kDyn;
  Type f32 = Float32Type::get(ctx);
  Type i32 = IntegerType::get(ctx, 32);
  types.push_back(RankedTensorType::get({rows, dimOf(adaptor.getX(), 1)},
                                        elementOf(adaptor.getX())));
  types.push_back(RankedTensorType::get({rows}, f32));
  types.push_back(RankedTensorType::get({rows}, i32));
  types.push_back(RankedTensorType::get({local}, i32));
  return success();
}

LogicalResult PackOp::verify() {
  Operation *op = *this;
  if (failed(expectDim(op, dimOf(getX(), 0), "token count of x",
                       dimOf(getIds(), 0), "token count of ids")) ||
      failed(expectDim(op, dimOf(getWeights(), 0), "token count of weights",
                       dimOf(getIds(), 0), "token count of ids")) ||
      failed(expectDim(op, dimOf(getWeights(), 1), "top-k of weights",
                       dimOf(getIds(), 1), "top-k of ids")) ||
      failed(expectStatic(op, dimOf(getIds(), 1), "top-k (ids dimension 1)")) ||
      failed(expectStatic(op, dimOf(getX(), 1), "hidden size (x dimension 1)")))
    return failure();
  int64_t experts = getExperts(), offset = getExpertOffset();
  if (experts < 1)
    return emitOpError() << "experts (" << experts << ") must be at least 1";
  if (offset < 0 || offset >= experts)
    return emitOpError() << "expert offset (" << offset << ") must be in [0, "
                         << experts << ")";
  int64_t local = getNumLocalExperts();
  if (local < 1 || offset + local > experts)
    return emitOpError() << "local experts [" << offset << ", "
                         << offset + local << ") must be a non-empty range in [0, "
                         << experts << ")";
  // I64Attr getters return unsigned values: compare as signed.
  if (auto capacity = getCapacity();
      capacity && static_cast<int64_t>(*capacity) < 1)
    return emitOpError() << "capacity (" << static_cast<int64_t>(*capacity)
                         << ") must be positive";
  return success();
}

//===----------------------------------------------------------------------===//
// moe.gather_rows
//===----------------------------------------------------------------------===//

LogicalResult GatherRowsOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location>,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get(
      {dimOf(adaptor.getPermutation(), 0), dimOf(adaptor.getSrc(), 1)},
      elementOf(adaptor.getSrc())));
  return success();
}

LogicalResult GatherRowsOp::verify() {
  int64_t k = static_cast<int64_t>(getK());
  if (k < 1)
    return emitOpError() << "top-k (" << k << ") must be at least 1";
  return success();
}

//===----------------------------------------------------------------------===//
// moe.gmm / moe.tgmm
//===----------------------------------------------------------------------===//

void GmmOp::build(OpBuilder &builder, OperationState &state, Value lhs, Value rhs,
                  Value groupSizes, bool transposeRhs) {
  build(builder, state, lhs, rhs, groupSizes, /*rhs_scales=*/Value(), /*bias=*/Value(),
        transposeRhs);
}

void GmmOp::build(OpBuilder &builder, OperationState &state, Value lhs, Value rhs,
                  Value groupSizes, Value rhsScales, Value bias, bool transposeRhs) {
  build(builder, state, lhs, rhs, groupSizes, rhsScales, bias, /*packed_rhs=*/Value(),
        transposeRhs);
}


LogicalResult GmmOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  int64_t n = dimOf(adaptor.getRhs(), adaptor.getTransposeRhs() ? 1 : 2);
  types.push_back(RankedTensorType::get({dimOf(adaptor.getLhs(), 0), n},
                                        elementOf(adaptor.getLhs())));
  return success();
}

namespace {
/// int8 weights' scales: [E] per expert or [E, N] per output channel of
/// weights [E, D, N].
LogicalResult verifyWeightScales(Operation *op, Value weights, Value scales) {
  auto type = cast<RankedTensorType>(scales.getType());
  if (failed(expectDim(op, type.getDimSize(0), "scale expert count",
                       dimOf(weights, 0), "weight expert count")))
    return failure();
  if (type.getRank() == 2)
    return expectDim(op, type.getDimSize(1), "scale channel count (dimension 1)",
                     dimOf(weights, 2), "weight output columns (dimension 2)");
  return success();
}
} // namespace

LogicalResult GmmOp::verify() {
  Operation *op = *this;
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  if (!rhs.hasStaticShape())
    return emitOpError() << "rhs (expert weights) must have a static shape, got "
                         << rhs;
  unsigned contraction = getTransposeRhs() ? 2 : 1;
  std::string rhsWhat = getTransposeRhs()
                            ? "rhs contraction size (dimension 2, transposed)"
                            : "rhs contraction size (dimension 1)";
  if (failed(expectDim(op, dimOf(getLhs(), 1), "lhs contraction size",
                       rhs.getDimSize(contraction), rhsWhat)) ||
      failed(expectDim(op, dimOf(getGroupSizes(), 0), "group count",
                       rhs.getDimSize(0), "rhs expert count")))
    return failure();
  if (Value bias = getBias()) {
    if (getTransposeRhs())
      return emitOpError("a bias is for the forward: transpose_rhs is not supported");
    if (!cast<RankedTensorType>(bias.getType()).hasStaticShape())
      return emitOpError() << "bias must have a static shape, got " << bias.getType();
    if (failed(expectDim(op, dimOf(bias, 0), "bias expert count", rhs.getDimSize(0),
                         "rhs expert count")) ||
        failed(expectDim(op, dimOf(bias, 1), "bias width", rhs.getDimSize(2),
                         "rhs output columns (dimension 2)")))
      return failure();
  }
  bool int8 = rhs.getElementType().isInteger(8);
  if (Value packed = getPackedRhs()) {
    // The layout itself is the lowering's (moe-lower-to-loops checks it).
    if (getTransposeRhs())
      return emitOpError("packed weights are for the forward: not with transpose_rhs");
    // int8 packs into int8 quads, float into float (pairs or FMA panels).
    if (int8 != cast<RankedTensorType>(packed.getType()).getElementType().isInteger(8))
      return emitOpError() << "packed weights " << packed.getType() << " do not match rhs " << rhs
                           << ": int8 weights pack into i8 quads, float weights into float";
    if (failed(expectDim(op, dimOf(packed, 0), "packed weights' expert count", rhs.getDimSize(0),
                         "rhs expert count")))
      return failure();
  }
  if (!int8) {
    if (getRhsScales())
      return emitOpError() << "scales are for int8 weights; rhs is " << rhs;
    return expectSameElement(op, getLhs(), "lhs", getRhs(), "rhs");
  }
  if (!getRhsScales())
    return emitOpError("int8 weights need their scales: scales(%s : tensor<Exf32>) or "
                       "tensor<ExNxf32> (moe.quantize makes both)");
  if (getTransposeRhs())
    return emitOpError("int8 weights are for the forward: transpose_rhs is not supported "
                       "(the backward multiplies by the dequantized weights)");
  return verifyWeightScales(op, getRhs(), getRhsScales());
}

//===----------------------------------------------------------------------===//
// moe.pack_weights
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType> PackWeightsOp::packedType(RankedTensorType gate, RankedTensorType up,
                                                      int64_t lanes, int64_t tileColumns,
                                                      int64_t blockColumns, int64_t gateUpUnit,
                                                      std::string &why) {
  auto fail = [&](const std::string &reason) -> FailureOr<RankedTensorType> {
    why = reason;
    return failure();
  };
  if (!gate.hasStaticShape() || (up && !up.hasStaticShape()))
    return fail("the weights must have static shapes");
  if (up && (up.getShape() != gate.getShape() || up.getElementType() != gate.getElementType()))
    return fail("gate and up must have the same type");
  if (up && gateUpUnit == 0)
    return fail("an up weight needs gate_up_unit (the SwiGLU's column runs)");
  // Every layout keeps the weights' element.
  Type element = gate.getElementType();
  bool int8 = element.isInteger(8);
  if (int8 != (lanes == 4))
    return fail("int8 weights pack with lanes 4 (quads), and only they");
  if (lanes != 1 && !(lanes == 2 && element.isBF16()) && lanes != 4)
    return fail("lanes must be 1 (panels, of float weights), 2 (bf16 pairs, of bf16 weights) or 4 (int8 "
                "quads, of int8 weights)");
  if (tileColumns <= 0 || tileColumns % 16 != 0 || (lanes > 1 && tileColumns != 16))
    return fail("tile_columns must be a positive multiple of 16 (16 with lanes 2 or 4)");
  if (blockColumns <= 0 || blockColumns % tileColumns != 0)
    return fail("block_columns must be a positive multiple of tile_columns");
  int64_t columns = gate.getDimSize(2), blockOut = blockColumns;
  if (gateUpUnit != 0) {
    // Runs of gate_up_unit / 2 columns, whole 16-column vectors; or, for
    // the FMA (lanes 1) panels alone, 8 (the FMA kind's one-vector SwiGLU
    // tile: half a vector gate, half up).
    bool halfVectors = gateUpUnit == 16 && lanes == 1;
    if (gateUpUnit < 0 || gateUpUnit % tileColumns != 0 || blockColumns % gateUpUnit != 0 ||
        (gateUpUnit % 32 != 0 && !halfVectors))
      return fail("gate_up_unit must be a multiple of tile_columns and of 32 (or 16 with lanes 1) that "
                  "divides block_columns");
    if (!up && columns % 2 != 0)
      return fail("a fused gate/up weight needs an even column count");
    columns = up ? columns : columns / 2;
    blockOut = blockColumns / 2;
  }
  int64_t blocks = (columns + blockOut - 1) / blockOut;
  int64_t depth = gate.getDimSize(1);
  // A tile row is 64 bytes of depth: 32 bf16 values, 64 int8 ones.
  int64_t tileDepth = lanes == 4 ? 64 : 32;
  int64_t depthRows = lanes == 1 ? depth : (depth + tileDepth - 1) / tileDepth * tileDepth / lanes;
  return RankedTensorType::get(
      {gate.getDimSize(0), blocks * blockColumns / tileColumns, depthRows, tileColumns * lanes},
      element);
}

LogicalResult PackWeightsOp::verify() {
  std::string why;
  auto up = getUp() ? cast<RankedTensorType>(getUp().getType()) : RankedTensorType();
  FailureOr<RankedTensorType> expected =
      packedType(cast<RankedTensorType>(getGate().getType()), up, getLanes(), getTileColumns(),
                 getBlockColumns(), getGateUpUnit(), why);
  if (failed(expected))
    return emitOpError() << why;
  if (*expected != getType())
    return emitOpError() << "the layout packs into " << *expected << ", not " << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// moe.quantize / moe.dequantize
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location>,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  Value in = adaptor.getInput();
  types.push_back(RankedTensorType::get({dimOf(in, 0), dimOf(in, 1), dimOf(in, 2)},
                                        IntegerType::get(ctx, 8)));
  auto f32 = Float32Type::get(ctx);
  if (adaptor.getGranularity() == QuantGranularity::per_channel)
    types.push_back(RankedTensorType::get({dimOf(in, 0), dimOf(in, 2)}, f32));
  else
    types.push_back(RankedTensorType::get({dimOf(in, 0)}, f32));
  return success();
}

LogicalResult QuantizeOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (!type.hasStaticShape())
    return emitOpError() << "weights must have a static shape, got " << type;
  return success();
}

LogicalResult DequantizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location>,
                                             Adaptor adaptor, SmallVectorImpl<Type> &types) {
  Value in = adaptor.getValues();
  types.push_back(RankedTensorType::get({dimOf(in, 0), dimOf(in, 1), dimOf(in, 2)},
                                        Float32Type::get(ctx)));
  return success();
}

LogicalResult DequantizeOp::verify() {
  auto type = cast<RankedTensorType>(getValues().getType());
  if (!type.hasStaticShape())
    return emitOpError() << "weights must have a static shape, got " << type;
  return verifyWeightScales(*this, getValues(), getScales());
}

LogicalResult TgmmOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get({dimOf(adaptor.getGroupSizes(), 0),
                                         dimOf(adaptor.getLhs(), 1),
                                         dimOf(adaptor.getRhs(), 1)},
                                        elementOf(adaptor.getLhs())));
  return success();
}

LogicalResult TgmmOp::verify() {
  Operation *op = *this;
  if (failed(expectDim(op, dimOf(getLhs(), 0), "lhs row count",
                       dimOf(getRhs(), 0), "rhs row count")) ||
      failed(expectStatic(op, dimOf(getGroupSizes(), 0), "group count")) ||
      failed(expectStatic(op, dimOf(getLhs(), 1), "lhs column count")) ||
      failed(expectStatic(op, dimOf(getRhs(), 1), "rhs column count")) ||
      failed(expectSameElement(op, getLhs(), "lhs", getRhs(), "rhs")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// moe.swiglu / moe.scale_rows
//===----------------------------------------------------------------------===//

LogicalResult SwigluOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty()) {
    // No operand to take a type from: say why here, the verifier never runs.
    if (location)
      mlir::emitError(*location, "'moe.swiglu' op expects one fused gate|up "
                                 "operand or two (gate, up), got 0");
    return failure();
  }
  int64_t rows = dimOf(inputs[0], 0);
  int64_t width = dimOf(inputs[0], 1);
  if (inputs.size() == 1 && !ShapedType::isDynamic(width))
    width /= 2;
  if (inputs.size() == 2 && ShapedType::isDynamic(rows))
    rows = dimOf(inputs[1], 0);
  types.push_back(
      RankedTensorType::get({rows, width}, elementOf(inputs[0])));
  return success();
}

namespace {
/// The forward inputs of swiglu and swiglu_grad: one fused [R, 2M] operand,
/// or gate and up [R, M] of one type.
LogicalResult verifySwigluInputs(Operation *op, ValueRange inputs) {
  if (inputs.size() == 1) {
    int64_t width = dimOf(inputs[0], 1);
    if (failed(expectStatic(op, width, "fused gate|up width")))
      return failure();
    if (width % 2 != 0)
      return op->emitOpError() << "fused gate|up width (" << width
                               << ") must be even: gate and up halves";
    return success();
  }
  if (inputs.size() != 2)
    return op->emitOpError()
           << "expects one fused gate|up operand or two (gate, up), got "
           << inputs.size();
  if (failed(expectDim(op, dimOf(inputs[0], 0), "gate row count",
                       dimOf(inputs[1], 0), "up row count")) ||
      failed(expectDim(op, dimOf(inputs[0], 1), "gate width",
                       dimOf(inputs[1], 1), "up width")) ||
      failed(expectStatic(op, dimOf(inputs[0], 1), "gate width")) ||
      failed(expectSameElement(op, inputs[0], "gate", inputs[1], "up")))
    return failure();
  return success();
}
} // namespace

namespace {
/// The activation attributes of swiglu and swiglu_grad.
template <typename SwigluLikeOp>
LogicalResult verifyActivation(SwigluLikeOp op) {
  if (op.getInterleaved() && op.getInputs().size() != 1)
    return op.emitOpError("interleaved gate/up columns need one fused gate|up operand");
  double alpha = op.getAlpha().convertToDouble(), limit = op.getLimit().convertToDouble();
  if (op.getActivation() == Activation::swiglu) {
    if (alpha != 1.702 || limit != 7.0)
      return op.emitOpError("alpha and limit apply to activation gpt_oss");
    return success();
  }
  if (!(limit > 0) || !std::isfinite(limit) || !std::isfinite(alpha))
    return op.emitOpError() << "activation gpt_oss needs a positive finite limit and a finite "
                               "alpha, got limit "
                            << limit << " and alpha " << alpha;
  return success();
}
} // namespace

LogicalResult SwigluOp::verify() {
  if (failed(verifySwigluInputs(*this, getInputs())))
    return failure();
  return verifyActivation(*this);
}

LogicalResult SwigluGradOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location>,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  for (Value input : adaptor.getInputs())
    types.push_back(input.getType());
  return success();
}

LogicalResult SwigluGradOp::verify() {
  if (failed(verifySwigluInputs(*this, getInputs())) || failed(verifyActivation(*this)))
    return failure();
  // grad has the shape of the forward result.
  SmallVector<Type> forward;
  (void)SwigluOp::inferReturnTypes(
      getContext(), getLoc(), SwigluOp::Adaptor(getInputs(), DictionaryAttr{}),
      forward);
  auto out = cast<RankedTensorType>(forward[0]);
  if (failed(expectDim(*this, dimOf(getGrad(), 0), "grad row count",
                       out.getDimSize(0), "input row count")) ||
      failed(expectDim(*this, dimOf(getGrad(), 1), "grad width",
                       out.getDimSize(1), "activation width")) ||
      failed(expectSameElement(*this, getGrad(), "grad", getInputs()[0],
                               "input")))
    return failure();
  return success();
}

LogicalResult ScaleRowsOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult ScaleRowsOp::verify() {
  return expectDim(*this, dimOf(getInput(), 0), "input row count",
                   dimOf(getScale(), 0), "scale length");
}

//===----------------------------------------------------------------------===//
// moe.scatter_slots
//===----------------------------------------------------------------------===//

LogicalResult ScatterSlotsOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location>,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getLike().getType());
  return success();
}

LogicalResult ScatterSlotsOp::verify() {
  Operation *op = *this;
  if (failed(expectDim(op, dimOf(getValues(), 0), "values length",
                       dimOf(getPermutation(), 0), "permutation length")) ||
      failed(expectStatic(op, dimOf(getLike(), 1), "top-k (like dimension 1)")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// moe.combine
//===----------------------------------------------------------------------===//

LogicalResult CombineOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get(
      {dimOf(adaptor.getWeights(), 0), dimOf(adaptor.getRows(), 1)},
      elementOf(adaptor.getRows())));
  return success();
}

LogicalResult CombineOp::verify() {
  Operation *op = *this;
  if (failed(expectDim(op, dimOf(getRows(), 0), "row count",
                       dimOf(getPermutation(), 0), "permutation length")) ||
      failed(expectStatic(op, dimOf(getWeights(), 1),
                          "top-k (weights dimension 1)")) ||
      failed(expectStatic(op, dimOf(getRows(), 1),
                          "hidden size (rows dimension 1)")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

FailureOr<ResolvedGridAxes>
mlir::moe::resolveGridAxes(Operation *from, SymbolTableCollection &symbols,
                           FlatSymbolRefAttr gridRef, ArrayAttr axes) {
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(from, gridRef);
  if (!grid)
    return from->emitOpError() << "grid " << gridRef
                               << " does not name a shard.grid";
  auto names = grid->getAttrOfType<ArrayAttr>(kAxesAttrName);
  if (!names)
    return from->emitOpError()
           << "grid " << gridRef << " has no '" << kAxesAttrName
           << "' attribute naming its axes";
  if (axes.empty())
    return from->emitOpError("expects at least one grid axis");
  ResolvedGridAxes resolved;
  resolved.grid = grid;
  llvm::StringSet<> seen;
  ArrayRef<int64_t> shape = grid.getShape();
  for (Attribute axis : axes) {
    StringRef name = cast<StringAttr>(axis).getValue();
    if (!seen.insert(name).second)
      return from->emitOpError() << "names grid axis '" << name << "' twice";
    auto it = llvm::find_if(names, [&](Attribute a) {
      return cast<StringAttr>(a).getValue() == name;
    });
    if (it == names.end())
      return from->emitOpError() << "grid " << gridRef << " has no axis named '"
                                 << name << "' (axes: " << names << ")";
    int64_t position = std::distance(names.begin(), it);
    // The grid's own verifier matches moe.axes to its rank; resolveGridAxes
    // also serves the lowerings, which may meet IR not verified since.
    if (position >= static_cast<int64_t>(shape.size()))
      return from->emitOpError() << "grid " << gridRef << " names " << names.size()
                                 << " axes but has " << shape.size()
                                 << " dimensions: no size for axis '" << name << "'";
    int16_t index = static_cast<int16_t>(position);
    resolved.indices.push_back(index);
    int64_t size = shape[index];
    // A collective over an axis of no shards has nobody to talk to (and
    // the sizes it checks would divide by zero).
    if (!ShapedType::isDynamic(size) && size < 1)
      return from->emitOpError() << "grid " << gridRef << " axis '" << name << "' has size "
                                 << size << ": a collective needs at least one shard";
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(resolved.shards))
      resolved.shards = kDyn;
    else
      resolved.shards *= size;
  }
  return resolved;
}

LogicalResult PsumOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return resolveGridAxes(*this, symbols, getGridAttr(), getAxes());
}

namespace {
/// all_gather multiplies dimension `dim` by the shard count, reduce_scatter
/// divides it; every other dimension and the element type pass through.
LogicalResult verifyResizingCollective(Operation *op,
                                       SymbolTableCollection &symbols,
                                       FlatSymbolRefAttr grid, ArrayAttr axes,
                                       Value input, Value result, int64_t dim,
                                       bool gathers) {
  auto resolved = resolveGridAxes(op, symbols, grid, axes);
  if (failed(resolved))
    return failure();
  auto in = cast<RankedTensorType>(input.getType());
  auto out = cast<RankedTensorType>(result.getType());
  if (in.getElementType() != out.getElementType())
    return op->emitOpError() << "result element type " << out.getElementType()
                             << " does not match input element type "
                             << in.getElementType();
  if (in.getRank() != out.getRank())
    return op->emitOpError() << "result rank (" << out.getRank()
                             << ") does not match input rank (" << in.getRank()
                             << ")";
  if (dim < 0 || dim >= in.getRank())
    return op->emitOpError() << "dim (" << dim << ") is out of range for rank "
                             << in.getRank();
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (i == dim)
      continue;
    if (!compatible(in.getDimSize(i), out.getDimSize(i)))
      return op->emitOpError() << "result dimension " << i << " ("
                               << dimStr(out.getDimSize(i))
                               << ") does not match input dimension " << i
                               << " (" << dimStr(in.getDimSize(i)) << ")";
  }
  int64_t shards = resolved->shards, inDim = in.getDimSize(dim),
          outDim = out.getDimSize(dim);
  if (ShapedType::isDynamic(shards) || ShapedType::isDynamic(inDim) ||
      ShapedType::isDynamic(outDim))
    return success();
  if (gathers && outDim != inDim * shards)
    return op->emitOpError() << "result dimension " << dim << " (" << outDim
                             << ") must be " << shards
                             << " shards x input dimension (" << inDim << ")";
  if (!gathers && (inDim % shards != 0 || outDim != inDim / shards))
    return op->emitOpError() << "input dimension " << dim << " (" << inDim
                             << ") must split evenly into " << shards
                             << " shards of the result dimension (" << outDim
                             << ")";
  return success();
}
} // namespace

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyResizingCollective(*this, symbols, getGridAttr(), getAxes(),
                                  getInput(), getResult(), getDim(),
                                  /*gathers=*/true);
}

LogicalResult ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyResizingCollective(*this, symbols, getGridAttr(), getAxes(),
                                  getInput(), getResult(), getDim(),
                                  /*gathers=*/false);
}

LogicalResult AllToAllOp::verify() {
  auto rows = cast<RankedTensorType>(getRows().getType());
  auto received = cast<RankedTensorType>(getReceived().getType());
  if (rows.getRank() < 1)
    return emitOpError("rows must have at least one dimension");
  if (rows.getElementType() != received.getElementType() ||
      rows.getRank() != received.getRank())
    return emitOpError() << "received type " << received
                         << " must have the element type and rank of rows "
                         << rows;
  for (int64_t i = 1; i < rows.getRank(); ++i)
    if (!compatible(rows.getDimSize(i), received.getDimSize(i)))
      return emitOpError() << "received dimension " << i << " ("
                           << dimStr(received.getDimSize(i))
                           << ") does not match rows dimension " << i << " ("
                           << dimStr(rows.getDimSize(i)) << ")";
  return success();
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto resolved = resolveGridAxes(*this, symbols, getGridAttr(), getAxes());
  if (failed(resolved))
    return failure();
  return expectDim(*this, dimOf(getSendCounts(), 0), "send_counts length",
                   resolved->shards, "shard count along the axes");
}

//===----------------------------------------------------------------------===//
// moe.block
//===----------------------------------------------------------------------===//

int64_t BlockOp::getNumExperts() { return dimOf(getExpertDown(), 0); }
int64_t BlockOp::getExpertDim() { return dimOf(getExpertDown(), 1); }
int64_t BlockOp::getSharedDim() {
  return getSharedDown() ? dimOf(getSharedDown(), 0) : 0;
}

LogicalResult BlockOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getX().getType());
  return success();
}

namespace {
/// What makes a block a family's layer (shared/docs/model-families.md): the
/// conditions its attributes and operands must meet, each with what to say
/// when one does not hold.
SmallVector<std::pair<bool, const char *>> familyForm(BlockOp op) {
  bool softmax = op.getScoring() == Scoring::softmax;
  bool byScores = op.getOrder() == RouteOrder::softmax_then_topk;
  bool shared = op.hasSharedExpert(), gated = (bool)op.getSharedGate();
  bool biases = op.getGateUpBias() || op.getDownBias();
  bool gptOss = op.getActivation() == Activation::gpt_oss;
  bool plainExperts = !biases && !gptOss && !op.getInterleaved() && !op.getWeightInput();
  bool plainRouter = !op.getRouterBias() && !op.getSelectionBias() && op.getGroups() == 1 &&
                     op.getRoutedScaling().convertToDouble() == 1.0;
  switch (*op.getFamily()) {
  case Family::mixtral:
    return {{softmax, "scoring softmax"},
            {op.getRenormalize() || !byScores,
             "weights renormalised over the chosen (renormalize, or order topk_then_softmax)"},
            {plainRouter && plainExperts && !shared, "no bias, groups, scaling or shared expert"}};
  case Family::qwen2_moe:
    return {{softmax && byScores, "scoring softmax and order softmax_then_topk"},
            {plainRouter && plainExperts, "no bias, groups or scaling"},
            {shared && gated, "a shared expert gated by shared_gate(...)"}};
  case Family::qwen3_moe:
  case Family::olmoe:
    return {{softmax && byScores, "scoring softmax and order softmax_then_topk"},
            {plainRouter && plainExperts && !shared, "no bias, groups, scaling or shared expert"}};
  case Family::deepseek_v2:
    return {{softmax && byScores, "scoring softmax and order softmax_then_topk"},
            {!op.getSelectionBias() && !op.getRouterBias(), "no router or selection bias"},
            {op.getGroups() == 1 || op.getGroupScore() == GroupScore::max,
             "groups scored by their max (group_score max)"},
            {plainExperts && !gated, "plain SwiGLU experts and an ungated shared expert"}};
  case Family::deepseek_v3:
    return {{!softmax && byScores, "scoring sigmoid and order softmax_then_topk"},
            {(bool)op.getSelectionBias(), "a selection_bias(...) (e_score_correction_bias)"},
            {op.getGroups() == 1 || op.getGroupScore() == GroupScore::top2_sum,
             "groups scored by the sum of their top 2 (group_score top2_sum)"},
            {!op.getRouterBias() && plainExperts && !gated,
             "no router bias, plain SwiGLU experts and an ungated shared expert"}};
  case Family::gpt_oss:
    return {{softmax && !byScores, "scoring softmax over the K chosen (order topk_then_softmax)"},
            {(op.getRouterBias() || op.getRouterLogits()) && op.getGateUpBias() &&
                 op.getDownBias(),
             "router_bias(...) (or logits(...) that carry it), gate_up_bias(...) and "
             "down_bias(...)"},
            {gptOss && op.getInterleaved(), "activation gpt_oss with interleaved gate/up columns"},
            {!op.getSelectionBias() && op.getGroups() == 1 &&
                 op.getRoutedScaling().convertToDouble() == 1.0 && !op.getWeightInput() && !shared,
             "no selection bias, groups, scaling, weight_input or shared expert"}};
  case Family::llama4:
    return {{!softmax && !byScores && !op.getRenormalize(),
             "scoring sigmoid of the chosen logits (order topk_then_softmax, no renormalize)"},
            {op.getWeightInput(), "weight_input (the weight scales the expert's input)"},
            {plainRouter && !biases && !gptOss && !op.getInterleaved() && !gated,
             "no bias, groups, scaling, gate/up interleaving or shared gate"}};
  }
  return {};
}
} // namespace

LogicalResult BlockOp::verifyVariants(int64_t columns, int64_t experts, int64_t mlp,
                                      int64_t hidden) {
  Operation *op = *this;
  if (failed(verifySelection(op, columns, getK(), getNullExperts(), getOrder(),
                             getSelectionBias() ? dimOf(getSelectionBias(), 0) : -1, getGroups(),
                             getTopkGroups(), getGroupScore(),
                             getRoutedScaling().convertToDouble())))
    return failure();
  for (auto [bias, name] : {std::pair{getRouterBias(), "router_bias"},
                            std::pair{getGateUpBias(), "gate_up_bias"},
                            std::pair{getDownBias(), "down_bias"},
                            std::pair{getSharedGate(), "shared_gate"}})
    if (bias && !cast<RankedTensorType>(bias.getType()).hasStaticShape())
      return emitOpError() << name << " must have a static shape, got " << bias.getType();
  if (getNullFraction() && getRenormalize() && getRoutedScaling().convertToDouble() != 1.0)
    return emitOpError("renormalize with null_fraction renormalises the real weights after the "
                       "nulling, which would undo routed_scaling: give one");
  if (Value bias = getRouterBias()) {
    if (!getRouterWeight())
      return emitOpError("router_bias(...) needs router(...) weights: fixed logits(...) "
                         "carry their bias already");
    if (failed(expectDim(op, dimOf(bias, 0), "router_bias length", columns, "router columns")))
      return failure();
  }
  auto gateUp = getExpertGateUp();
  if (Value bias = getGateUpBias()) {
    if (gateUp.size() != 1)
      return emitOpError("gate_up_bias(...) needs one fused gate_up weight [E, H, 2M]");
    if (failed(expectDim(op, dimOf(bias, 0), "gate_up_bias expert count", experts,
                         "expert count of down weights")) ||
        failed(expectDim(op, dimOf(bias, 1), "gate_up_bias width", 2 * mlp,
                         "2 x mlp size of down weights")) ||
        failed(expectSameElement(op, bias, "gate_up_bias", getX(), "x")))
      return failure();
  }
  if (Value bias = getDownBias())
    if (failed(expectDim(op, dimOf(bias, 0), "down_bias expert count", experts,
                         "expert count of down weights")) ||
        failed(expectDim(op, dimOf(bias, 1), "down_bias width", hidden, "hidden size of x")) ||
        failed(expectSameElement(op, bias, "down_bias", getX(), "x")))
      return failure();
  if (getInterleaved() && gateUp.size() != 1)
    return emitOpError("interleaved gate/up columns need one fused gate_up weight [E, H, 2M]");
  double alpha = getAlpha().convertToDouble(), limit = getLimit().convertToDouble();
  if (getActivation() == Activation::swiglu && (alpha != 1.702 || limit != 7.0))
    return emitOpError("alpha and limit apply to activation gpt_oss");
  if (getActivation() == Activation::gpt_oss &&
      (!(limit > 0) || !std::isfinite(limit) || !std::isfinite(alpha)))
    return emitOpError() << "activation gpt_oss needs a positive finite limit and a finite "
                            "alpha, got limit "
                         << limit << " and alpha " << alpha;
  if (getPreweight() && getDownBias())
    return emitOpError("preweight scales the activations before the down projection, whose "
                       "down_bias must be weighted after it: drop preweight");
  if (getWeightInput() && getPreweight())
    return emitOpError("weight_input and preweight both say where the routing weight "
                       "applies: give one");
  if (Value gate = getSharedGate()) {
    if (!hasSharedExpert())
      return emitOpError("shared_gate(...) needs a shared expert");
    if (failed(expectDim(op, dimOf(gate, 0), "shared_gate rows", hidden, "hidden size of x")) ||
        failed(expectDim(op, dimOf(gate, 1), "shared_gate columns", 1, "one gate per token")) ||
        failed(expectSameElement(op, gate, "shared_gate", getX(), "x")))
      return failure();
  }
  if (getFamily())
    for (auto [holds, what] : familyForm(*this))
      if (!holds)
        return emitOpError() << "family " << stringifyFamily(*getFamily()) << " needs " << what;
  return success();
}

LogicalResult BlockOp::verify() {
  Operation *op = *this;
  int64_t tokens = dimOf(getX(), 0), hidden = dimOf(getX(), 1);
  if (failed(expectStatic(op, hidden, "hidden size (x dimension 1)")))
    return failure();

  // Routed experts: w2 [E, M, H] fixes E and M.
  auto down = cast<RankedTensorType>(getExpertDown().getType());
  if (!down.hasStaticShape())
    return emitOpError() << "expert down weights must have a static shape, got "
                         << down;
  int64_t experts = down.getDimSize(0), mlp = down.getDimSize(1);
  if (failed(expectDim(op, down.getDimSize(2),
                       "hidden size of expert down weights (dimension 2)",
                       hidden, "hidden size of x")) ||
      failed(expectSameElement(op, getExpertDown(), "expert down weights",
                               getX(), "x")))
    return failure();

  auto gateUp = getExpertGateUp();
  if (gateUp.size() != 1 && gateUp.size() != 2)
    return emitOpError() << "expects expert gate/up weights as one fused w13 "
                            "or two (w1, w3), got "
                         << gateUp.size();
  int64_t gateUpWidth = gateUp.size() == 1 ? 2 * mlp : mlp;
  for (Value w : gateUp) {
    std::string name = gateUp.size() == 1 ? "expert w13" : "expert w1/w3";
    if (failed(expectDim(op, dimOf(w, 0), name + " expert count", experts,
                         "expert count of down weights")) ||
        failed(expectDim(op, dimOf(w, 1), name + " hidden size", hidden,
                         "hidden size of x")) ||
        failed(expectStatic(op, dimOf(w, 2), name + " width")) ||
        failed(expectDim(op, dimOf(w, 2), name + " width", gateUpWidth,
                         gateUp.size() == 1 ? "2 x mlp size of down weights"
                                            : "mlp size of down weights")) ||
        failed(expectSameElement(op, w, name, getX(), "x")))
      return failure();
  }

  // Router: exactly one of fixed logits [T, E + N] or weights [H, E + N].
  if ((bool)getRouterLogits() == (bool)getRouterWeight())
    return emitOpError(
        "expects exactly one router input: logits(...) or router(...)");
  int64_t columns;
  if (Value logits = getRouterLogits()) {
    columns = dimOf(logits, 1);
    if (failed(expectDim(op, dimOf(logits, 0), "token count of router logits",
                         tokens, "token count of x")))
      return failure();
  } else {
    Value w = getRouterWeight();
    columns = dimOf(w, 1);
    if (failed(expectDim(op, dimOf(w, 0), "router weight rows", hidden,
                         "hidden size of x")) ||
        failed(expectSameElement(op, w, "router weight", getX(), "x")))
      return failure();
  }
  if (failed(verifyRouterConfig(op, columns, getK(), getNullExperts(),
                                getNullPolicy(), (bool)getNullFraction())))
    return failure();
  // Benchmark null routing: draws [T, K] and a fraction, both or neither.
  if ((bool)getNullDraws() != (bool)getNullFraction())
    return emitOpError("null_draws(...) and null_fraction are given together or not at all");
  if (Value draws = getNullDraws()) {
    if (failed(verifyNullFraction(op, getNullFraction()->convertToDouble())) ||
        failed(expectDim(op, dimOf(draws, 0), "token count of null_draws", tokens,
                         "token count of x")) ||
        failed(expectDim(op, dimOf(draws, 1), "slots of null_draws", getK(), "top-k")))
      return failure();
  }
  if (columns - (int64_t)getNullExperts() != experts)
    return emitOpError() << "router scores " << columns - (int64_t)getNullExperts()
                         << " real experts (" << columns << " columns - "
                         << getNullExperts()
                         << " null experts) but the expert weights hold "
                         << experts;

  if (failed(verifyVariants(columns, experts, mlp, hidden)))
    return failure();

  // Shared expert: none, or (sw13 | sw1, sw3) and sw2 [S, H].
  auto sharedGateUp = getSharedGateUp();
  Value sharedDown = getSharedDown();
  if (sharedGateUp.empty() != !sharedDown)
    return emitOpError("shared expert needs both gate/up and down weights");
  if (sharedGateUp.empty())
    return success();
  if (sharedGateUp.size() > 2)
    return emitOpError() << "expects shared gate/up weights as one fused sw13 "
                            "or two (sw1, sw3), got "
                         << sharedGateUp.size();
  int64_t shared = dimOf(sharedDown, 0);
  if (failed(expectStatic(op, shared, "shared expert size")) ||
      failed(expectDim(op, dimOf(sharedDown, 1),
                       "hidden size of shared down weights", hidden,
                       "hidden size of x")) ||
      failed(expectSameElement(op, sharedDown, "shared down weights", getX(),
                               "x")))
    return failure();
  int64_t sharedWidth = sharedGateUp.size() == 1 ? 2 * shared : shared;
  for (Value w : sharedGateUp) {
    std::string name = sharedGateUp.size() == 1 ? "shared sw13" : "shared sw1/sw3";
    if (failed(expectDim(op, dimOf(w, 0), name + " hidden size", hidden,
                         "hidden size of x")) ||
        failed(expectStatic(op, dimOf(w, 1), name + " width")) ||
        failed(expectDim(op, dimOf(w, 1), name + " width", sharedWidth,
                         sharedGateUp.size() == 1
                             ? "2 x shared size of down weights"
                             : "shared size of down weights")) ||
        failed(expectSameElement(op, w, name, getX(), "x")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// moe.block's knobs: any order
//===----------------------------------------------------------------------===//

// Why a custom directive: ODS's declarative format takes optional groups in
// the order written, so `top 2 renormalize scoring sigmoid` failed with only
// "expected ':'". The knobs are keyword-value pairs after the operands; they
// parse in any order (each once) and print in the canonical order, with the
// defaults left out as the declarative format did.
namespace {
enum class KnobKind { Integer, Float, Unit, Enum };

struct BlockKnob {
  StringLiteral keyword;
  KnobKind kind;
  /// Integer and float knobs: the value that is not printed (the
  /// attribute's default); none for `top` and the optional ones.
  std::optional<double> defaultValue = std::nullopt;
  /// Enums: keyword -> value and back (every default is case 0).
  std::optional<uint32_t> (*symbolize)(StringRef) = nullptr;
  StringRef (*stringify)(uint32_t) = nullptr;
};

template <typename Enum, std::optional<Enum> (*Symbolize)(StringRef),
          StringRef (*Stringify)(Enum)>
BlockKnob enumKnob(StringLiteral keyword) {
  return {keyword, KnobKind::Enum, std::nullopt,
          [](StringRef s) -> std::optional<uint32_t> {
            if (std::optional<Enum> v = Symbolize(s))
              return static_cast<uint32_t>(*v);
            return std::nullopt;
          },
          [](uint32_t v) { return Stringify(static_cast<Enum>(v)); }};
}

/// Every knob in the canonical (printing) order. The keyword is the
/// attribute's name.
ArrayRef<BlockKnob> blockKnobs() {
  static const BlockKnob knobs[] = {
      {"top", KnobKind::Integer},
      enumKnob<Scoring, symbolizeScoring, stringifyScoring>("scoring"),
      enumKnob<RouteOrder, symbolizeRouteOrder, stringifyRouteOrder>("order"),
      {"renormalize", KnobKind::Unit},
      {"null_experts", KnobKind::Integer, 0.0},
      enumKnob<NullPolicy, symbolizeNullPolicy, stringifyNullPolicy>("null_policy"),
      {"null_fraction", KnobKind::Float},
      {"groups", KnobKind::Integer, 1.0},
      {"topk_groups", KnobKind::Integer, 1.0},
      enumKnob<GroupScore, symbolizeGroupScore, stringifyGroupScore>("group_score"),
      {"routed_scaling", KnobKind::Float, 1.0},
      enumKnob<PackStrategy, symbolizePackStrategy, stringifyPackStrategy>("pack_strategy"),
      enumKnob<CombineStrategy, symbolizeCombineStrategy, stringifyCombineStrategy>(
          "combine_strategy"),
      {"preweight", KnobKind::Unit},
      {"weight_input", KnobKind::Unit},
      enumKnob<Activation, symbolizeActivation, stringifyActivation>("activation"),
      {"alpha", KnobKind::Float, 1.702},
      {"limit", KnobKind::Float, 7.0},
      {"interleaved", KnobKind::Unit},
      enumKnob<Family, symbolizeFamily, stringifyFamily>("family"),
  };
  return knobs;
}

/// The attribute a knob keyword sets (`top` sets k).
StringRef knobAttrName(const BlockKnob &knob) {
  return knob.keyword == "top" ? StringRef("k") : StringRef(knob.keyword);
}

std::string knobKeywordList() {
  std::string list;
  for (const BlockKnob &knob : blockKnobs())
    list += (list.empty() ? "" : ", ") + knob.keyword.str();
  return list;
}
} // namespace

static ParseResult parseBlockKnobs(OpAsmParser &parser, NamedAttrList &attrs) {
  MLIRContext *ctx = parser.getContext();
  Builder b(ctx);
  llvm::StringSet<> seen;
  while (true) {
    llvm::SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (failed(parser.parseOptionalKeyword(&keyword)))
      break;
    const BlockKnob *knob = llvm::find_if(
        blockKnobs(), [&](const BlockKnob &k) { return k.keyword == keyword; });
    if (knob == blockKnobs().end())
      return parser.emitError(loc) << "unknown keyword '" << keyword
                                   << "'; the keywords after the operands are: "
                                   << knobKeywordList();
    if (!seen.insert(keyword).second)
      return parser.emitError(loc) << "'" << keyword << "' is given twice";
    StringRef name = knobAttrName(*knob);
    switch (knob->kind) {
    case KnobKind::Unit:
      attrs.set(name, b.getUnitAttr());
      break;
    case KnobKind::Integer: {
      int64_t v = 0;
      if (parser.parseInteger(v))
        return failure();
      attrs.set(name, b.getI64IntegerAttr(v));
      break;
    }
    case KnobKind::Float: {
      double v = 0;
      if (parser.parseFloat(v))
        return failure();
      attrs.set(name, b.getF64FloatAttr(v));
      break;
    }
    case KnobKind::Enum: {
      llvm::SMLoc valueLoc = parser.getCurrentLocation();
      StringRef value;
      if (parser.parseKeyword(&value))
        return failure();
      std::optional<uint32_t> v = knob->symbolize(value);
      if (!v) {
        std::string cases;
        for (uint32_t i = 0; !knob->stringify(i).empty(); ++i)
          cases += (cases.empty() ? "" : ", ") + knob->stringify(i).str();
        return parser.emitError(valueLoc) << "'" << value << "' is not a " << keyword
                                          << "; one of: " << cases;
      }
      attrs.set(name, b.getI32IntegerAttr(static_cast<int32_t>(*v)));
      break;
    }
    }
  }
  if (!seen.contains("top"))
    return parser.emitError(parser.getCurrentLocation())
           << "expected 'top K' (the keywords after the operands, in any order: "
           << knobKeywordList() << ")";
  // A knob written in the {...} dictionary instead, e.g. {groups = "x"}, is
  // checked as the declarative format's parser checks inherent attributes:
  // with properties, a wrongly typed one would otherwise be dropped and the
  // verifier would read a null attribute.
  llvm::SMLoc dictLoc = parser.getCurrentLocation();
  if (parser.parseOptionalAttrDict(attrs))
    return failure();
  return BlockOp::verifyInherentAttrs(OperationName(BlockOp::getOperationName(), ctx), attrs,
                                      [&] { return parser.emitError(dictLoc); });
}

static void printBlockKnobs(OpAsmPrinter &printer, Operation *op, DictionaryAttr attrs) {
  SmallVector<StringRef> elided = {"operandSegmentSizes"};
  // The directive's own space comes before it: none before the first knob.
  StringRef space = "";
  auto keyword = [&](StringRef word) {
    printer << space << word;
    space = " ";
  };
  for (const BlockKnob &knob : blockKnobs()) {
    StringRef name = knobAttrName(knob);
    elided.push_back(name);
    Attribute attr = attrs.get(name);
    if (!attr)
      continue;
    switch (knob.kind) {
    case KnobKind::Unit:
      keyword(knob.keyword);
      break;
    case KnobKind::Integer: {
      int64_t v = cast<IntegerAttr>(attr).getInt();
      if (!knob.defaultValue || double(v) != *knob.defaultValue) {
        keyword(knob.keyword);
        printer << " " << v;
      }
      break;
    }
    case KnobKind::Float: {
      auto f = cast<FloatAttr>(attr);
      if (!knob.defaultValue || f.getValueAsDouble() != *knob.defaultValue) {
        keyword(knob.keyword);
        printer << " ";
        printer.printAttributeWithoutType(f);
      }
      break;
    }
    case KnobKind::Enum: {
      uint32_t v = static_cast<uint32_t>(cast<IntegerAttr>(attr).getInt());
      if (v != 0 || knob.keyword == "family") {
        keyword(knob.keyword);
        printer << " " << knob.stringify(v);
      }
      break;
    }
    }
  }
  printer.printOptionalAttrDict(attrs.getValue(), elided);
}

#define GET_OP_CLASSES
#include "dialect/MoeOps.cpp.inc"
