//===- GmmLowering.cpp - moe.gmm and moe.tgmm to loops --------------------===//
//
// The reference lowering of the grouped matmuls: a row at a time, an f32
// accumulator row, the weight rows streamed in order so the innermost loop is
// contiguous. Rows are spread over threads through a row-to-group map, so a
// hot expert's rows split like any others. Correct for every shape and group
// layout (empty groups, sizes past the row count, rows outside every group);
// the fast tiled/microkernel strategy replaces this file's functions, nothing
// else. The int8 gmm quantizes each row as it reads it and accumulates in i32
// (QuantizeLowering.cpp has the arithmetic).
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/lowerings/Lowerings.h"

#include <tuple>

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

void mlir::moe::codegen::forEachGroup(Emitter &e, Value sizes, Value rowCount,
                                      function_ref<void(Value, Value, Value)> body) {
  Value zero = e.index(0);
  Value groups = e.dim(sizes, 0);
  e.forLoop(zero, groups, ValueRange{zero},
            [&](Value g, ValueRange acc) -> SmallVector<Value> {
              Value size = e.max(e.toIndex(e.load(sizes, {g})), zero);
              Value start = acc[0];
              Value end = e.add(start, size);
              body(g, e.min(start, rowCount), e.min(end, rowCount));
              return {end};
            });
}

std::pair<Value, Value> mlir::moe::codegen::groupBounds(Emitter &e, Value sizes, Value rowCount) {
  Value groups = e.dim(sizes, 0);
  Value firstRow = e.alloc({ShapedType::kDynamic}, e.b.getIndexType(), {groups});
  Value endRow = e.alloc({ShapedType::kDynamic}, e.b.getIndexType(), {groups});
  forEachGroup(e, sizes, rowCount, [&](Value g, Value first, Value end) {
    e.store(first, firstRow, {g});
    e.store(end, endRow, {g});
  });
  return {firstRow, endRow};
}

