//===- Remat.cpp - the moe-remat pass and its analysis --------------------===//
//
// A forward_backward function as moe-generate-backward makes it keeps every
// forward value the backward reads (policy `none`). This pass recomputes
// some of them in the backward instead (semantics doc, section 3):
//
//   expert_mlp  the expert MLP (up gmm, activation, preweight, down gmm) is
//               repeated from its inputs (x_sorted, weights, group sizes),
//   combine     combine's output is repeated from its inputs,
//   auto        per value, the cheapest set of recomputations (FLOPs) that
//               keeps at most `activation-budget` bytes.
//
// Recomputed ops are clones placed before the first backward op reading
// them and tagged moe.adjoint like the rest of the backward (which also
// keeps CSE from folding them back onto the forward's copies), so the
// forward's copies die in the forward and bufferization frees them there.
//
// Why by hand: upstream MLIR has no rematerialisation for tensor programs;
// the choice is this project's cost model.
//
//===----------------------------------------------------------------------===//

#include "passes/Remat.h"
#include "passes/Passes.h"

#include "dialect/MoeDialect.h"
#include "dialect/MoeOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEREMAT
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;


static std::optional<int64_t> numElements(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return std::nullopt;
  return shaped.getNumElements();
}

std::optional<int64_t> mlir::moe::tensorBytes(Value v) {
  std::optional<int64_t> n = numElements(v.getType());
  if (!n)
    return std::nullopt;
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  int64_t bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  return *n * ((bits + 7) / 8);
}

int64_t mlir::moe::opFlops(Operation *op) {
  auto elements = [](Value v) { return numElements(v.getType()).value_or(0); };
  auto dim = [](Value v, int64_t d) {
    auto type = cast<RankedTensorType>(v.getType());
    return type.isDynamicDim(d) ? 0 : type.getDimSize(d);
  };
  if (auto gmm = dyn_cast<GmmOp>(op))
    return 2 * elements(gmm.getOut()) * dim(gmm.getLhs(), 1);
  if (isa<TgmmOp>(op))
    return 2 * elements(op->getOperand(0)) * dim(op->getOperand(1), 1);
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
    return 2 * elements(matmul.getResult(0)) * dim(matmul.getInputs()[0], 1);
  if (auto combine = dyn_cast<CombineOp>(op))
    return 2 * elements(combine.getRows());
  if (auto swiglu = dyn_cast<SwigluOp>(op))
    return 5 * elements(swiglu.getOut());
  if (isa<ScaleRowsOp, arith::AddFOp, arith::MulFOp>(op))
    return op->getNumResults() ? elements(op->getResult(0)) : 0;
  return 0;
}

static bool isAdjoint(Operation *op) { return op->hasAttr(kAdjointAttrName); }

RematAnalysis::RematAnalysis(func::FuncOp fn) : fn(fn) {
  Block &body = fn.getBody().front();
  DenseSet<Operation *> mlp, combine;
  auto fromSet = [](Operation *op, const DenseSet<Operation *> &set) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && set.contains(def);
    });
  };
  for (Operation &op : body.without_terminator()) {
    if (isAdjoint(&op)) {
      boundary = true;
      continue;
    }
    bool cast = isa<arith::TruncFOp, arith::ExtFOp>(op);
    if (auto gmm = dyn_cast<GmmOp>(op); gmm && !gmm.getTransposeRhs())
      mlp.insert(&op);
    else if ((isa<SwigluOp, ScaleRowsOp>(op) || cast) && fromSet(&op, mlp))
      mlp.insert(&op);
    else if (isa<CombineOp>(op) || (cast && fromSet(&op, combine)))
      combine.insert(&op);
    else
      continue;
    llvm::append_range(candidates, op.getResults());
  }
  for (Value v : candidates)
    (mlp.contains(v.getDefiningOp()) ? mlpValues : combineValues).insert(v);
}

bool RematAnalysis::isForwardValue(Value v) const {
  Operation *def = v.getDefiningOp();
  return def && def->getParentOp() == fn.getOperation() && !isAdjoint(def);
}

DenseSet<Value> RematAnalysis::recomputedBy(RematPolicy policy) const {
  if (policy == RematPolicy::expertMlp)
    return mlpValues;
  if (policy == RematPolicy::combine)
    return combineValues;
  return {};
}

RematCost RematAnalysis::cost(const DenseSet<Value> &values) const {
  RematCost result;
  llvm::SetVector<Value> kept;
  DenseSet<Operation *> repeated;
  std::function<void(Value)> need = [&](Value v) {
    if (!isForwardValue(v))
      return;
    Operation *def = v.getDefiningOp();
    if (values.contains(v)) {
      if (repeated.insert(def).second) {
        result.recomputedFlops += opFlops(def);
        for (Value operand : def->getOperands())
          need(operand);
      }
      return;
    }
    // Nothing is held for these: the backward can make them afresh.
    if (isa<arith::ConstantOp, tensor::EmptyOp>(def))
      return;
    kept.insert(v);
  };
  for (Operation &op : fn.getBody().front().without_terminator()) {
    if (!isAdjoint(&op))
      continue;
    op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        need(operand);
    });
  }
  for (Value v : kept) {
    if (std::optional<int64_t> bytes = tensorBytes(v))
      result.keptBytes += *bytes;
    else if (isa<RankedTensorType>(v.getType()))
      result.dynamic = true;
    else
      result.keptBytes += 8; // a scalar
    result.kept.push_back(v);
  }
  return result;
}

