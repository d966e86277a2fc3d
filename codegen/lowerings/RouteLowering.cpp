//===- RouteLowering.cpp - moe.route to loops -----------------------------===//
//
// Per token: K rounds of selection over the E + N logits (what a strict
// greater-than scan in ascending id order picks, so ties go to the lower
// id; 16 columns at a time, selectTopK), then the scoring function, null
// handling and renormalisation. O(K * (E + N)) per token, which for K <= 8
// beats a sort. Both orders select by logit: softmax and sigmoid are
// monotonic, so the top-K scores are the top-K logits; the order only
// changes the softmax denominator (the K chosen or all columns).
//
// moe.route_grad makes the same selection again (one helper for both, so
// they cannot disagree) and runs the chain rule backwards per token.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/lowerings/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cstdint>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16; // f32 lanes of a selection vector (a zmm; two ymm on AVX2)

/// The K chosen of `columns` values (into per-token stack scratch): ids
/// and the values `valueAt(c)` they were chosen by, largest first, ties to
/// the lower id.
///
/// What each round picks is the reference scan's (test/reference: over the
/// columns not yet taken in ascending id order, the first one, replaced by
/// any later one strictly greater), computed 16 columns at a time: the
/// first free column f if its value is NaN (no value is greater than a
/// NaN, so the scan keeps it), else the lowest free column holding the
/// largest of the free non-NaN values (f among them; -0 and +0 tie as `>`
/// ties them). The values are copied once into a row of whole vectors, and
/// a free column holds its own id in `freeId`, a taken or padding one
/// INT32_MAX, so that the lowest free id is a vector min. Scalar, the scan
/// was one compare-and-select chain of K * columns steps. Measured (AMD
/// EPYC znver4, 2 threads, E 60, T 4096, `moe-bench --stage-timing`, the
/// two builds in the order after, before, before, after): the route stage
/// at top-8 4.42-4.43 ms scalar, 0.99-1.02 ms in vectors; top-2 1.07-1.12
/// and 0.27.
std::pair<Value, Value> selectTopK(Emitter &e, function_ref<Value(Value)> valueAt,
                                   int64_t columns, int64_t k) {
  auto &b = e.b;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  int64_t chunks = llvm::divideCeil(columns, kLanes);
  auto valueVec = VectorType::get({kLanes}, f32);
  auto idVec = VectorType::get({kLanes}, i32);
  Value zero = e.index(0), cK = e.index(k), cChunks = e.index(chunks), cLanes = e.index(kLanes);
  Value negInf = e.f32(-std::numeric_limits<float>::infinity());
  Value none = e.i32(std::numeric_limits<int32_t>::max());
  Value negInfVec = vector::BroadcastOp::create(b, valueVec, negInf);
  Value noneVec = vector::BroadcastOp::create(b, idVec, none);
  SmallVector<int32_t> lanes(kLanes);
  for (int64_t i = 0; i < kLanes; ++i)
    lanes[i] = static_cast<int32_t>(i);
  Value laneIds = arith::ConstantOp::create(b, DenseIntElementsAttr::get(idVec, ArrayRef(lanes)));

  Value values = e.allocaScratch({chunks * kLanes}, f32);
  Value freeId = e.allocaScratch({chunks * kLanes}, i32);
  Value chosenId = e.allocaScratch({k}, b.getIndexType());
  Value chosenLogit = e.allocaScratch({k}, f32);
  e.fill(values, negInf);
  e.forLoop(zero, e.index(columns), [&](Value c) { e.store(valueAt(c), values, {c}); });
  Value cColumns = vector::BroadcastOp::create(b, idVec, e.i32(columns));
  e.forLoop(zero, cChunks, [&](Value j) {
    Value first = e.mul(j, cLanes);
    Value ids = arith::AddIOp::create(b, laneIds, vector::BroadcastOp::create(b, idVec, e.toI32(first)));
    Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, ids, cColumns);
    vector::StoreOp::create(b, arith::SelectOp::create(b, inside, ids, noneVec), freeId, ValueRange{first});
  });

  auto loadChunk = [&](Value j) {
    Value first = e.mul(j, cLanes);
    Value v = vector::LoadOp::create(b, valueVec, values, ValueRange{first});
    Value id = vector::LoadOp::create(b, idVec, freeId, ValueRange{first});
    Value free = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, id, noneVec);
    return std::make_tuple(v, id, free);
  };
  e.forLoop(zero, cK, [&](Value slot) {
    // The largest free non-NaN value and the lowest free id.
    SmallVector<Value> firstPass = e.forLoop(
        zero, cChunks, ValueRange{negInfVec, noneVec},
        [&](Value j, ValueRange acc) -> SmallVector<Value> {
          auto [v, id, free] = loadChunk(j);
          // NaNs left out explicitly, though maxnumf ignores them already:
          // the rule must not hang on which max op this is.
          Value number = arith::CmpFOp::create(b, arith::CmpFPredicate::ORD, v, v);
          Value counted = arith::AndIOp::create(b, free, number);
          return {arith::MaxNumFOp::create(b, acc[0], arith::SelectOp::create(b, counted, v, negInfVec)),
                  arith::MinSIOp::create(b, acc[1], id)};
        });
    Value largest = vector::ReductionOp::create(b, vector::CombiningKind::MAXNUMF, firstPass[0]);
    Value firstFree = e.toIndex(vector::ReductionOp::create(b, vector::CombiningKind::MINSI, firstPass[1]));
    Value largestVec = vector::BroadcastOp::create(b, valueVec, largest);
    // The lowest free id holding it.
    Value holders = e.forLoop(zero, cChunks, ValueRange{noneVec},
                              [&](Value j, ValueRange acc) -> SmallVector<Value> {
                                auto [v, id, free] = loadChunk(j);
                                Value equal = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, v, largestVec);
                                Value holds = arith::AndIOp::create(b, free, equal);
                                return {arith::MinSIOp::create(b, acc[0], arith::SelectOp::create(b, holds, id, noneVec))};
                              })[0];
    Value lowestHolder = e.toIndex(vector::ReductionOp::create(b, vector::CombiningKind::MINSI, holders));
    Value firstValue = e.load(values, {firstFree});
    Value firstIsNaN = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, firstValue, firstValue);
    Value pick = e.select(firstIsNaN, firstFree, lowestHolder);
    e.store(none, freeId, {pick});
    e.store(pick, chosenId, {slot});
    e.store(e.load(values, {pick}), chosenLogit, {slot});
  });
  return {chosenId, chosenLogit};
}

