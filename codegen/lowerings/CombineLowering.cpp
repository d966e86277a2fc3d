//===- CombineLowering.cpp - moe.combine to loops -------------------------===//
//
// Both strategies accumulate in f32 and cast once at the end:
// - unsort inverts the permutation, then each token sums its K rows in slot
//   order (k = 0..K-1), the order of the reference semantics;
// - scatter adds each row into its token in row (expert) order; rows of one
//   token may be anywhere, so this one stays sequential.
// Same value; the summation order, and so the last bits, differ.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/lowerings/Lowerings.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

void mlir::moe::codegen::lowerCombine(RewriterBase &rewriter, CombineOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value rows = e.buffer(op.getRows());
  Value perm = e.buffer(op.getPermutation());
  Value weights = e.buffer(op.getWeights());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t k = cast<RankedTensorType>(op.getWeights().getType()).getDimSize(1);
  Value cK = e.index(k), zero = e.index(0);
  Value tokens = e.dim(weights, 0), hidden = e.dim(rows, 1), rowCount = e.dim(rows, 0);
  e.checkSameSize(rowCount, e.dim(perm, 0),
                  "moe.combine: rows and permutation have different lengths");
  Value positions = e.mul(tokens, cK);
  bool preweighted = op.getPreweighted();

  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(tokens);
  Value out = e.alloc(type, dyn);
  bool f32Out = type.getElementType().isF32();
  Value acc = f32Out ? out : e.alloc(type.getShape(), b.getF32Type(), dyn);
  e.fill(acc, e.f32(0));

  auto addRow = [&](Value t, Value slot, Value r) {
    Value coef = preweighted ? e.f32(1) : e.load(weights, {t, slot});
    e.forLoop(zero, hidden, [&](Value h) {
      e.store(e.fadd(e.load(acc, {t, h}), e.fmul(coef, e.loadF32(rows, {r, h}))), acc, {t, h});
    });
  };

  if (op.getStrategy() == CombineStrategy::scatter) {
    e.forLoop(zero, rowCount, [&](Value r) {
      Value p = e.toIndex(e.load(perm, {r}));
      e.ifThen(e.inRange(p, positions), [&] { addRow(e.divs(p, cK), e.rems(p, cK), r); });
    });
  } else {
    Value inverse = e.alloc({ShapedType::kDynamic}, b.getIndexType(), {positions});
    e.fill(inverse, e.index(-1));
    e.forLoop(zero, rowCount, [&](Value r) {
      Value p = e.toIndex(e.load(perm, {r}));
      e.ifThen(e.inRange(p, positions), [&] { e.store(r, inverse, {p}); });
    });
    // Each token sums its own rows: tokens are independent.
    e.parallelFor(zero, tokens, [&](Value t) {
      e.forLoop(zero, cK, [&](Value slot) {
        Value r = e.load(inverse, {e.add(e.mul(t, cK), slot)});
        e.ifThen(e.ge(r, zero), [&] { addRow(t, slot, r); });
      });
    });
  }

  if (!f32Out) {
    e.parallelFor(zero, tokens, [&](Value t) {
      e.forLoop(zero, hidden, [&](Value h) { e.storeF32(e.load(acc, {t, h}), out, {t, h}); });
    });
  }
  rewriter.replaceOp(op, e.tensor(out, type));
}

// moe.scatter_slots: each row's value to its position. The positions of a
// permutation are distinct, so rows are independent (a parallel loop);
// slots no row names stay 0.
void mlir::moe::codegen::lowerScatterSlots(RewriterBase &rewriter, ScatterSlotsOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value values = e.buffer(op.getValues());
  Value perm = e.buffer(op.getPermutation());
  Value like = e.buffer(op.getLike());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t k = type.getDimSize(1);
  Value cK = e.index(k), zero = e.index(0);
  Value tokens = e.dim(like, 0), rowCount = e.dim(values, 0);
  e.checkSameSize(rowCount, e.dim(perm, 0),
                  "moe.scatter_slots: values and permutation have different lengths");
  Value positions = e.mul(tokens, cK);
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(tokens);
  Value out = e.alloc(type, dyn);
  e.fill(out, e.f32(0));
  e.parallelFor(zero, rowCount, [&](Value r) {
    Value p = e.toIndex(e.load(perm, {r}));
    e.ifThen(e.inRange(p, positions),
             [&] { e.store(e.load(values, {r}), out, {e.divs(p, cK), e.rems(p, cK)}); });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}
