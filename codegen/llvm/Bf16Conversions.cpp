//===- Bf16Conversions.cpp - the moe-expand-bf16-conversions pass -----------===//
//
// Rewrites the arith.truncf f32 -> bf16 that LLVM would turn into
// __truncsfbf2 calls (or, for vectors, scalar code), as integer rounding,
// and the vector arith.extf bf16 -> f32 it would scalarize, with upstream's
// bf16 expansion patterns (Passes.td says why): only those ops, so the
// vector truncations a CPU with AVX512_BF16 converts natively keep the
// instruction.
//
//===----------------------------------------------------------------------===//

#include "strategy/TargetCpu.h"
#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEEXPANDBF16CONVERSIONS
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
/// f32 -> bf16 as integer ops: round to nearest even on the bits; a NaN
/// keeps its sign and top payload bits and is made quiet (Buffer's
/// f32ToBf16 rounds the same way, vcvtneps2bf16 too but for subnormals,
/// which it flushes to zero). Why not upstream's
/// expansion: it ends in a select of the canonical NaN on the 16-bit
/// results, which LLVM turns into a select on bf16 vectors (the select
/// moved past the bitcast to the store's type), and the x86 backend
/// without AVX512_BF16 splits that a lane at a time (every bf16 vector
/// store of a kernel's output: 240 vpextrw in the tgmm's). Here the NaN
/// case selects 32-bit constants before the narrowing.
void expandTruncation(arith::TruncFOp trunc) {
  ImplicitLocOpBuilder b(trunc.getLoc(), trunc);
  Type wideType = trunc.getIn().getType(), narrowType = trunc.getType();
  auto like = [&](Type element) -> Type {
    if (auto vector = dyn_cast<VectorType>(wideType))
      return vector.clone(element);
    return element;
  };
  Type i32 = like(b.getI32Type()), i16 = like(b.getI16Type());
  auto constant = [&](int64_t v) -> Value {
    TypedAttr attr = b.getI32IntegerAttr(v);
    if (auto vector = dyn_cast<VectorType>(i32))
      return arith::ConstantOp::create(b, DenseElementsAttr::get(vector, attr));
    return arith::ConstantOp::create(b, attr);
  };
  Value x = trunc.getIn();
  Value bits = arith::BitcastOp::create(b, i32, x);
  Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
  Value sixteen = constant(16);
  Value lsb = arith::AndIOp::create(b, arith::ShRUIOp::create(b, bits, sixteen), constant(1));
  Value bias =
      arith::SelectOp::create(b, isNan, constant(0), arith::AddIOp::create(b, lsb, constant(0x7FFF)));
  Value rounded = arith::ShRUIOp::create(b, arith::AddIOp::create(b, bits, bias), sixteen);
  Value quiet = arith::SelectOp::create(b, isNan, constant(0x40), constant(0));
  Value narrow = arith::TruncIOp::create(b, i16, arith::OrIOp::create(b, rounded, quiet));
  trunc.replaceAllUsesWith(arith::BitcastOp::create(b, narrowType, narrow).getResult());
  trunc.erase();
}

struct MoeExpandBf16ConversionsPass
    : mlir::moe::impl::MoeExpandBf16ConversionsBase<MoeExpandBf16ConversionsPass> {
  using Base::Base;

  void runOnOperation() override {
    bool expandVectors;
    if (vectors == "auto") {
      // The module's #moe.target where it has one (moe-attach-target).
      auto module = isa<ModuleOp>(getOperation()) ? cast<ModuleOp>(getOperation())
                                                  : getOperation()->getParentOfType<ModuleOp>();
      auto target = module ? module->getAttrOfType<mlir::moe::TargetAttr>(mlir::moe::kTargetAttrName)
                           : mlir::moe::TargetAttr();
      expandVectors = target ? !target.hasFeature("avx512bf16")
                             : !mlir::moe::strategy::targetCpuFeatures().lookup("avx512bf16");
    }
    else if (vectors == "true" || vectors == "false")
      expandVectors = vectors == "true";
    else {
      emitError(getOperation()->getLoc())
          << "moe-expand-bf16-conversions: vectors must be auto, true or false (got '"
          << vectors << "')";
      return signalPassFailure();
    }
    SmallVector<Operation *> conversions;
    SmallVector<arith::TruncFOp> truncations;
    getOperation()->walk([&](Operation *op) {
      if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        if (getElementTypeOrSelf(trunc.getType()).isBF16() &&
            (expandVectors || !isa<VectorType>(trunc.getType()))) {
          if (getElementTypeOrSelf(trunc.getIn().getType()).isF32())
            truncations.push_back(trunc);
          else
            conversions.push_back(op);
        }
      } else if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
        // A widening is a 16-bit shift on any CPU: LLVM's x86 backend does
        // it for scalars but splits a vector one into scalar shifts and
        // spills (the bf16 weight pack at T 16 ran 7x slower than f32's).
        if (isa<VectorType>(ext.getType()) && getElementTypeOrSelf(ext.getIn().getType()).isBF16() &&
            getElementTypeOrSelf(ext.getType()).isF32())
          conversions.push_back(op);
      }
    });
    for (arith::TruncFOp trunc : truncations)
      expandTruncation(trunc);
    if (conversions.empty())
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyOpPatternsGreedily(conversions, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
