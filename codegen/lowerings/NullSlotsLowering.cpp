//===- NullSlotsLowering.cpp - moe.null_slots to loops --------------------===//
//
// Per token, the K slots in order: a slot is null when it was null already
// (an id outside [0, E)), when its draw is below the slot probability, or,
// with take_until_null, when an earlier slot of the token was null. Null
// slots get id E and weight 0; the real weights are then renormalised when
// asked. O(K) per token, parallel over tokens.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/lowerings/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

void mlir::moe::codegen::lowerNullSlots(RewriterBase &rewriter, NullSlotsOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;

  Value ids = e.buffer(op.getIds());
  Value weights = e.buffer(op.getWeights());
  Value draws = e.buffer(op.getDraws());
  Value tokens = e.dim(ids, 0);
  e.checkSameSize(tokens, e.dim(weights, 0),
                  "moe.null_slots: ids and weights have different token counts");
  e.checkSameSize(tokens, e.dim(draws, 0),
                  "moe.null_slots: ids and draws have different token counts");
  auto idsType = cast<RankedTensorType>(op.getNewIds().getType());
  auto weightsType = cast<RankedTensorType>(op.getNewWeights().getType());
  SmallVector<Value> dyn;
  if (idsType.isDynamicDim(0))
    dyn.push_back(tokens);
  Value newIds = e.alloc(idsType, dyn);
  Value newWeights = e.alloc(weightsType, dyn);

  int64_t k = idsType.getDimSize(1);
  bool untilNull = op.getPolicy() == NullPolicy::take_until_null;
  Value cK = e.index(k), zero = e.index(0), f0 = e.f32(0);
  Value experts = arith::ConstantOp::create(b, b.getI32IntegerAttr(op.getExperts()));
  Value zeroId = arith::ConstantOp::create(b, b.getI32IntegerAttr(0));
  Value probability = e.f32(op.getSlotProbability());
  Value noNull = arith::ConstantOp::create(b, b.getBoolAttr(false));

  e.parallelFor(zero, tokens, [&](Value t) {
    // Carried: "an earlier slot was null", the sum of the real weights.
    Value sum = e.forLoop(
        zero, cK, ValueRange{noNull, f0}, [&](Value s, ValueRange acc) -> SmallVector<Value> {
          Value id = e.load(ids, {t, s});
          Value w = e.load(weights, {t, s});
          Value wasNull = arith::OrIOp::create(b, e.lt(id, zeroId), e.ge(id, experts));
          Value drawn = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT,
                                              e.load(draws, {t, s}), probability);
          Value isNull = arith::OrIOp::create(b, wasNull, drawn);
          if (untilNull)
            isNull = arith::OrIOp::create(b, isNull, acc[0]);
          Value kept = e.select(isNull, f0, w);
          e.store(e.select(isNull, experts, id), newIds, {t, s});
          e.store(kept, newWeights, {t, s});
          return {arith::OrIOp::create(b, acc[0], isNull), e.fadd(acc[1], kept)};
        })[1];
    if (op.getRenormalize()) {
      Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, sum, f0);
      e.ifThen(positive, [&] {
        e.forLoop(zero, cK, [&](Value s) {
          e.store(e.fdiv(e.load(newWeights, {t, s}), sum), newWeights, {t, s});
        });
      });
    }
  });
  rewriter.replaceOp(op, {e.tensor(newIds, idsType), e.tensor(newWeights, weightsType)});
}