/// A token's softmax: the shift (the largest logit), the denominator, and
/// for the gradient the column holding that largest logit (ties to the
/// lower id) with the sum of every other term, `rest`. rest / denom is
/// 1 - p of the top column without the cancellation of 1 - p: a router
/// 20 logits sure of one expert has p = 1.0f and 1 - p about 1e-9, which
/// the gradient of that expert's logit is made of.
struct SoftmaxTerms {
  Value shift, denom, topColumn, rest;
};

/// Over the K chosen (shifted by the largest, the first chosen) or over
/// every column.
SoftmaxTerms softmaxTerms(Emitter &e, Value logits, Value t, int64_t columns, int64_t k,
                          Value chosenId, Value chosenLogit, bool overAll) {
  auto &b = e.b;
  Value zero = e.index(0), f0 = e.f32(0);
  Value negInf = e.f32(-std::numeric_limits<float>::infinity());
  SoftmaxTerms terms;
  if (!overAll) {
    terms.shift = e.load(chosenLogit, {zero});
    terms.topColumn = e.load(chosenId, {zero});
    SmallVector<Value> sums = e.forLoop(
        zero, e.index(k), ValueRange{f0, f0}, [&](Value s, ValueRange acc) -> SmallVector<Value> {
          Value term = e.exp(arith::SubFOp::create(b, e.load(chosenLogit, {s}), terms.shift));
          Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, s, zero);
          return {e.fadd(acc[0], term), e.fadd(acc[1], e.select(first, f0, term))};
        });
    terms.denom = sums[0];
    terms.rest = sums[1];
    return terms;
  }
  Value cColumns = e.index(columns);
  SmallVector<Value> top = e.forLoop(
      zero, cColumns, ValueRange{negInf, zero}, [&](Value c, ValueRange acc) -> SmallVector<Value> {
        Value v = e.loadF32(logits, {t, c});
        Value above = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, v, acc[0]);
        return {e.select(above, v, acc[0]), e.select(above, c, acc[1])};
      });
  terms.shift = top[0];
  terms.topColumn = top[1];
  SmallVector<Value> sums = e.forLoop(
      zero, cColumns, ValueRange{f0, f0}, [&](Value c, ValueRange acc) -> SmallVector<Value> {
        Value term = e.exp(arith::SubFOp::create(b, e.loadF32(logits, {t, c}), terms.shift));
        Value isTop = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, c, terms.topColumn);
        return {e.fadd(acc[0], term), e.fadd(acc[1], e.select(isTop, f0, term))};
      });
  terms.denom = sums[0];
  terms.rest = sums[1];
  return terms;
}
/// The routing attributes moe.route and moe.route_grad share.
struct RouteAttrs {
  int64_t columns, k, experts;
  bool softmax, overAll, nulls, untilNull, renormalize;
  Value selectionBias; // [columns] f32 buffer, or null
  int64_t groups, topkGroups;
  bool top2Sum;
  double scaling;
  /// Whether the experts are chosen by their scores (+ bias, in groups)
  /// rather than by their logits.
  bool byScores() const { return selectionBias || groups > 1; }
};

