//===- PrepareWeights.cpp - the moe-prepare-weights pass ------------------===//
//
// Weights in the kernels' layout once, at load time (Passes.td): the
// function is cloned, each eligible gmm in the clone reads a
// moe.pack_weights of its weights, and the clone is split like moe-quantize
// splits (passes/PreparedWeights.h) into @f_prepare_weights and
// @f_prepared. @f stays: a caller that knows nothing of the split still
// gets the same result.
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

bool isWeightPreparation(Operation *op) { return isa<PackWeightsOp>(op) || isWeightReshapeOrCast(op); }

/// Whether `v` is computed from `fn`'s arguments alone, by top-level
/// reshapes and casts: what can move into the prepare function.
bool fromArguments(Value v, func::FuncOp fn) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &fn.getBody().front();
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == &fn.getBody().front() && isWeightReshapeOrCast(def) &&
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

  static bool eligible(func::FuncOp fn, SymbolTable &symbols) {
    if (!fn.isPublic() || fn.isDeclaration() || fn->hasAttr(kMeshAttrName) ||
        fn->hasAttr(kKeptArgumentsAttrName) || fn->hasAttr(kWeightArgumentsAttrName))
      return false;
    // Prepared already (a second run of the pass, or moe-quantize's).
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
    bool trains = false, int8 = false;
    fn.walk([&](Operation *op) {
      trains |= isa<TgmmOp>(op);
      if (auto gmm = dyn_cast<GmmOp>(op))
        int8 |= gmm.isQuantized();
    });
    return !trains && !int8;
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
    SmallVector<func::FuncOp> functions;
    for (auto fn : module.getOps<func::FuncOp>())
      if (eligible(fn, symbols))
        functions.push_back(fn);
    for (func::FuncOp fn : functions) {
      // The clone becomes @f_prepared's body (through the split), then goes.
      auto clone = fn.clone();
      clone.setPrivate();
      module.getBody()->getOperations().insertAfter(fn->getIterator(), clone);
      clone.setName((fn.getName() + "_packing").str());
      symbols.insert(clone);
      int64_t packed = packGmms(clone);
      if (packed > 0) {
        SmallVector<Operation *> chains =
            weightChains(clone, isWeightPreparation, [](Operation *op) { return isa<PackWeightsOp>(op); });
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
        numGmmsPacked += packed;
      }
      symbols.erase(clone);
    }
  }
};

} // namespace
