//===- PrepareWeights.cpp - the moe-prepare-weights pass ------------------===//
//
// Weights in the kernels' layout once, at load time (Passes.td): the
// function is cloned, each eligible gmm in the clone reads a
// moe.pack_weights of its weights, and the clone is split like moe-quantize
// splits (passes/PreparedWeights.h) into @f_prepare_weights and
// @f_prepared. @f stays: a caller that knows nothing of the split still
// gets the same result.
//
// A function moe-quantize split already (@f the two calls) is merged back
// into one body first, so that its int8 weights are quantized and then
// packed in one @f_prepare_weights; the new halves replace moe-quantize's,
// and @f calls them.
//
//===----------------------------------------------------------------------===//

#include "passes/PreparedWeights.h"
#include "strategy/PackedLayout.h"
#include "strategy/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEPREPAREWEIGHTS
#include "strategy/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

/// What may lie between a weight argument and what a gmm reads of it:
/// reshapes, casts and moe-quantize's ops.
bool isWeightDerivation(Operation *op) {
  return isWeightReshapeOrCast(op) || isa<QuantizeOp, DequantizeOp>(op);
}

bool isWeightPreparation(Operation *op) { return isa<PackWeightsOp>(op) || isWeightDerivation(op); }

/// What a prepare function is for: packing, and quantizing (a quantized
/// gmm whose weights are not packed still reads them quantized once).
bool isPreparationRoot(Operation *op) { return isa<PackWeightsOp, QuantizeOp>(op); }

/// Whether `v` is computed from `fn`'s arguments alone, by top-level
/// weight derivations: what can move into the prepare function.
bool fromArguments(Value v, func::FuncOp fn) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &fn.getBody().front();
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == &fn.getBody().front() && isWeightDerivation(def) &&
         llvm::all_of(def->getOperands(), [&](Value o) { return fromArguments(o, fn); });
}

/// Moves the top-level ops computing `v` (fromArguments') before `at`,
/// operands first, where they come after it.
void hoistAbove(Value v, Operation *at) {
  Operation *def = v.getDefiningOp();
  if (!def || def->isBeforeInBlock(at))
    return;
  for (Value operand : def->getOperands())
    hoistAbove(operand, at);
  def->moveBefore(at);
}

struct MoePrepareWeightsPass : mlir::moe::impl::MoePrepareWeightsBase<MoePrepareWeightsPass> {
  using MoePrepareWeightsBase::MoePrepareWeightsBase;

  /// A function to prepare: a public one, not one shard's program, not a
  /// half, not one that trains; its halves' names free, or taken by
  /// moe-quantize's halves of it (`quantized` then holds them).
  static bool eligible(func::FuncOp fn, SymbolTable &symbols, std::optional<PreparedSplit> &quantized) {
    quantized.reset();
    if (!fn.isPublic() || fn.isDeclaration() || fn->hasAttr(kMeshAttrName) || isPreparedHalf(fn))
      return false;
    quantized = preparedCaller(fn, symbols);
    auto trains = [](func::FuncOp f) {
      return f.walk([](TgmmOp) { return WalkResult::interrupt(); }).wasInterrupted();
    };
    if (quantized)
      return !trains(quantized->prepared);
    // Prepared already (a second run of the pass): @f packs per call.
    auto prepared = symbols.lookup<func::FuncOp>(preparedName(fn.getName()));
    if (prepared && prepared->hasAttr(kKeptArgumentsAttrName))
      return false;
    // The halves' names taken by functions of the user's: @f keeps packing
    // per call (a warning, not an error: moec -o prepares every function).
    for (const std::string &name : {preparedName(fn.getName()), prepareWeightsName(fn.getName())})
      if (symbols.lookup(name)) {
        fn.emitWarning() << "moe-prepare-weights: @" << fn.getName() << " keeps packing its weights per "
                         << "call: @" << name << " is another function's name";
        return false;
      }
    return !trains(fn);
  }