template <typename RouteLikeOp>
RouteAttrs routeAttrs(Emitter &e, RouteLikeOp op, int64_t k) {
  int64_t columns = cast<RankedTensorType>(op.getLogits().getType()).getDimSize(1);
  int64_t nullExperts = static_cast<int64_t>(op.getNullExperts());
  return {columns,
          k,
          columns - nullExperts,
          op.getScoring() == Scoring::softmax,
          op.getOrder() == RouteOrder::softmax_then_topk,
          nullExperts > 0,
          op.getNullPolicy() == NullPolicy::take_until_null,
          op.getRenormalize(),
          op.getSelectionBias() ? e.buffer(op.getSelectionBias()) : Value(),
          static_cast<int64_t>(op.getGroups()),
          static_cast<int64_t>(op.getTopkGroups()),
          op.getGroupScore() == GroupScore::top2_sum,
          op.getRoutedScaling().convertToDouble()};
}

/// Token `t`'s selection scores (DeepSeek-V2/V3) into scratch [columns]:
/// the score (softmax over all columns with `shift` and `denom`, or
/// sigmoid) plus the selection bias; with groups, the columns of every group
/// outside the best `topkGroups` (scored by their max, or the sum of their
/// top two; ties to the lower group) set to 0, as the families' code masks
/// them (masked_fill 0.0, not -inf).
Value selectionScores(Emitter &e, const RouteAttrs &a, Value logits, Value t, Value shift,
                      Value denom) {
  auto &b = e.b;
  Value zero = e.index(0);
  Value sel = e.allocaScratch({a.columns}, b.getF32Type());
  e.forLoop(zero, e.index(a.columns), [&](Value c) {
    Value v = e.loadF32(logits, {t, c});
    Value score = a.softmax ? e.fdiv(e.exp(arith::SubFOp::create(b, v, shift)), denom)
                            : e.sigmoid(v);
    if (a.selectionBias)
      score = e.fadd(score, e.load(a.selectionBias, {c}));
    e.store(score, sel, {c});
  });
  if (a.groups <= 1)
    return sel;
  int64_t perGroup = a.columns / a.groups;
  Value negInf = e.f32(-std::numeric_limits<float>::infinity());
  Value groupScore = e.allocaScratch({a.groups}, b.getF32Type());
  e.forLoop(zero, e.index(a.groups), [&](Value g) {
    Value first = e.mul(g, e.index(perGroup));
    // The largest and second largest of the group.
    SmallVector<Value> best = e.forLoop(
        zero, e.index(perGroup), ValueRange{negInf, negInf},
        [&](Value i, ValueRange acc) -> SmallVector<Value> {
          Value v = e.load(sel, {e.add(first, i)});
          Value above = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, v, acc[0]);
          Value second = e.select(above, acc[0], arith::MaximumFOp::create(b, acc[1], v));
          return {e.select(above, v, acc[0]), second};
        });
    e.store(a.top2Sum ? e.fadd(best[0], best[1]) : best[0], groupScore, {g});
  });
  // The kept groups: chosen as the experts are (ties to the lower group).
  Value keptIds =
      selectTopK(e, [&](Value g) { return e.load(groupScore, {g}); }, a.groups, a.topkGroups)
          .first;
  Value kept = e.allocaScratch({a.groups}, b.getI1Type());
  e.fill(kept, arith::ConstantOp::create(b, b.getBoolAttr(false)));
  e.forLoop(zero, e.index(a.topkGroups), [&](Value i) {
    e.store(arith::ConstantOp::create(b, b.getBoolAttr(true)), kept, {e.load(keptIds, {i})});
  });
  e.forLoop(zero, e.index(a.columns), [&](Value c) {
    Value inKept = e.load(kept, {e.divs(c, e.index(perGroup))});
    e.store(e.select(inKept, e.load(sel, {c}), e.f32(0)), sel, {c});
  });
  return sel;
}

