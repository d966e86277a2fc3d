//===- Quantize.cpp - the moe-quantize pass -------------------------------===//
//
// int8 for the block's matmuls (shared/docs/moe-semantics.md, section 7):
//
//   mode=int8         routed gmms and the shared expert's matmuls multiply
//                     int8 x int8 with i32 sums: gmm(rows, w) becomes
//                     gmm(rows, quantize(w)) with scales, which quantizes
//                     each row on the fly; a shared matmul x @ w [H, N]
//                     becomes that gmm with one group of every token over
//                     w as [1, H, N].
//   mode=int8_routed  the routed gmms only.
//   mode=fake_int8    the same two in float: the rows go through
//                     moe.fake_quant and the weights through quantize and
//                     dequantize, then the float kernels run (accuracy
//                     studies: the int8 rounding without the int8 kernels).
//
// Weights are quantized once, not per call (hoist-weights, the default):
// every chain from the function's weight arguments to a quantized weight
// (moe.quantize, in fake mode moe.dequantize, reshapes and casts) moves into
// `<f>_prepare_weights(weights) -> (quantized weights)`, the rest of the
// body into `<f>_prepared(other arguments, quantized weights)`, and `<f>`
// keeps its signature as the two calls. A host that runs the block many
// times calls the prepare function once at load time and the prepared one
// per batch (moe-bench does); `<f>` alone still computes the same result.
//
// The router's matmul stays float (its logits pick the experts: int8 noise
// there changes which experts run, not just by how much).
//
//===----------------------------------------------------------------------===//

#include "dialect/MoeOps.h"
#include "passes/PassUtils.h"
#include "passes/PreparedWeights.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEQUANTIZE
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

struct Quantizer {
  OpBuilder &b;
  QuantMode mode;
  QuantGranularity granularity;
  OneGroupRows sharedRows;

  /// Fake mode's weight: quantized and back, in the weight's type.
  Value fakeWeight(Location loc, Value w3) {
    auto q = QuantizeOp::create(b, loc, w3, granularity);
    Value back = DequantizeOp::create(b, loc, q.getValues(), q.getScales());
    return castTo(b, loc, back, w3.getType());
  }

  /// gmm(rows, w) with float w -> its int8 (or fake int8) form.
  void rewriteGmm(GmmOp gmm) {
    b.setInsertionPoint(gmm);
    Location loc = gmm.getLoc();
    Value replacement;
    if (mode == QuantMode::fakeInt8) {
      Value rows = FakeQuantOp::create(b, loc, gmm.getLhs());
      replacement = GmmOp::create(b, loc, rows, fakeWeight(loc, gmm.getRhs()), gmm.getGroupSizes(),
                                  /*rhs_scales=*/Value(), gmm.getBias());
    } else {
      // The bias (GPT-OSS) stays float: the epilogue adds it to the
      // dequantized sums.
      auto q = QuantizeOp::create(b, loc, gmm.getRhs(), granularity);
      replacement = GmmOp::create(b, loc, gmm.getLhs(), q.getValues(), gmm.getGroupSizes(),
                                  q.getScales(), gmm.getBias());
    }
    gmm.replaceAllUsesWith(replacement);
    gmm.erase();
  }

  /// A shared-expert matmul x @ w from a zero accumulator -> one group of
  /// every row over w as [1, H, N] (int8; bf16 rows widened first, so that
  /// the f32 result the matmul returned is not rounded to bf16 on the way),
  /// or over fake-quantized operands.
  void rewriteSharedMatmul(linalg::MatmulOp mm) {
    b.setInsertionPoint(mm);
    Location loc = mm.getLoc();
    Value x = mm.getInputs()[0], w = mm.getInputs()[1];
    Value expert = asOneExpert(b, loc, w);
    Type element = getElementTypeOrSelf(mm.getResult(0).getType());
    Value result;
    if (mode == QuantMode::fakeInt8) {
      Value fake = tensor::CollapseShapeOp::create(b, loc, w.getType(), fakeWeight(loc, expert),
                                                   ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      result = matmulF32(b, loc, FakeQuantOp::create(b, loc, x), fake);
    } else {
      auto q = QuantizeOp::create(b, loc, expert, granularity);
      auto [rows, sizes] = sharedRows.get(b, loc, x, element);
      result = GmmOp::create(b, loc, rows, q.getValues(), sizes, q.getScales(), /*bias=*/Value());
    }
    replaceMatmul(b, mm, result);
  }
};

/// Ops that may move into the prepare function: what turns a weight
/// argument into a quantized weight.
bool isWeightPreparation(Operation *op) {
  return isa<QuantizeOp, DequantizeOp>(op) || isWeightReshapeOrCast(op);
}

struct MoeQuantizePass : mlir::moe::impl::MoeQuantizeBase<MoeQuantizePass> {
  using MoeQuantizeBase::MoeQuantizeBase;