void mlir::moe::codegen::lowerGmm(RewriterBase &rewriter, GmmOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value lhs = e.buffer(op.getLhs());
  Value rhs = e.buffer(op.getRhs());
  Value sizes = e.buffer(op.getGroupSizes());
  Value scales = op.isQuantized() ? e.buffer(op.getRhsScales()) : Value();
  Value bias = op.getBias() ? e.buffer(op.getBias()) : Value();
  // The products of row r's column n plus its group's bias, if any.
  auto withBias = [&](Value v, Value g, Value n) {
    return bias ? e.fadd(v, e.loadF32(bias, {g, n})) : v;
  };
  bool transposed = op.getTransposeRhs();
  auto type = cast<RankedTensorType>(op.getType());
  Value rowCount = e.dim(lhs, 0), depth = e.dim(lhs, 1);
  int64_t width = type.getDimSize(1);
  Value cWidth = e.index(width), zero = e.index(0);
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(rowCount);
  Value out = e.alloc(type, dyn);
  e.fill(out, e.zero(type.getElementType()));
  // The group of every row, -1 for rows outside all groups.
  Value groupOf = e.alloc({ShapedType::kDynamic}, b.getIndexType(), {rowCount});
  e.fill(groupOf, e.index(-1));
  forEachGroup(e, sizes, rowCount, [&](Value g, Value first, Value end) {
    e.forLoop(first, end, [&](Value r) { e.store(g, groupOf, {r}); });
  });

  e.parallelFor(zero, rowCount, [&](Value r) {
    Value g = e.load(groupOf, {r});
    e.ifThen(e.ge(g, zero), [&] {
      if (transposed) {
        // out[r, n] = sum_d lhs[r, d] * rhs[g, n, d]: contiguous dot products.
        e.forLoop(zero, cWidth, [&](Value n) {
          Value dot = e.forLoop(zero, depth, ValueRange{e.f32(0)},
                                [&](Value d, ValueRange a) -> SmallVector<Value> {
                                  return {e.fadd(a[0], e.fmul(e.loadF32(lhs, {r, d}),
                                                              e.loadF32(rhs, {g, n, d})))};
                                })[0];
          e.storeF32(dot, out, {r, n});
        });
        return;
      }
      if (op.isQuantized()) {
        // The row quantized as it is read; acc[:] = sum_d q[r, d] *
        // rhs[g, d, :] in i32, then both scales.
        Value maxAbs = rowAbsMax(e, lhs, r, depth);
        Value reciprocal = int8Reciprocal(e, maxAbs), rowScale = int8Scale(e, maxAbs);
        Type i32 = b.getI32Type();
        Value acc = e.allocaScratch({width}, i32);
        e.fill(acc, e.i32(0));
        e.forLoop(zero, depth, [&](Value d) {
          Value q = arith::FPToSIOp::create(b, i32, quantizeInt8(e, e.loadF32(lhs, {r, d}), reciprocal));
          e.forLoop(zero, cWidth, [&](Value n) {
            Value w = arith::ExtSIOp::create(b, i32, e.load(rhs, {g, d, n}));
            e.store(arith::AddIOp::create(b, e.load(acc, {n}), arith::MulIOp::create(b, q, w)), acc, {n});
          });
        });
        e.forLoop(zero, cWidth, [&](Value n) {
          Value sum = arith::SIToFPOp::create(b, b.getF32Type(), e.load(acc, {n}));
          Value scale = e.fmul(rowScale, weightScale(e, scales, g, n));
          e.storeF32(withBias(e.fmul(sum, scale), g, n), out, {r, n});
        });
        return;
      }
      // acc[:] = sum_d lhs[r, d] * rhs[g, d, :]: rows of rhs in order.
      Value acc = e.allocaScratch({width}, b.getF32Type());
      e.fill(acc, e.f32(0));
      e.forLoop(zero, depth, [&](Value d) {
        Value a = e.loadF32(lhs, {r, d});
        e.forLoop(zero, cWidth, [&](Value n) {
          e.store(e.fadd(e.load(acc, {n}), e.fmul(a, e.loadF32(rhs, {g, d, n}))), acc, {n});
        });
      });
      e.forLoop(zero, cWidth, [&](Value n) { e.storeF32(withBias(e.load(acc, {n}), g, n), out, {r, n}); });
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}

void mlir::moe::codegen::lowerTgmm(RewriterBase &rewriter, TgmmOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value lhs = e.buffer(op.getLhs());
  Value rhs = e.buffer(op.getRhs());
  Value sizes = e.buffer(op.getGroupSizes());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t depth = type.getDimSize(1), width = type.getDimSize(2);
  Value cDepth = e.index(depth), cWidth = e.index(width), zero = e.index(0);
  Value rowCount = e.min(e.dim(lhs, 0), e.dim(rhs, 0));
  Value out = e.alloc(type, {});
  // Group bounds first, then one group per parallel iteration (each writes
  // only its own out[g]).
  Value groups = e.dim(sizes, 0);
  // Named values, not a structured binding: the loop bodies capture them
  // (a C++20 feature for bindings).
  Value firstRow, endRow;
  std::tie(firstRow, endRow) = groupBounds(e, sizes, rowCount);
  e.parallelFor(zero, groups, [&](Value g) {
    // acc = lhs_g^T @ rhs_g, one outer product per row of the group. On the
    // heap: D x N floats can exceed a thread's stack.
    Value acc = e.alloc({depth, width}, b.getF32Type(), {});
    e.fill(acc, e.f32(0));
    e.forLoop(e.load(firstRow, {g}), e.load(endRow, {g}), [&](Value r) {
      e.forLoop(zero, cDepth, [&](Value d) {
        Value a = e.loadF32(lhs, {r, d});
        e.forLoop(zero, cWidth, [&](Value n) {
          e.store(e.fadd(e.load(acc, {d, n}), e.fmul(a, e.loadF32(rhs, {r, n}))), acc, {d, n});
        });
      });
    });
    e.forLoop(zero, cDepth, [&](Value d) {
      e.forLoop(zero, cWidth, [&](Value n) {
        e.storeF32(e.load(acc, {d, n}), out, {g, d, n});
      });
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}