/// One token's forward up to the weights: the selection, the softmax shift
/// and denominator (softmax only), and the sum of the real slots' scores.
struct TokenSlots {
  Value chosenId, chosenLogit, sum;
  SoftmaxTerms softmax; // softmax scoring only
};

/// Selects token `t`'s K columns and scores them, calling
/// `slot(s, id, score, isNull)` for each slot in order: `id` is what
/// moe.route reports (null expert E for every slot after take_until_null's
/// first null), `score` the softmax or sigmoid of the chosen logit before
/// nulling, `isNull` whether the slot's weight is 0.
TokenSlots routeSlots(Emitter &e, const RouteAttrs &a, Value logits, Value t,
                      function_ref<void(Value, Value, Value, Value)> slot) {
  auto &b = e.b;
  TokenSlots token;
  if (a.byScores()) {
    // Scores first (softmax over all columns), then the choice by them;
    // each slot's weight is its unbiased score, from its logit as below.
    if (a.softmax)
      token.softmax = softmaxTerms(e, logits, t, a.columns, a.k, Value(), Value(),
                                   /*overAll=*/true);
    Value sel = selectionScores(e, a, logits, t, token.softmax.shift, token.softmax.denom);
    token.chosenId = selectTopK(e, [&](Value c) { return e.load(sel, {c}); }, a.columns, a.k).first;
    token.chosenLogit = e.allocaScratch({a.k}, b.getF32Type());
    e.forLoop(e.index(0), e.index(a.k), [&](Value s) {
      e.store(e.loadF32(logits, {t, e.load(token.chosenId, {s})}), token.chosenLogit, {s});
    });
  } else {
    std::tie(token.chosenId, token.chosenLogit) =
        selectTopK(e, [&](Value c) { return e.loadF32(logits, {t, c}); }, a.columns, a.k);
    if (a.softmax)
      token.softmax = softmaxTerms(e, logits, t, a.columns, a.k, token.chosenId,
                                   token.chosenLogit, a.overAll);
  }
  Value cExperts = e.index(a.experts), f0 = e.f32(0);
  Value noNull = arith::ConstantOp::create(b, b.getBoolAttr(false));
  // Carried: "a null expert was seen", the sum of the real scores.
  token.sum = e.forLoop(
      e.index(0), e.index(a.k), ValueRange{noNull, f0},
      [&](Value s, ValueRange acc) -> SmallVector<Value> {
        Value id = e.load(token.chosenId, {s});
        Value v = e.load(token.chosenLogit, {s});
        Value score = a.softmax
                          ? e.fdiv(e.exp(arith::SubFOp::create(b, v, token.softmax.shift)),
                                   token.softmax.denom)
                          : e.sigmoid(v);
        Value seen = acc[0], isNull = noNull;
        if (a.nulls) {
          Value isNullExpert = e.ge(id, cExperts);
          isNull = isNullExpert;
          if (a.untilNull) {
            isNull = arith::OrIOp::create(b, isNullExpert, seen);
            id = e.select(seen, cExperts, id);
          }
          seen = arith::OrIOp::create(b, seen, isNullExpert);
        }
        slot(s, id, score, isNull);
        return {seen, e.fadd(acc[1], e.select(isNull, f0, score))};
      })[1];
  return token;
}
} // namespace