  /// Splits `fn` into <f>_prepare_weights and <f>_prepared (file comment);
  /// `fn` becomes the two calls.
  LogicalResult hoist(func::FuncOp fn, SymbolTable &symbols) {
    SmallVector<Operation *> chains =
        weightChains(fn, isWeightPreparation, [](Operation *op) { return isa<QuantizeOp>(op); });
    if (chains.empty())
      return success();
    FailureOr<PreparedSplit> split = splitPreparedWeights(fn, chains, fn.getName(), symbols, "moe-quantize");
    if (failed(split))
      return failure();
    callPreparedHalves(fn, *split);
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The options are typed (passes/Choices.h): a wrong spelling never
    // reaches the pass.
    QuantGranularity granularity = weightScales == QuantWeightScales::expert
                                       ? QuantGranularity::per_expert
                                       : QuantGranularity::per_channel;
    QuantMode quantMode = mode;

    SmallVector<func::FuncOp> functions;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        functions.push_back(fn);
    for (func::FuncOp fn : functions) {
      if (fn->hasAttr(kMeshAttrName)) {
        fn.emitError() << "moe-quantize: @" << fn.getName()
                       << " is one shard's program (moe-partition); int8 on a mesh is not "
                          "supported yet: quantize a single-device block";
        return signalPassFailure();
      }
    }
    // The primitives first: the quantized ops replace moe.block's matmuls.
    OpPassManager expand(func::FuncOp::getOperationName());
    expand.addPass(createMoeExpandBlock());
    for (func::FuncOp fn : functions)
      if (failed(runPipeline(expand, fn)))
        return signalPassFailure();

    OpBuilder b(&getContext());
    Quantizer quantizer{b, quantMode, granularity, {}};
    SymbolTable symbols(module);
    for (func::FuncOp fn : functions) {
      SmallVector<GmmOp> gmms;
      SmallVector<linalg::MatmulOp> shared;
      fn.walk([&](Operation *op) {
        if (auto gmm = dyn_cast<GmmOp>(op)) {
          auto rhsElement = getElementTypeOrSelf(gmm.getRhs().getType());
          if (!gmm.getTransposeRhs() && isa<FloatType>(rhsElement))
            gmms.push_back(gmm);
        } else if (auto mm = dyn_cast<linalg::MatmulOp>(op)) {
          if (quantMode != QuantMode::int8Routed && isSharedExpertMatmul(mm))
            shared.push_back(mm);
        }
      });
      // int8_routed keeps the shared expert in float; after the grouped
      // fusion it is groups of the routed gmms, which cannot be split.
      if (quantMode == QuantMode::int8Routed)
        for (GmmOp gmm : gmms)
          if (auto groups = gmm->getAttrOfType<IntegerAttr>(kSharedGroupsAttrName)) {
            gmm.emitError() << "moe-quantize: mode=int8_routed keeps the shared expert in "
                               "float, but moe-fuse-shared-expert{mode=grouped} made it the last "
                            << groups.getInt()
                            << " group(s) of this gmm; quantize with mode=int8, or fuse the "
                               "shared expert with mode=matmul";
            return signalPassFailure();
          }
      // Packed float weights would be dropped with the float gmm.
      for (GmmOp gmm : gmms)
        if (gmm.getPackedRhs()) {
          gmm.emitError("moe-quantize: this gmm reads weights moe-prepare-weights packed; quantize "
                        "the block before preparing its weights");
          return signalPassFailure();
        }
      for (GmmOp gmm : gmms)
        quantizer.rewriteGmm(gmm);
      for (linalg::MatmulOp mm : shared)
        quantizer.rewriteSharedMatmul(mm);
      // The replaced matmuls' zero accumulators (and what sized them).
      // Top-level ops only, last first: erasing one erases its regions, so a
      // walk into them would visit freed ops.
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(fn.getBody().front())))
        if (isOpTriviallyDead(&op))
          op.erase();
      numMatmulsQuantized += gmms.size() + shared.size();
      if (hoistWeights && fn.isPublic() && (!gmms.empty() || !shared.empty()) &&
          failed(hoist(fn, symbols)))
        return signalPassFailure();
    }
  }
};

} // namespace