std::optional<DenseSet<Value>> RematAnalysis::choose(int64_t budget, RematCost &best) const {
  // Per value when that is few enough subsets to try them all (a block has
  // a handful); else per region.
  SmallVector<DenseSet<Value>> units;
  if (candidates.size() <= 12) {
    for (Value v : candidates)
      units.push_back(DenseSet<Value>{v});
  } else {
    units.push_back(recomputedBy(RematPolicy::expertMlp));
    units.push_back(recomputedBy(RematPolicy::combine));
  }
  std::optional<DenseSet<Value>> chosen;
  RematCost least;
  bool haveLeast = false;
  for (uint64_t mask = 0; mask < (uint64_t(1) << units.size()); ++mask) {
    DenseSet<Value> values;
    for (size_t i = 0; i < units.size(); ++i)
      if (mask & (uint64_t(1) << i))
        values.insert(units[i].begin(), units[i].end());
    RematCost c = cost(values);
    if (!haveLeast || c.keptBytes < least.keptBytes ||
        (c.keptBytes == least.keptBytes && c.recomputedFlops < least.recomputedFlops)) {
      least = c;
      haveLeast = true;
    }
    if (c.keptBytes > budget)
      continue;
    if (!chosen || c.recomputedFlops < best.recomputedFlops ||
        (c.recomputedFlops == best.recomputedFlops && c.keptBytes < best.keptBytes)) {
      chosen = std::move(values);
      best = c;
    }
  }
  if (!chosen)
    best = least;
  return chosen;
}

void RematAnalysis::apply(const DenseSet<Value> &values) {
  DenseMap<Value, Value> recomputed;
  UnitAttr unit = UnitAttr::get(fn.getContext());
  std::function<Value(Value, Operation *)> recompute = [&](Value v, Operation *before) -> Value {
    if (Value done = recomputed.lookup(v))
      return done;
    Operation *def = v.getDefiningOp();
    IRMapping map;
    for (Value operand : def->getOperands())
      if (isForwardValue(operand) && values.contains(operand))
        map.map(operand, recompute(operand, before));
    OpBuilder b(before);
    Operation *clone = b.clone(*def, map);
    clone->setAttr(kAdjointAttrName, unit);
    for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
      recomputed[from] = to;
    return recomputed.lookup(v);
  };
  SmallVector<Operation *> backward;
  for (Operation &op : fn.getBody().front().without_terminator())
    if (isAdjoint(&op))
      backward.push_back(&op);
  for (Operation *op : backward)
    op->walk([&](Operation *inner) {
      for (OpOperand &use : inner->getOpOperands())
        if (isForwardValue(use.get()) && values.contains(use.get()))
          use.set(recompute(use.get(), op));
    });
}

namespace {

struct Remat : moe::impl::MoeRematBase<Remat> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    // The option's parser accepts only the spellings of kRematPolicyChoices.
    RematPolicy requested = policy;
    StringRef policyName = kRematPolicyChoices.name(requested);
    if (activationBudget < -1) {
      fn.emitError() << "moe-remat: activation-budget must be a number of bytes (got "
                     << static_cast<int64_t>(activationBudget) << ")";
      return signalPassFailure();
    }
    if (!fn->hasAttr(kGradientArgsAttrName))
      return; // not a forward_backward function
    RematAnalysis analysis(fn);
    if (!analysis.hasBoundary() && requested != RematPolicy::none) {
      fn.emitError() << "moe-remat: @" << fn.getSymName()
                     << " has no backward ops (moe.adjoint); run moe-generate-backward first";
      return signalPassFailure();
    }
    DenseSet<Value> values;
    RematCost cost;
    if (requested == RematPolicy::automatic) {
      if (activationBudget < 0) {
        fn.emitError() << "moe-remat: policy auto needs activation-budget=BYTES";
        return signalPassFailure();
      }
      if (analysis.cost({}).dynamic) {
        fn.emitError() << "moe-remat: policy auto needs static shapes: @" << fn.getSymName()
                       << " keeps values of dynamic size for the backward";
        return signalPassFailure();
      }
      std::optional<DenseSet<Value>> chosen = analysis.choose(activationBudget, cost);
      if (!chosen) {
        fn.emitError() << "moe-remat: no choice keeps @" << fn.getSymName() << " within "
                       << static_cast<int64_t>(activationBudget) << " bytes for the backward; the least it can keep is "
                       << cost.keptBytes << " bytes";
        return signalPassFailure();
      }
      values = std::move(*chosen);
    } else {
      values = analysis.recomputedBy(requested);
      cost = analysis.cost(values);
      if (activationBudget >= 0 && !cost.dynamic && cost.keptBytes > activationBudget) {
        fn.emitError() << "moe-remat: policy " << policyName << " keeps " << cost.keptBytes
                       << " bytes for the backward of @" << fn.getSymName()
                       << ", over activation-budget " << static_cast<int64_t>(activationBudget)
                       << " (policy auto picks what fits)";
        return signalPassFailure();
      }
    }
    analysis.apply(values);
    // What was decided, for the tools to report (the values kept are only
    // the analysis's to know; the sizes are what a user weighs).
    OpBuilder b(fn.getContext());
    fn->setAttr(kRematAttrName,
                b.getDictionaryAttr({b.getNamedAttr("policy", b.getStringAttr(policyName)),
                                     b.getNamedAttr("kept_bytes", b.getI64IntegerAttr(cost.keptBytes)),
                                     b.getNamedAttr("recomputed_flops",
                                                    b.getI64IntegerAttr(cost.recomputedFlops)),
                                     // kept_bytes leaves out values of dynamic size
                                     b.getNamedAttr("kept_dynamic", b.getBoolAttr(cost.dynamic))}));
  }
};

} // namespace