void mlir::moe::codegen::lowerRoute(RewriterBase &rewriter, RouteOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;

  Value logits = e.buffer(op.getLogits());
  RouteAttrs a = routeAttrs(e, op, op.getK());
  Value tokens = e.dim(logits, 0);
  auto idsType = cast<RankedTensorType>(op.getIds().getType());
  auto weightsType = cast<RankedTensorType>(op.getWeights().getType());
  SmallVector<Value> dyn;
  if (idsType.isDynamicDim(0))
    dyn.push_back(tokens);
  Value ids = e.alloc(idsType, dyn);
  Value weights = e.alloc(weightsType, dyn);
  Value cK = e.index(a.k), zero = e.index(0);

  e.parallelFor(zero, tokens, [&](Value t) {
    TokenSlots token = routeSlots(e, a, logits, t, [&](Value s, Value id, Value score, Value isNull) {
      e.store(e.toI32(id), ids, {t, s});
      e.store(e.select(isNull, e.f32(0), score), weights, {t, s});
    });
    if (a.renormalize) {
      Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, token.sum, e.f32(0));
      e.ifThen(positive, [&] {
        e.forLoop(zero, cK, [&](Value s) {
          e.store(e.fdiv(e.load(weights, {t, s}), token.sum), weights, {t, s});
        });
      });
    }
    if (a.scaling != 1.0)
      e.forLoop(zero, cK, [&](Value s) {
        e.store(e.fmul(e.load(weights, {t, s}), e.f32(a.scaling)), weights, {t, s});
      });
  });
  rewriter.replaceOp(op, {e.tensor(ids, idsType), e.tensor(weights, weightsType)});
}

