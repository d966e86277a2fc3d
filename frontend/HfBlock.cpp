//===- HfBlock.cpp - a Hugging Face MoE layer as a moe.block function -----===//

#include "frontend/HfBlock.h"

#include "dialect/MoeOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;
using namespace mlir::moe;

OwningOpRef<ModuleOp> mlir::moe::buildHfBlockModule(MLIRContext *context,
                                                    const moec::HfLayer &l, moec::DType dtype) {
  context->loadDialect<MoeDialect, func::FuncDialect>();
  OpBuilder b(context);
  Location loc = NameLoc::get(b.getStringAttr(l.modelType + " layer " + std::to_string(l.layer)));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  auto elementOf = [&](moec::DType t) -> Type {
    return t == moec::DType::BF16 ? Type(b.getBF16Type()) : Type(b.getF32Type());
  };
  std::vector<moec::HfArgument> args = moec::hfBlockArguments(l, dtype);
  SmallVector<Type> types;
  for (const moec::HfArgument &a : args) {
    SmallVector<int64_t> shape;
    for (int64_t d : a.shape)
      shape.push_back(d < 0 ? ShapedType::kDynamic : d);
    types.push_back(RankedTensorType::get(shape, elementOf(a.dtype)));
  }
  auto fn = func::FuncOp::create(b, loc, "moe_block",
                                 b.getFunctionType(types, {types.front()}));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  std::map<std::string, Value> operand;
  for (auto [a, value] : llvm::zip(args, body->getArguments()))
    operand[a.name] = value;
  auto get = [&](const char *name) {
    auto it = operand.find(name);
    return it == operand.end() ? Value() : it->second;
  };
  SmallVector<Value> sharedGateUp;
  if (Value v = get("shared_gate_up"))
    sharedGateUp.push_back(v);
  std::optional<Family> family = symbolizeFamily(l.family);
  auto block = BlockOp::create(
      b, loc, types.front(), get("x"), /*router_logits=*/Value(), get("router"),
      get("router_bias"), get("selection_bias"), /*null_draws=*/Value(),
      ValueRange{get("gate_up")}, get("gate_up_bias"), get("down"), get("down_bias"),
      sharedGateUp, get("shared_down"), get("shared_gate"), b.getI64IntegerAttr(l.k),
      ScoringAttr::get(context, l.sigmoid ? Scoring::sigmoid : Scoring::softmax),
      RouteOrderAttr::get(context, l.softmaxThenTopk ? RouteOrder::softmax_then_topk
                                                     : RouteOrder::topk_then_softmax),
      l.renormalize ? b.getUnitAttr() : UnitAttr(), b.getI64IntegerAttr(0),
      NullPolicyAttr::get(context, NullPolicy::independent), /*null_fraction=*/FloatAttr(),
      PackStrategyAttr::get(context, PackStrategy::argsort),
      CombineStrategyAttr::get(context, CombineStrategy::unsort), /*preweight=*/UnitAttr(),
      b.getI64IntegerAttr(l.groups), b.getI64IntegerAttr(l.topkGroups),
      GroupScoreAttr::get(context, l.top2Sum ? GroupScore::top2_sum : GroupScore::max),
      b.getF64FloatAttr(l.routedScaling), l.weightInput ? b.getUnitAttr() : UnitAttr(),
      ActivationAttr::get(context, l.gptOss ? Activation::gpt_oss : Activation::swiglu),
      b.getF64FloatAttr(l.alpha), b.getF64FloatAttr(l.limit),
      l.interleaved ? b.getUnitAttr() : UnitAttr(),
      family ? FamilyAttr::get(context, *family) : FamilyAttr());
  func::ReturnOp::create(b, loc, block.getResult());
  return module;
}
