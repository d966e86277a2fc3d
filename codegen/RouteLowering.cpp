//===- RouteLowering.cpp - moe.route to loops -----------------------------===//
//
// Per token: K rounds of selection over the E + N logits (a strict greater-
// than scan in ascending id order, so ties go to the lower id), then the
// scoring function, null handling and renormalisation. O(K * (E + N)) per
// token, which for K <= 8 beats a sort. Both orders select by logit: softmax
// and sigmoid are monotonic, so the top-K scores are the top-K logits; the
// order only changes the softmax denominator (the K chosen or all columns).
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

void mlir::moe::codegen::lowerRoute(RewriterBase &rewriter, RouteOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;

  Value logits = e.buffer(op.getLogits());
  int64_t columns = cast<RankedTensorType>(op.getLogits().getType()).getDimSize(1);
  int64_t k = op.getK();
  int64_t experts = op.getNumExperts();
  bool softmax = op.getScoring() == Scoring::softmax;
  bool overAll = op.getOrder() == RouteOrder::softmax_then_topk;
  bool nulls = op.getNullExperts() > 0;
  bool untilNull = op.getNullPolicy() == NullPolicy::take_until_null;

  Value tokens = e.dim(logits, 0);
  auto idsType = cast<RankedTensorType>(op.getIds().getType());
  auto weightsType = cast<RankedTensorType>(op.getWeights().getType());
  SmallVector<Value> dyn;
  if (idsType.isDynamicDim(0))
    dyn.push_back(tokens);
  Value ids = e.alloc(idsType, dyn);
  Value weights = e.alloc(weightsType, dyn);

  Value cColumns = e.index(columns), cK = e.index(k), zero = e.index(0);
  Value negInf = e.f32(-std::numeric_limits<float>::infinity());

  e.parallelFor(zero, tokens, [&](Value t) {
    // Per-token scratch: which columns are taken, the chosen ids and logits.
    Value taken = e.allocaScratch({columns}, b.getI1Type());
    Value chosenId = e.allocaScratch({k}, b.getIndexType());
    Value chosenLogit = e.allocaScratch({k}, b.getF32Type());
    e.fill(taken, arith::ConstantOp::create(b, b.getBoolAttr(false)));
    e.forLoop(zero, cK, [&](Value slot) {
      SmallVector<Value> best = e.forLoop(
          zero, cColumns, ValueRange{negInf, e.index(-1)},
          [&](Value c, ValueRange acc) -> SmallVector<Value> {
            Value v = e.loadF32(logits, {t, c});
            Value free = arith::XOrIOp::create(
                b, e.load(taken, {c}), arith::ConstantOp::create(b, b.getBoolAttr(true)));
            Value better = arith::OrIOp::create(
                b, e.lt(acc[1], zero),
                arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, v, acc[0]));
            Value pick = e.andI(free, better);
            return {e.select(pick, v, acc[0]), e.select(pick, c, acc[1])};
          });
      e.store(arith::ConstantOp::create(b, b.getBoolAttr(true)), taken, {best[1]});
      e.store(best[1], chosenId, {slot});
      e.store(best[0], chosenLogit, {slot});
    });

    // Softmax denominator: over the K chosen (shifted by the largest, the
    // first chosen) or over every column.
    Value shift, denom;
    if (softmax && !overAll) {
      shift = e.load(chosenLogit, {zero});
      denom = e.forLoop(zero, cK, ValueRange{e.f32(0)},
                        [&](Value s, ValueRange acc) -> SmallVector<Value> {
                          Value v = e.load(chosenLogit, {s});
                          return {e.fadd(acc[0], e.exp(arith::SubFOp::create(b, v, shift)))};
                        })[0];
    } else if (softmax) {
      shift = e.forLoop(zero, cColumns, ValueRange{negInf},
                        [&](Value c, ValueRange acc) -> SmallVector<Value> {
                          return {arith::MaximumFOp::create(b, acc[0], e.loadF32(logits, {t, c}))};
                        })[0];
      denom = e.forLoop(zero, cColumns, ValueRange{e.f32(0)},
                        [&](Value c, ValueRange acc) -> SmallVector<Value> {
                          Value v = e.loadF32(logits, {t, c});
                          return {e.fadd(acc[0], e.exp(arith::SubFOp::create(b, v, shift)))};
                        })[0];
    }

    // Score, null, store; the carried values are "a null was seen" and the
    // sum of the real weights.
    Value cExperts = e.index(experts);
    SmallVector<Value> carried = e.forLoop(
        zero, cK, ValueRange{arith::ConstantOp::create(b, b.getBoolAttr(false)), e.f32(0)},
        [&](Value s, ValueRange acc) -> SmallVector<Value> {
          Value id = e.load(chosenId, {s});
          Value v = e.load(chosenLogit, {s});
          Value w = softmax ? e.fdiv(e.exp(arith::SubFOp::create(b, v, shift)), denom)
                            : e.sigmoid(v);
          Value seen = acc[0];
          if (nulls) {
            Value isNullExpert = e.ge(id, cExperts);
            Value isNull = isNullExpert;
            if (untilNull) {
              isNull = arith::OrIOp::create(b, isNullExpert, seen);
              // Slots after the first null become null expert E.
              id = e.select(seen, cExperts, id);
            }
            seen = arith::OrIOp::create(b, seen, isNullExpert);
            w = e.select(isNull, e.f32(0), w);
          }
          e.store(e.toI32(id), ids, {t, s});
          e.store(w, weights, {t, s});
          return {seen, e.fadd(acc[1], w)};
        });
    if (op.getRenormalize()) {
      Value sum = carried[1];
      Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, sum, e.f32(0));
      e.ifThen(positive, [&] {
        e.forLoop(zero, cK, [&](Value s) {
          e.store(e.fdiv(e.load(weights, {t, s}), sum), weights, {t, s});
        });
      });
    }
  });
  rewriter.replaceOp(op, {e.tensor(ids, idsType), e.tensor(weights, weightsType)});
}