void mlir::moe::codegen::lowerRouteGrad(RewriterBase &rewriter, RouteGradOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;

  Value logits = e.buffer(op.getLogits());
  Value dweights = e.buffer(op.getWeightsGrad());
  RouteAttrs a =
      routeAttrs(e, op, cast<RankedTensorType>(op.getWeightsGrad().getType()).getDimSize(1));
  int64_t k = a.k;
  Value tokens = e.dim(logits, 0);
  e.checkSameSize(tokens, e.dim(dweights, 0),
                  "moe.route_grad: weights_grad and logits have different token counts");
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(tokens);
  Value dlogits = e.alloc(type, dyn);
  Value cColumns = e.index(a.columns), cK = e.index(k), zero = e.index(0);
  Value f0 = e.f32(0), f1 = e.f32(1);

  e.parallelFor(zero, tokens, [&](Value t) {
    // The forward again: each slot's score s and whether it is null.
    Value score = e.allocaScratch({k}, b.getF32Type());
    Value isNullSlot = e.allocaScratch({k}, b.getI1Type());
    TokenSlots token = routeSlots(e, a, logits, t, [&](Value s, Value, Value sc, Value isNull) {
      e.store(sc, score, {s});
      e.store(isNull, isNullSlot, {s});
    });
    Value sum = token.sum;
    // The gradient of the weights before the routed scaling.
    auto dwAt = [&](Value s) {
      Value dw = e.load(dweights, {t, s});
      return a.scaling == 1.0 ? dw : e.fmul(dw, e.f32(a.scaling));
    };
    // dv = (dw - w . dw) / sum(v) when renormalising (sum > 0), else dw;
    // ds = dv outside null slots. Stored over dscore.
    Value dscore = e.allocaScratch({k}, b.getF32Type());
    Value renormalized = a.renormalize
                             ? arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, sum, f0).getResult()
                             : arith::ConstantOp::create(b, b.getBoolAttr(false)).getResult();
    Value safeSum = e.select(renormalized, sum, f1);
    Value wDotDw = e.forLoop(zero, cK, ValueRange{f0},
                             [&](Value s, ValueRange acc) -> SmallVector<Value> {
                               // Null slots add nothing (not 0 * dw: dw may be inf).
                               Value isNull = e.load(isNullSlot, {s});
                               Value w = e.fdiv(e.load(score, {s}), safeSum);
                               Value term = e.fmul(w, dwAt(s));
                               return {e.fadd(acc[0], e.select(isNull, f0, term))};
                             })[0];
    wDotDw = e.select(renormalized, wDotDw, f0);
    // sum_k s_k ds_k, the softmax's correction.
    Value sDotDs = e.forLoop(zero, cK, ValueRange{f0},
                             [&](Value s, ValueRange acc) -> SmallVector<Value> {
                               Value dv = e.fdiv(arith::SubFOp::create(b, dwAt(s), wDotDw),
                                                 safeSum);
                               Value ds = e.select(e.load(isNullSlot, {s}), f0, dv);
                               e.store(ds, dscore, {s});
                               return {e.fadd(acc[0], e.fmul(e.load(score, {s}), ds))};
                             })[0];
    // Columns no slot chose: -p_j (s . ds) for the softmax over all, else 0.
    const SoftmaxTerms &sm = token.softmax;
    e.forLoop(zero, cColumns, [&](Value c) {
      Value g = f0;
      if (a.softmax && a.overAll) {
        Value p = e.fdiv(e.exp(arith::SubFOp::create(b, e.loadF32(logits, {t, c}), sm.shift)),
                         sm.denom);
        g = arith::NegFOp::create(b, e.fmul(p, sDotDs));
      }
      e.store(g, dlogits, {t, c});
    });
    // The chosen columns. Softmax: s_c (ds_c - s . ds), computed as
    // s_c (ds_c (1 - s_c) - sum of the other slots' s ds) with 1 - s_c of
    // the top column from the other terms: ds_c - s . ds cancels to 0 in
    // f32 when s_c rounds to 1 (PyTorch's softmax backward gives 0 there
    // too), the rearranged sum keeps the gradient double precision gives.
    // Sigmoid: ds s (1 - s) with 1 - s as sigmoid(-logit), for the same
    // reason. O(K^2) per token, small beside the selection's O(K (E + N)).
    e.forLoop(zero, cK, [&](Value s) {
      Value c = e.load(token.chosenId, {s});
      Value sc = e.load(score, {s}), ds = e.load(dscore, {s});
      Value g;
      if (!a.softmax) {
        Value v = e.load(token.chosenLogit, {s});
        g = e.fmul(ds, e.fmul(sc, e.sigmoid(arith::NegFOp::create(b, v))));
      } else {
        Value others = e.forLoop(zero, cK, ValueRange{f0},
                                 [&](Value o, ValueRange acc) -> SmallVector<Value> {
                                   Value same = arith::CmpIOp::create(
                                       b, arith::CmpIPredicate::eq, o, s);
                                   Value term = e.fmul(e.load(score, {o}), e.load(dscore, {o}));
                                   return {e.fadd(acc[0], e.select(same, f0, term))};
                                 })[0];
        Value isTop = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, c, sm.topColumn);
        Value oneMinus =
            e.select(isTop, e.fdiv(sm.rest, sm.denom), arith::SubFOp::create(b, f1, sc));
        g = e.fmul(sc, arith::SubFOp::create(b, e.fmul(ds, oneMinus), others));
      }
      e.store(g, dlogits, {t, c});
    });
  });
  rewriter.replaceOp(op, e.tensor(dlogits, type));
}
