//===- SelectLowering.cpp - the moe-select-lowering pass ------------------===//
//
// Every decision of how a gmm is lowered, made here from the module's
// #moe.target and written as its #moe.gmm_lowering (the anchors: IREE's
// LLVMCPUSelectLoweringStrategy, Triton's accelerate-matmul). The rewrites
// that make a gmm of what is not one yet (a shared expert's matmuls) or
// that expose a fusion (the pack's gather) happen here too, so that the IR
// moe-lower-to-loops reads shows everything it will do.
//
//===----------------------------------------------------------------------===//

#include "strategy/GmmTiling.h"
#include "strategy/Passes.h"
#include "strategy/TargetCpu.h"

#include "dialect/MoeOps.h"
#include "passes/PassUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOESELECTLOWERING
#include "strategy/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;
using strategy::GmmStrategy;

SwigluOp mlir::moe::strategy::fusableSwiglu(GmmOp gmm) {
  if (!gmm->hasOneUse())
    return {};
  auto swiglu = dyn_cast<SwigluOp>(*gmm->user_begin());
  if (!swiglu)
    return {};
  SmallVector<GmmOp> inputs;
  for (Value in : swiglu.getInputs()) {
    auto g = in.getDefiningOp<GmmOp>();
    if (!g || g.getTransposeRhs() || !g->hasOneUse())
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

strategy::FusedGmms mlir::moe::strategy::fusedGmms(GmmOp gmm, GmmLoweringAttr lowering) {
  if (!lowering || !lowering.fuses("swiglu"))
    return {gmm, {}, {}};
  FusedGmms f;
  f.swiglu = gmm->hasOneUse() ? dyn_cast<SwigluOp>(*gmm->user_begin()) : SwigluOp();
  if (!f.swiglu)
    return f;
  f.gate = f.swiglu.getInputs()[0].getDefiningOp<GmmOp>();
  if (f.swiglu.getInputs().size() == 2)
    f.up = f.swiglu.getInputs()[1].getDefiningOp<GmmOp>();
  return f;
}

namespace {

/// A pack's gathered rows feeding gmms become one moe.gather_rows of the
/// tokens (same rows by definition), which the kernels read through; the
/// pack then skips its copy when nothing else reads its rows. One gather a
/// pack, so that gate and up gmms still share their rows (and fuse).
void gatherPackRowsInGmms(ModuleOp module) {
  module.walk([&](PackOp pack) {
    GatherRowsOp gather;
    for (OpOperand &use : llvm::make_early_inc_range(pack.getRows().getUses())) {
      if (!isa<GmmOp>(use.getOwner()) || use.getOperandNumber() != 0)
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

/// The shared expert's matmuls as one-group gmms, so that the kernels run
/// them (and fuse the gate/up SwiGLU) instead of convert-linalg-to-loops'
/// scalar loops (measured: 0.8 GFLOP/s for a 1024-token shared expert of
/// 1408, the block's time a hundred times over). bf16 operands are widened
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

/// What the cost model and the tuning table see of `gmm` (with the SwiGLU
/// fused over it, if any): its depth and output columns.
strategy::GmmShape shapeOf(GmmOp gmm, SwigluOp swiglu) {
  auto rhsType = cast<RankedTensorType>(gmm.getRhs().getType());
  bool transposed = gmm.getTransposeRhs(); // rhs [E, N, D]: the backward's row gradient
  strategy::GmmShape shape;
  shape.depth = rhsType.getDimSize(transposed ? 2 : 1);
  shape.width = rhsType.getDimSize(transposed ? 1 : 2);
  if (swiglu && swiglu.getInputs().size() == 1)
    shape.width /= 2; // gate and up columns in one weight
  shape.swiglu = static_cast<bool>(swiglu);
  shape.elementBytes = rhsType.getElementType().getIntOrFloatBitWidth() / 8;
  return shape;
}

struct MoeSelectLoweringPass : mlir::moe::impl::MoeSelectLoweringBase<MoeSelectLoweringPass> {
  using MoeSelectLoweringBase::MoeSelectLoweringBase;

  std::optional<strategy::GmmTiling> optionTiling;
  strategy::MachineModel machine;
  strategy::PackedKinds kinds;

  /// The tiles for `gmm` of `shape`: the option, the tuning table, the cost
  /// model.
  FailureOr<strategy::GmmTiling> tilingFor(GmmOp gmm, const strategy::GmmShape &shape) {
    std::optional<strategy::GmmTiling> tiling = optionTiling;
    if (!tiling && !tuningTable.empty()) {
      auto found = strategy::lookupTuningTable(tuningTable, shape);
      if (!found) {
        gmm.emitError() << llvm::toString(found.takeError());
        return failure();
      }
      tiling = *found;
    }
    if (!tiling)
      tiling = strategy::costModelTiling(shape, machine);
    if (std::string why = tiling->invalidReason(shape.swiglu, machine.vectorRegisters); !why.empty()) {
      gmm.emitError() << "gmm tiling " << tiling->str() << ": " << why;
      return failure();
    }
    return *tiling;
  }

  /// The lowering of `gate` (and of `up`, a two-input SwiGLU's other gmm).
  FailureOr<GmmLoweringAttr> select(GmmOp gate, GmmOp up, SwigluOp swiglu) {
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    strategy::GmmShape shape = shapeOf(gate, swiglu);
    auto tiling = tilingFor(gate, shape);
    if (failed(tiling))
      return failure();
    bool int8 = gate.isQuantized();
    // The bf16 kinds pack depth pairs of the weight, an [E, D, N] one or a
    // transposed [E, N, D] one (the backward's row gradient) alike; AMX
    // takes the transposed form too (on a Sapphire Rapids, vdpbf16ps runs
    // at half the FP32 FMA rate: the row gradients at T 4096 top-8 took
    // 2.6 s on it). (A fused up gmm has the gate's rows and weight type:
    // fusableSwiglu.)
    bool bf16 = gate.isPackableBf16();
    SmallVector<StringRef> kernels;
    int64_t amxMinRows = 0, dotRows = 0;
    if (int8) {
      kernels.push_back(kinds.avx512Vnni ? "int8_vnni" : kinds.avx2Int8 ? "int8_avx2" : "int8_vector");
      if (kinds.amxInt8) {
        kernels.push_back("amx_int8");
        amxMinRows = 1; // a padded int8 tile still beats every other int8 path
      }
    } else if (bf16) {
      kernels.push_back(kinds.avx512Bf16 ? "avx512bf16_dot" : "fma");
      if (kinds.avx512Bf16)
        dotRows = 48; // a small group is one task per column block
      if (kinds.amxBf16) {
        kernels.push_back("amx_bf16");
        // Every group, however small: its padded tiles multiply zeros, but
        // the tile unit has the rate to spare where a small group streams
        // its weights, and vdpbf16ps retires at half the FMA rate on the
        // AMX CPUs. Measured (2-core Sapphire Rapids, H 2048 M 1408 E 60,
        // top-8, prepared weights): T 16 41.0 -> 37.0 ms, T 64 74.1 ->
        // 40.0 ms against 16 rows as the threshold; T 256 the same.
        amxMinRows = 1;
      }
    } else {
      kernels.push_back("fma");
    }
    int64_t packedColumns = 0;
    if (kernels.size() > 1 || kernels.front() != "fma")
      packedColumns = strategy::packedColumnsFor(shape, int8, machine);
    SmallVector<Attribute> fuse;
    // The gather's rows are read through its permutation when every user
    // is a gmm that can (else they exist anyway, for the others).
    if (auto gather = gate.getLhs().getDefiningOp<GatherRowsOp>();
        gather && llvm::all_of(gather->getUses(), [](OpOperand &use) {
          return use.getOperandNumber() == 0 && isa<GmmOp>(use.getOwner());
        }))
      fuse.push_back(b.getStringAttr("gather"));
    if (swiglu)
      fuse.push_back(b.getStringAttr("swiglu"));
    SmallVector<Attribute> kinds;
    for (StringRef k : kernels)
      kinds.push_back(b.getStringAttr(k));
    auto emitError = [&] { return gate.emitError(); };
    return GmmLoweringAttr::getChecked(emitError, ctx, b.getArrayAttr(kinds), tiling->rows, tiling->vectors,
                                       tiling->depthBlock, tiling->columnBlock, tiling->rowBlock,
                                       packedColumns, amxMinRows, dotRows,
                                       fuse.empty() ? ArrayAttr() : b.getArrayAttr(fuse));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto target = module->getAttrOfType<TargetAttr>(kTargetAttrName);
    if (!target) {
      module.emitError() << "moe-select-lowering needs the module's '" << kTargetAttrName
                         << "' (run moe-attach-target first; moe-to-llvm does)";
      return signalPassFailure();
    }
    machine = strategy::MachineModel::fromTarget(target);
    std::string error;
    std::optional<strategy::PackedKinds> packed =
        strategy::packedKindsFor(gmmStrategy, machine, target.getCpu(), error);
    if (!packed) {
      module.emitError() << error;
      return signalPassFailure();
    }
    kinds = *packed;
    optionTiling.reset();
    if (!gmmTiling.empty()) {
      auto parsed = strategy::GmmTiling::parse(gmmTiling);
      if (!parsed) {
        module.emitError() << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      optionTiling = *parsed;
    }
    if (gmmTiling.empty() && !tuningTable.empty())
      if (llvm::Error bad = strategy::checkTuningTable(tuningTable)) {
        module.emitError() << llvm::toString(std::move(bad));
        return signalPassFailure();
      }

    if (gmmStrategy == GmmStrategy::reference) {
      auto reference = GmmLoweringAttr::get(ctx, ArrayAttr::get(ctx, {StringAttr::get(ctx, "reference")}),
                                            0, 0, 0, 0, 0, 0, 0, 0, ArrayAttr());
      module.walk([&](Operation *op) {
        if (isa<GmmOp, TgmmOp>(op))
          op->setAttr(kLoweringAttrName, reference);
      });
      return;
    }
    sharedMatmulsAsGmms(module);
    gatherPackRowsInGmms(module);

    // A tgmm's kind: vdpbf16ps on bf16 operands where the CPU has it (the
    // weight gradients of a bf16 step), with AMX tiles beside it where the
    // CPU has those too (taken at run time when Linux grants the tile
    // state), else the FMA tiles.
    auto tgmmKind = [&](ArrayRef<StringRef> names) {
      SmallVector<Attribute> kindAttrs;
      for (StringRef name : names)
        kindAttrs.push_back(StringAttr::get(ctx, name));
      return GmmLoweringAttr::get(ctx, ArrayAttr::get(ctx, kindAttrs), 0, 0, 0, 0, 0, 0, 0, 0, ArrayAttr());
    };
    // A lowering already written (by hand, or by an earlier run) is kept:
    // what a tuner edits is what is compiled.
    SmallVector<GmmOp> gmms;
    module.walk([&](Operation *op) {
      if (op->hasAttr(kLoweringAttrName))
        return;
      if (auto g = dyn_cast<GmmOp>(op))
        gmms.push_back(g);
      else if (auto t = dyn_cast<TgmmOp>(op)) {
        bool dot = kinds.avx512Bf16 && machine.vectorRegisters >= 32 && t.hasBf16Operands();
        op->setAttr(kLoweringAttrName, !dot                ? tgmmKind({"fma"})
                                       : kinds.amxBf16 ? tgmmKind({"avx512bf16_dot", "amx_bf16"})
                                                       : tgmmKind({"avx512bf16_dot"}));
      }
    });
    for (GmmOp gmm : gmms) {
      if (gmm->hasAttr(kLoweringAttrName))
        continue; // the up gmm of a SwiGLU selected with its gate
      SwigluOp swiglu = strategy::fusableSwiglu(gmm);
      GmmOp gate = gmm, up;
      if (swiglu) {
        gate = swiglu.getInputs()[0].getDefiningOp<GmmOp>();
        if (swiglu.getInputs().size() == 2)
          up = swiglu.getInputs()[1].getDefiningOp<GmmOp>();
        // Half of the pair written already: the other half is not chosen
        // over it (moe-lower-to-loops then says what does not match).
        if (gate->hasAttr(kLoweringAttrName) || (up && up->hasAttr(kLoweringAttrName)))
          continue;
      }
      FailureOr<GmmLoweringAttr> lowering = select(gate, up, swiglu);
      if (failed(lowering))
        return signalPassFailure();
      gate->setAttr(kLoweringAttrName, *lowering);
      if (up)
        up->setAttr(kLoweringAttrName, *lowering);
    }
  }
};
} // namespace
