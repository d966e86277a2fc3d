//===- LowerToLoops.cpp - the moe-lower-to-loops pass ---------------------===//


#include "codegen/GmmMicrokernel.h"
#include "codegen/GmmTiling.h"
#include "codegen/Lowerings.h"
#include "codegen/Passes.h"
#include "passes/PassUtils.h"

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
/// gmm ops the microkernel takes: the forward ones (not transposed).
bool isFastGmm(Operation *op) {
  return isa_and_nonnull<GmmOp>(op);
}

/// The SwiGLU that `gmm` can hand its result to without the result reaching
/// memory: gmm's only use, and for the two-input form a gate and an up gmm
/// over the same rows and groups, each used only there.
SwigluOp fusableSwiglu(GmmOp gmm) {
  if (!gmm->hasOneUse())
    return {};
  auto swiglu = dyn_cast<SwigluOp>(*gmm->user_begin());
  if (!swiglu)
    return {};
  SmallVector<GmmOp> inputs;
  for (Value in : swiglu.getInputs()) {
    auto g = in.getDefiningOp<GmmOp>();
    if (!isFastGmm(g) || cast<GmmOp>(g).getTransposeRhs() || !g->hasOneUse())
      return {};
    inputs.push_back(g);
  }
  if (inputs.size() == 2 &&
      (inputs[0].getLhs() != inputs[1].getLhs() ||
       inputs[0].getGroupSizes() != inputs[1].getGroupSizes() ||
       inputs[0].getRhs().getType() != inputs[1].getRhs().getType() ||
       // int8: both scaled the same way (one epilogue reads both scales).
       (inputs[0].getRhsScales() &&
        inputs[0].getRhsScales().getType() != inputs[1].getRhsScales().getType())))
    return {};
  return swiglu;
}

/// A pack's gathered rows feeding gmms become one moe.gather_rows of the
/// tokens (same rows by definition), which the microkernel reads through;
/// the pack then skips its copy when nothing else reads its rows. One gather
/// a pack, so that gate and up gmms still share their rows (and fuse).
void gatherPackRowsInGmms(ModuleOp module) {
  module.walk([&](PackOp pack) {
    GatherRowsOp gather;
    for (OpOperand &use : llvm::make_early_inc_range(pack.getRows().getUses())) {
      if (!isFastGmm(use.getOwner()) || use.getOperandNumber() != 0)
        continue;
      if (!gather) {
        OpBuilder b(pack->getContext());
        b.setInsertionPointAfter(pack);
        int64_t topK = cast<RankedTensorType>(pack.getIds().getType()).getDimSize(1);
        gather = GatherRowsOp::create(b, pack.getLoc(), pack.getX(), pack.getPermutation(),
                                      b.getI64IntegerAttr(topK));
      }
      use.set(gather.getRows());
    }
  });
}

/// The shared expert's matmuls as one-group gmms, so that the microkernel
/// runs them (and fuses the gate/up SwiGLU) instead of convert-linalg-to-
/// loops' scalar loops (measured: 0.8 GFLOP/s for a 1024-token shared expert
/// of 1408, the block's time a hundred times over). bf16 operands are widened
/// to f32 first: the matmul accumulates their products in f32 and returns
/// f32, which a bf16 gmm would round. The router's matmul is left alone:
/// its logits must be the ones the reference computes, rounding for
/// rounding, so that both choose the same experts.
void sharedMatmulsAsGmms(ModuleOp module) {
  SmallVector<linalg::MatmulOp> shared;
  module.walk([&](linalg::MatmulOp mm) {
    auto out = cast<RankedTensorType>(mm.getResult(0).getType());
    if (isSharedExpertMatmul(mm) && out.getElementType().isF32())
      shared.push_back(mm);
  });
  OpBuilder b(module.getContext());
  OneGroupRows rows;
  Type f32 = b.getF32Type();
  for (linalg::MatmulOp mm : shared) {
    b.setInsertionPoint(mm);
    Location loc = mm.getLoc();
    Value w = mm.getInputs()[1];
    auto wType = cast<RankedTensorType>(w.getType());
    if (!wType.getElementType().isF32())
      w = arith::ExtFOp::create(b, loc, wType.clone(f32), w);
    auto [x, sizes] = rows.get(b, loc, mm.getInputs()[0], f32);
    replaceMatmul(b, mm, GmmOp::create(b, loc, x, asOneExpert(b, loc, w), sizes));
  }
}

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

/// A gather_rows every user of which reads it as microkernel rows.
bool gatherFusedIntoUsers(GatherRowsOp gather) {
  return !gather->use_empty() &&
         llvm::all_of(gather->getUses(), [](OpOperand &use) {
           return isFastGmm(use.getOwner()) && use.getOperandNumber() == 0;
         });
}