  /// Gives every gmm of `fn` that can read packed weights a moe.pack_weights
  /// of them; returns how many.
  static int64_t packGmms(func::FuncOp fn) {
    SmallVector<strategy::FusedGmms> groups;
    DenseSet<Operation *> seen;
    fn.walk([&](GmmOp gmm) {
      // An incomplete fusion is moe-lower-to-loops' to report.
      strategy::FusedGmms f =
          strategy::fusedGmms(gmm, gmm->getAttrOfType<GmmLoweringAttr>(kLoweringAttrName));
      if (f.complete() && seen.insert(f.gate).second)
        groups.push_back(f);
    });
    int64_t packed = 0;
    for (strategy::FusedGmms &f : groups) {
      auto lowering = f.gate->getAttrOfType<GmmLoweringAttr>(kLoweringAttrName);
      std::optional<strategy::PackedLayout> layout = strategy::packedLayoutFor(f.gate, f.swiglu, lowering);
      if (!layout || f.gate.getPackedRhs() || !fromArguments(f.gate.getRhs(), fn) ||
          (f.up && !fromArguments(f.up.getRhs(), fn)))
        continue;
      std::string why;
      FailureOr<RankedTensorType> type = strategy::packedWeightsType(f.gate, f.up, *layout, why);
      if (failed(type))
        continue; // a shape the layout does not fit keeps packing per task
      // At the top level, before the gmm's top-level op: the weights'
      // definitions (arguments and top-level ops) dominate it.
      Operation *at = f.gate;
      while (at->getBlock() != &fn.getBody().front())
        at = at->getParentOp();
      // An up weight's reshape may come after the gate gmm (moe-select-
      // lowering puts a shared matmul's where the matmul was): its chain
      // (pure, from the arguments) moves up.
      for (GmmOp g : {f.gate, f.up})
        if (g)
          hoistAbove(g.getRhs(), at);
      OpBuilder b(at);
      Value weights = PackWeightsOp::create(b, f.gate.getLoc(), *type, f.gate.getRhs(),
                                            f.up ? f.up.getRhs() : Value(), layout->lanes,
                                            layout->tileColumns, layout->blockColumns, layout->gateUpUnit);
      f.gate.getPackedRhsMutable().assign(weights);
      // The kernels read the packed copy only: rhs becomes an empty tensor
      // of its type, so that the raw weights' one use is the pack and they
      // go to the prepare function alone (a host need not keep them).
      // packedType took static weight shapes only.
      for (GmmOp g : {f.gate, f.up}) {
        if (!g)
          continue;
        auto rhsType = cast<RankedTensorType>(g.getRhs().getType());
        g.getRhsMutable().assign(tensor::EmptyOp::create(b, g.getLoc(), rhsType.getShape(),
                                                         rhsType.getElementType()));
      }
      ++packed;
    }
    return packed;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<func::FuncOp, std::optional<PreparedSplit>>> functions;
    for (auto fn : module.getOps<func::FuncOp>()) {
      std::optional<PreparedSplit> quantized;
      if (eligible(fn, symbols, quantized))
        functions.emplace_back(fn, std::move(quantized));
    }
    for (auto &[fn, quantized] : functions) {
      // The clone becomes @f_prepared's body (through the split), then goes.
      // moe-quantize's halves are merged back for it: their weights'
      // quantization and packing go into one prepare function.
      std::string cloneName = (fn.getName() + "_packing").str();
      func::FuncOp clone;
      if (quantized) {
        clone = mergedHalves(fn, *quantized, cloneName);
      } else {
        clone = fn.clone();
        clone.setPrivate();
        module.getBody()->getOperations().insertAfter(fn->getIterator(), clone);
        clone.setName(cloneName);
      }
      symbols.insert(clone);
      int64_t packed = packGmms(clone);
      if (packed > 0) {
        if (quantized) {
          // Replaced by the halves made below, and @f calls those.
          symbols.erase(quantized->prepare);
          symbols.erase(quantized->prepared);
        }
        SmallVector<Operation *> chains = weightChains(clone, isWeightPreparation, isPreparationRoot);
        FailureOr<PreparedSplit> split =
            splitPreparedWeights(clone, chains, fn.getName(), symbols, "moe-prepare-weights");
        if (failed(split)) {
          symbols.erase(clone);
          return signalPassFailure();
        }
        for (func::FuncOp half : {split->prepare, split->prepared}) {
          half.setPublic();
          // Not before @f: moec's default entry is a module's first public
          // function, which stays @f.
          half->moveAfter(clone);
        }
        split->prepared->moveAfter(split->prepare);
        if (quantized)
          callPreparedHalves(fn, *split);
        numGmmsPacked += packed;
      }
      symbols.erase(clone);
    }
  }
};

} // namespace
