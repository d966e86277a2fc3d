//===- PackLowering.cpp - moe.pack and moe.gather_rows to loops -----------===//
//
// moe.pack is a counting sort: count the assignments of each local expert,
// take prefix sums (cutting groups from the end when the capacity is short),
// then place each assignment at its group's cursor in token-major order,
// which makes the sort stable, then copy the rows in parallel. O(T*K + L)
// plus the row copies: every
// strategy attribute (argsort, tuple_sort, counting) gets this algorithm,
// since all of them define the same permutation.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/lowerings/Lowerings.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

void mlir::moe::codegen::lowerPack(RewriterBase &rewriter, PackOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;

  Value x = e.buffer(op.getX());
  Value ids = e.buffer(op.getIds());
  Value weights = e.buffer(op.getWeights());
  int64_t k = cast<RankedTensorType>(op.getIds().getType()).getDimSize(1);
  int64_t local = op.getNumLocalExperts();
  Value tokens = e.dim(x, 0), hidden = e.dim(x, 1);
  Value cK = e.index(k), cLocal = e.index(local), zero = e.index(0);
  e.checkSameSize(tokens, e.dim(ids, 0), "moe.pack: x and ids have different token counts");
  e.checkSameSize(tokens, e.dim(weights, 0),
                  "moe.pack: x and weights have different token counts");
  Value assignments = e.mul(tokens, cK);
  Value offset = e.index(op.getExpertOffset());

  auto rowsType = cast<RankedTensorType>(op.getRows().getType());
  Value rowCount = rowsType.isDynamicDim(0) ? assignments
                                            : e.index(rowsType.getDimSize(0));
  SmallVector<Value> dyn;
  if (rowsType.isDynamicDim(0))
    dyn.push_back(rowCount);
  auto sortedWType = cast<RankedTensorType>(op.getSortedWeights().getType());
  auto permType = cast<RankedTensorType>(op.getPermutation().getType());
  auto sizesType = cast<RankedTensorType>(op.getGroupSizes().getType());
  // Rows nobody reads (the gmms read x through the permutation instead) are
  // neither allocated nor copied.
  bool rowsUsed = !op.getRows().use_empty();
  Value rows = rowsUsed ? e.alloc(rowsType, dyn) : Value();
  Value sortedW = e.alloc(sortedWType, dyn);
  Value perm = e.alloc(permType, dyn);
  Value sizes = e.alloc(sizesType, {});
  // Rows outside every group are padding: zero, weight 0, position -1.
  if (rowsUsed)
    e.fill(rows, e.zero(rowsType.getElementType()));
  e.fill(sortedW, e.f32(0));
  e.fill(perm, e.i32(-1));

  // The local expert of assignment p, or a value outside [0, L).
  auto localExpert = [&](Value p) {
    Value id = e.toIndex(e.load(ids, {e.divs(p, cK), e.rems(p, cK)}));
    return e.sub(id, offset);
  };

  Value counts = e.alloc({local}, b.getIndexType(), {});
  Value cursor = e.alloc({local}, b.getIndexType(), {});
  Value limit = e.alloc({local}, b.getIndexType(), {});
  e.fill(counts, zero);
  e.forLoop(zero, assignments, [&](Value p) {
    Value g = localExpert(p);
    e.ifThen(e.inRange(g, cLocal), [&] {
      e.store(e.add(e.load(counts, {g}), e.index(1)), counts, {g});
    });
  });
  e.forLoop(zero, cLocal, ValueRange{zero},
            [&](Value g, ValueRange acc) -> SmallVector<Value> {
              Value start = acc[0];
              Value room = e.max(e.sub(rowCount, start), zero);
              Value size = e.min(e.load(counts, {g}), room);
              e.store(e.toI32(size), sizes, {g});
              e.store(start, cursor, {g});
              Value end = e.add(start, size);
              e.store(end, limit, {g});
              return {end};
            });
  e.forLoop(zero, assignments, [&](Value p) {
    Value g = localExpert(p);
    e.ifThen(e.inRange(g, cLocal), [&] {
      Value r = e.load(cursor, {g});
      e.ifThen(e.lt(r, e.load(limit, {g})), [&] {
        Value t = e.divs(p, cK);
        e.store(e.toI32(p), perm, {r});
        e.store(e.load(weights, {t, e.rems(p, cK)}), sortedW, {r});
        e.store(e.add(r, e.index(1)), cursor, {g});
      });
    });
  });
  // The row copies, the bulk of the bytes, in parallel once every row knows
  // its source.
  if (rowsUsed) {
    e.parallelFor(zero, rowCount, [&](Value r) {
      Value p = e.toIndex(e.load(perm, {r}));
      e.ifThen(e.ge(p, zero), [&] {
        Value t = e.divs(p, cK);
        e.forLoop(zero, hidden, [&](Value h) { e.store(e.load(x, {t, h}), rows, {r, h}); });
      });
    });
  }
  Value rowsTensor = rowsUsed ? e.tensor(rows, rowsType)
                              : tensor::EmptyOp::create(b, rowsType.getShape(),
                                                        rowsType.getElementType(), dyn)
                                    .getResult();
  rewriter.replaceOp(op, {rowsTensor, e.tensor(sortedW, sortedWType),
                          e.tensor(perm, permType), e.tensor(sizes, sizesType)});
}

void mlir::moe::codegen::lowerGatherRows(RewriterBase &rewriter,
                                         GatherRowsOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value src = e.buffer(op.getSrc());
  Value perm = e.buffer(op.getPermutation());
  Value cK = e.index(op.getK()), zero = e.index(0);
  Value tokens = e.dim(src, 0), width = e.dim(src, 1), rowCount = e.dim(perm, 0);
  Value positions = e.mul(tokens, cK);
  auto type = cast<RankedTensorType>(op.getRows().getType());
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(rowCount);
  Value rows = e.alloc(type, dyn);
  e.fill(rows, e.zero(type.getElementType()));
  e.parallelFor(zero, rowCount, [&](Value r) {
    Value p = e.toIndex(e.load(perm, {r}));
    e.ifThen(e.inRange(p, positions), [&] {
      Value t = e.divs(p, cK);
      e.forLoop(zero, width, [&](Value h) {
        e.store(e.load(src, {t, h}), rows, {r, h});
      });
    });
  });
  rewriter.replaceOp(op, e.tensor(rows, type));
}