struct MoeLowerToLoopsPass
    : mlir::moe::impl::MoeLowerToLoopsBase<MoeLowerToLoopsPass> {
  using MoeLowerToLoopsBase::MoeLowerToLoopsBase;

  /// The gmm-tiling option, parsed once per run (runOnOperation).
  std::optional<codegen::GmmTiling> optionTiling;

  /// The tiles for one gmm: the option, the tuning table, the cost model.
  FailureOr<codegen::GmmTiling> tilingFor(GmmOp gmm, bool swiglu) {
    auto rhsType = cast<RankedTensorType>(gmm.getRhs().getType());
    codegen::GmmShape shape;
    // The transposed form (the backward's row gradient) reads rhs [E, N, D].
    shape.depth = rhsType.getDimSize(gmm.getTransposeRhs() ? 2 : 1);
    shape.width = swiglu && cast<SwigluOp>(*gmm->user_begin()).getInputs().size() == 1
                      ? rhsType.getDimSize(2) / 2
                      : rhsType.getDimSize(gmm.getTransposeRhs() ? 1 : 2);
    shape.swiglu = swiglu;
    shape.elementBytes = rhsType.getElementType().getIntOrFloatBitWidth() / 8;
    std::optional<codegen::GmmTiling> tiling = optionTiling;
    if (!tiling && !tuningTable.empty()) {
      auto found = codegen::lookupTuningTable(tuningTable, shape);
      if (!found) {
        gmm.emitError() << llvm::toString(found.takeError());
        return failure();
      }
      tiling = *found;
    }
    if (!tiling)
      tiling = codegen::costModelTiling(shape, codegen::MachineModel::target());
    if (std::string why = tiling->invalidReason(swiglu); !why.empty()) {
      gmm.emitError() << "gmm tiling " << tiling->str() << ": " << why;
      return failure();
    }
    return *tiling;
  }

  void runOnOperation() override {
    bool microkernel = StringRef(gmmStrategy).starts_with("microkernel");
    std::string error;
    std::optional<codegen::PackedKinds> packedKinds =
        codegen::packedKindsFor(gmmStrategy, codegen::MachineModel::target(), error);
    if (!packedKinds) {
      getOperation().emitError() << error;
      return signalPassFailure();
    }
    // The options once, for the module: not once for every gmm.
    optionTiling.reset();
    if (!gmmTiling.empty()) {
      auto parsed = codegen::GmmTiling::parse(gmmTiling);
      if (!parsed) {
        getOperation().emitError() << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      optionTiling = *parsed;
    }
    if (gmmTiling.empty() && !tuningTable.empty())
      if (llvm::Error bad = codegen::checkTuningTable(tuningTable)) {
        getOperation().emitError() << llvm::toString(std::move(bad));
        return signalPassFailure();
      }
    if (microkernel) {
      sharedMatmulsAsGmms(getOperation());
      gatherPackRowsInGmms(getOperation());
    }
    matmulsAlongRows(getOperation());

    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<MoeDialect>(op->getDialect()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    DenseSet<Operation *> lowered;
    bool anyFailed = false;
    auto lowerFast = [&](GmmOp gmm) {
      if (anyFailed) // one error: the same tiling fails the same way again
        return;
      SwigluOp swiglu = fusableSwiglu(gmm);
      GmmOp gate = gmm, up;
      if (swiglu) {
        gate = swiglu.getInputs()[0].getDefiningOp<GmmOp>();
        if (swiglu.getInputs().size() == 2)
          up = swiglu.getInputs()[1].getDefiningOp<GmmOp>();
      }
      auto tiling = tilingFor(gate, static_cast<bool>(swiglu));
      if (failed(tiling)) {
        anyFailed = true;
        return;
      }
      for (Operation *op : {gate.getOperation(), up.getOperation(), swiglu.getOperation()})
        if (op)
          lowered.insert(op);
      codegen::lowerGmmMicrokernel(rewriter, gate, up, swiglu, *tiling, *packedKinds);
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
            if (!microkernel || !gatherFusedIntoUsers(o))
              codegen::lowerGatherRows(rewriter, o);
          })
          .Case([&](GmmOp o) {
            if (microkernel && isFastGmm(o))
              lowerFast(o);
            else
              codegen::lowerGmm(rewriter, o);
          })
          .Case([&](TgmmOp o) {
            if (microkernel)
              codegen::lowerTgmmMicrokernel(rewriter, o);
            else
              codegen::lowerTgmm(rewriter, o);
          })
          .Case([&](SwigluOp o) { codegen::lowerSwiglu(rewriter, o); })
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
