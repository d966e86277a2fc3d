//===- LowerToLoops.cpp - the moe-lower-to-loops pass ---------------------===//


#include "codegen/kernels/GmmKernel.h"
#include "codegen/lowerings/GmmMicrokernel.h"
#include "strategy/GmmTiling.h"
#include "strategy/PackedLayout.h"
#include "codegen/lowerings/Lowerings.h"
#include "codegen/Passes.h"
#include "passes/PassUtils.h"
#include "strategy/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOELOWERTOLOOPS
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {
/// The other matmuls (the router's logits, the backward's products that are
/// no gmm) as loops over (rows, depth, columns) instead of linalg's (rows,
/// columns, depth): the innermost loop then runs along a row of the weight
/// and of the result, which LLVM vectorizes, where the depth loop it had
/// was a reduction it may not reorder (measured: a 512x1024 by 1024x64 f32
/// router, 28 ms at 2.4 GFLOP/s before). Each result element still sums
/// its products in depth order with separate multiplies and adds, so the
/// logits are the reference's bit for bit and both choose the same experts.
void matmulsAlongRows(ModuleOp module) {
  SmallVector<linalg::MatmulOp> matmuls;
  module.walk([&](linalg::MatmulOp mm) {
    if (!mm.hasUserDefinedMaps())
      matmuls.push_back(mm);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::MatmulOp mm : matmuls) {
    rewriter.setInsertionPoint(mm);
    FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, mm);
    if (succeeded(generic))
      (void)linalg::interchangeGenericOp(rewriter, *generic, {0, 2, 1});
  }
}

/// The SwiGLU a lowering fuses (fusedOperands).
LogicalResult fusedSwiglu(GmmOp gmm, GmmLoweringAttr lowering, SwigluOp &swiglu, GmmOp &gate,
                          GmmOp &up) {
  strategy::FusedGmms fused = strategy::fusedGmms(gmm, lowering);
  swiglu = fused.swiglu, gate = fused.gate, up = fused.up;
  if (!swiglu)
    return gmm.emitError("its lowering fuses a SwiGLU, but its result is not a moe.swiglu's only "
                         "input use (run moe-select-lowering again after rewriting the IR)");
  for (GmmOp g : {gate, up})
    if (g && (fastLoweringOf(g) != lowering || !g->hasOneUse()))
      return gmm.emitError("the SwiGLU's gate and up gmms must share one lowering that fuses it");
  if (!fused.complete())
    return gmm.emitError("its lowering fuses a SwiGLU whose inputs are not both moe.gmm");
  // The kernel reads the gate's rows and groups for both: what
  // moe-select-lowering checked must still hold.
  if (strategy::fusableSwiglu(gate) != swiglu)
    return gmm.emitError("its lowering fuses a SwiGLU whose gate and up gmms do not share rows, "
                         "groups, weight type and scales");
  return success();
}

/// What a lowering that fuses takes together: the SwiGLU over `gmm`, its
/// gate and (two inputs) its up gmm, each with the same lowering; the
/// gather its rows come from. Fails with an error when the IR no longer
/// allows a fusion the attribute names.
LogicalResult fusedOperands(GmmOp gmm, GmmLoweringAttr lowering, SwigluOp &swiglu, GmmOp &gate,
                             GmmOp &up) {
  gate = gmm;
  if (lowering.fuses("swiglu") && failed(fusedSwiglu(gmm, lowering, swiglu, gate, up)))
    return failure();
  if (lowering.fuses("gather")) {
    auto gather = gate.getLhs().getDefiningOp<GatherRowsOp>();
    if (!gather || !gatherFusedIntoUsers(gather))
      return gmm.emitError("its lowering fuses a gather, but its rows are not a moe.gather_rows that "
                           "every user reads through (run moe-select-lowering again after rewriting "
                           "the IR)");
  }
  return success();
}

/// Whether `gmm`'s fast lowering can be followed: its fusions (above), its
/// tiles against the target's registers and its kinds against the target's
/// features (a hand-written lowering; the attribute's verifier checked the
/// rest): an instruction the target lacks would stop LLVM's instruction
/// selection.
/// Every kind `lowering` lists against the CPU features of `target`.
LogicalResult checkKindFeatures(Operation *op, GmmLoweringAttr lowering, TargetAttr target) {
  for (Attribute kindName : lowering.getKernels())
    if (const codegen::GmmKernelKind *kind = codegen::findGmmKernel(cast<StringAttr>(kindName).getValue()))
      for (StringRef feature : kind->features)
        if (!target.hasFeature(feature))
          return op->emitError() << "kernel kind '" << kind->name << "' needs the CPU feature '" << feature
                                 << "', which the target '" << target.getCpu() << "' lacks";
  return success();
}

LogicalResult checkFastLowering(GmmOp gmm, GmmLoweringAttr lowering, TargetAttr target) {
  SwigluOp swiglu;
  GmmOp gate, up;
  if (failed(fusedOperands(gmm, lowering, swiglu, gate, up)))
    return failure();
  if (gmm != gate && gmm.getPackedRhs())
    return gmm.emitError("packed weights go on the SwiGLU's gate gmm, which packs the up gmm's with them");
  if (Value packed = gmm == gate ? gate.getPackedRhs() : Value()) {
    // The kinds read the packed weights as their layout has them.
    std::optional<strategy::PackedLayout> layout = strategy::packedLayoutFor(gate, swiglu, lowering);
    if (!layout)
      return gmm.emitError("its weights are packed, but the kinds of its lowering read no one "
                           "packed layout (run moe-prepare-weights after moe-select-lowering)");
    std::string why;
    FailureOr<RankedTensorType> expected = strategy::packedWeightsType(gate, up, *layout, why);
    if (failed(expected))
      return gmm.emitError() << "its lowering's packed layout does not fit its weights: " << why;
    if (*expected != packed.getType())
      return gmm.emitError() << "its packed weights are " << packed.getType() << ", but its lowering reads "
                             << *expected << " (lanes " << layout->lanes << ", tile_columns "
                             << layout->tileColumns << ", block_columns " << layout->blockColumns
                             << ", gate_up_unit " << layout->gateUpUnit << ")";
  }
  strategy::GmmTiling tiling = strategy::GmmTiling::of(lowering);
  int64_t vectorRegisters = target ? target.getVectorRegisters() : 32;
  if (std::string why = tiling.invalidReason(static_cast<bool>(swiglu), vectorRegisters); !why.empty())
    return gmm.emitError() << "gmm tiling " << tiling.str() << ": " << why;
  if (!target)
    return success();
  return checkKindFeatures(gmm, lowering, target);
}

struct MoeLowerToLoopsPass
    : mlir::moe::impl::MoeLowerToLoopsBase<MoeLowerToLoopsPass> {
  using MoeLowerToLoopsBase::MoeLowerToLoopsBase;

  void runOnOperation() override {
    // What moe-select-lowering did not decide is plain loops: the other
    // matmuls, along rows.
    matmulsAlongRows(getOperation());
    auto target = getOperation()->getAttrOfType<TargetAttr>(kTargetAttrName);

    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<MoeDialect>(op->getDialect()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    DenseSet<Operation *> lowered;
    bool anyFailed = false;
    // Every fast lowering is checked before anything is lowered, on the IR
    // as selected: what it fuses, and a hand-written one against the
    // target.
    for (Operation *op : ops) {
      // A tgmm's kind against the target: its features, and for vdpbf16ps
      // AVX-512's 32 registers (its tile holds 24 accumulators).
      if (auto tgmm = dyn_cast<TgmmOp>(op); tgmm && target) {
        if (GmmLoweringAttr kind = fastLoweringOf(tgmm)) {
          if (failed(checkKindFeatures(tgmm, kind, target))) {
            anyFailed = true;
          } else if (kind.hasKernel("avx512bf16_dot") && target.getVectorRegisters() < 32) {
            tgmm.emitError() << "a moe.tgmm on avx512bf16_dot needs 32 vector registers, the target's "
                             << target.getVectorRegisters();
            anyFailed = true;
          }
        }
      }
      auto gmm = dyn_cast<GmmOp>(op);
      GmmLoweringAttr lowering = gmm ? fastLoweringOf(gmm) : GmmLoweringAttr();
      if (lowering && failed(checkFastLowering(gmm, lowering, target)))
        anyFailed = true;
      // The reference loops read rhs, which a packed gmm's need not hold.
      if (gmm && !lowering && gmm.getPackedRhs()) {
        gmm.emitError("its weights are packed, but it has no #moe.gmm_lowering whose kernels read them "
                      "(its rhs need not hold the weights; run moe-prepare-weights after "
                      "moe-select-lowering)");
        anyFailed = true;
      }
    }
    if (anyFailed)
      return signalPassFailure();
    auto lowerFast = [&](GmmOp gmm, GmmLoweringAttr lowering) {
      SwigluOp swiglu;
      GmmOp gate, up;
      (void)fusedOperands(gmm, lowering, swiglu, gate, up); // checked above
      for (Operation *op : {gate.getOperation(), up.getOperation(), swiglu.getOperation()})
        if (op)
          lowered.insert(op);
      codegen::lowerGmmMicrokernel(rewriter, gate, up, swiglu, lowering);
    };
    for (Operation *op : ops) {
      if (lowered.contains(op))
        continue;
      llvm::TypeSwitch<Operation *>(op)
          .Case([&](RouteOp o) { codegen::lowerRoute(rewriter, o); })
          .Case([&](RouteGradOp o) { codegen::lowerRouteGrad(rewriter, o); })
          .Case([&](NullSlotsOp o) { codegen::lowerNullSlots(rewriter, o); })
          .Case([&](ScatterSlotsOp o) { codegen::lowerScatterSlots(rewriter, o); })
          .Case([&](PackOp o) { codegen::lowerPack(rewriter, o); })
          .Case([&](GatherRowsOp o) {
            // Left for the gmms that read through it (they erase it).
            if (!gatherFusedIntoUsers(o))
              codegen::lowerGatherRows(rewriter, o);
          })
          .Case([&](GmmOp o) {
            if (GmmLoweringAttr lowering = fastLoweringOf(o))
              lowerFast(o, lowering);
            else
              codegen::lowerGmm(rewriter, o);
          })
          .Case([&](TgmmOp o) {
            if (fastLoweringOf(o))
              codegen::lowerTgmmMicrokernel(rewriter, o);
            else
              codegen::lowerTgmm(rewriter, o);
          })
          .Case([&](SwigluOp o) { codegen::lowerSwiglu(rewriter, o); })
          .Case([&](PackWeightsOp o) { codegen::lowerPackWeights(rewriter, o); })
          .Case([&](SigmoidOp o) { codegen::lowerSigmoid(rewriter, o); })
          .Case([&](QuantizeOp o) { codegen::lowerQuantize(rewriter, o); })
          .Case([&](DequantizeOp o) { codegen::lowerDequantize(rewriter, o); })
          .Case([&](FakeQuantOp o) { codegen::lowerFakeQuant(rewriter, o); })
          .Case([&](SwigluGradOp o) { codegen::lowerSwigluGrad(rewriter, o); })
          .Case([&](ScaleRowsOp o) { codegen::lowerScaleRows(rewriter, o); })
          .Case([&](CombineOp o) { codegen::lowerCombine(rewriter, o); })
          .Case([&](BlockOp o) {
            o.emitError("moe.block must be expanded before lowering (run "
                        "-moe-expand-block first, or the moe-to-llvm pipeline)");
            anyFailed = true;
          })
          .Case([&](PsumOp o) { anyFailed |= failed(codegen::lowerPsum(rewriter, o)); })
          .Case([&](AllGatherOp o) { anyFailed |= failed(codegen::lowerAllGather(rewriter, o)); })
          .Case([&](ReduceScatterOp o) {
            anyFailed |= failed(codegen::lowerReduceScatter(rewriter, o));
          })
          .Case([&](AllToAllOp o) { anyFailed |= failed(codegen::lowerAllToAll(rewriter, o)); })
          .Default([&](Operation *o) {
            o->emitError() << "'" << o->getName() << "' has no lowering";
            anyFailed = true;
          });
    }
    // The shard indices, then the grids: once nothing names them, the grids
    // have said all they had to (their shapes are compiled into the calls).
    SmallVector<Operation *> indices;
    getOperation()->walk([&](Operation *op) {
      if (isa<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>(op))
        indices.push_back(op);
    });
    for (Operation *op : indices)
      anyFailed |= failed(codegen::lowerProcessIndex(rewriter, op));
    if (anyFailed)
      return signalPassFailure();
    // The placement attributes go with them: the host read them before
    // compiling, and the LLVM function arguments are not the tensors.
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      fn->removeAttr(kMeshAttrName);
      fn->removeAttr(kParallelAttrName);
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        fn.removeArgAttr(i, kSplitAttrName);
      for (unsigned i = 0; i < fn.getNumResults(); ++i)
        fn.removeResultAttr(i, StringAttr::get(&getContext(), kSplitAttrName));
    }
    for (auto grid : llvm::make_early_inc_range(getOperation().getOps<shard::GridOp>()))
      grid.erase();
  }
};
} // namespace
