//===- TgmmMicrokernel.cpp - the fast transposed grouped matmul -----------===//
//
// moe.tgmm, out[e] = lhs_e^T @ rhs_e (the backward's weight gradients), as
// register tiles in the vector dialect:
//
//   tile   kDepthTile depth values d x kVectors * 16 columns n of one expert:
//          24 vector<16xf32> accumulators over the group's rows r, each step
//          broadcasting lhs[r, d + i] and loading rhs[r, n .. n + 63]; no
//          packing: both operands are read along their rows.
//   tasks  (column block, expert, depth tile) flattened with the depth tile
//          innermost, so consecutive tiles of one thread reuse the expert's
//          rhs block from L2, and the static split of the parallel loop
//          gives every thread the same share of every expert: a hot expert
//          is spread over both cores, not one expert per thread.
//   store  every output element by exactly one tile; an empty group's tiles
//          store zeros.
//
// Why by hand: the reduction runs over a data-dependent row range per
// expert, which upstream's linalg tiling cannot express.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/GmmKernelPlan.h"
#include "codegen/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
constexpr int64_t kDepthTile = 6; // depth values (output rows) of a tile
constexpr int64_t kVectors = 4;   // 16-column vectors of a tile
} // namespace

void mlir::moe::codegen::lowerTgmmMicrokernel(RewriterBase &rewriter, TgmmOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value lhs = e.unitStrideBuffer(op.getLhs());
  Value rhs = e.unitStrideBuffer(op.getRhs());
  Value sizes = e.buffer(op.getGroupSizes());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t depth = type.getDimSize(1), width = type.getDimSize(2);
  Type outElement = type.getElementType();
  Value zero = e.index(0);
  Value rowCount = e.min(e.dim(lhs, 0), e.dim(rhs, 0));
  Value out = e.alloc(type, {});

  // Group g is rows [firstRow[g], endRow[g]).
  Value groups = e.dim(sizes, 0);
  Value firstRow = e.alloc({ShapedType::kDynamic}, b.getIndexType(), {groups});
  Value endRow = e.alloc({ShapedType::kDynamic}, b.getIndexType(), {groups});
  forEachGroup(e, sizes, rowCount, [&](Value g, Value first, Value end) {
    e.store(first, firstRow, {g});
    e.store(end, endRow, {g});
  });

  int64_t columns = kVectors * kLanes;
  int64_t depthTiles = (depth + kDepthTile - 1) / kDepthTile;
  int64_t columnBlocks = (width + columns - 1) / columns;
  auto vecType = VectorType::get({kLanes}, b.getF32Type());
  Type rhsElement = cast<MemRefType>(rhs.getType()).getElementType();
  auto loadType = VectorType::get({kLanes}, rhsElement);
  Value passThru = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(rhsElement)));
  Value zeroVector = arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, 0.0f));
  Value cWidth = e.index(width);

  Value tasks = e.mul(e.mul(e.index(columnBlocks), groups), e.index(depthTiles));
  e.parallelFor(zero, tasks, [&](Value task) {
    Value dt = e.rems(task, e.index(depthTiles));
    Value rest = e.divs(task, e.index(depthTiles));
    Value g = e.rems(rest, groups);
    Value cb = e.divs(rest, groups);
    Value d0 = e.mul(dt, e.index(kDepthTile));
    Value n0 = e.mul(cb, e.index(columns));
    // Depth values past D repeat the last one: computed, never stored.
    SmallVector<Value> d, cols, masks;
    for (int64_t i = 0; i < kDepthTile; ++i)
      d.push_back(e.min(e.add(d0, e.index(i)), e.index(depth - 1)));
    for (int64_t v = 0; v < kVectors; ++v) {
      cols.push_back(e.add(n0, e.index(v * kLanes)));
      masks.push_back(lanesBelow(e, cols.back(), cWidth, kLanes));
    }
    SmallVector<Value> init(kDepthTile * kVectors, zeroVector);
    SmallVector<Value> acc = e.forLoop(
        e.load(firstRow, {g}), e.load(endRow, {g}), init,
        [&](Value r, ValueRange in) -> SmallVector<Value> {
          SmallVector<Value> w;
          for (int64_t v = 0; v < kVectors; ++v) {
            Value loaded = vector::MaskedLoadOp::create(b, loadType, rhs, ValueRange{r, cols[v]},
                                                        masks[v], passThru);
            w.push_back(rhsElement.isF32() ? loaded : arith::ExtFOp::create(b, vecType, loaded).getResult());
          }
          SmallVector<Value> next(in.begin(), in.end());
          for (int64_t i = 0; i < kDepthTile; ++i) {
            Value a = vector::BroadcastOp::create(b, vecType, e.loadF32(lhs, {r, d[i]}));
            for (int64_t v = 0; v < kVectors; ++v)
              next[i * kVectors + v] = vector::FMAOp::create(b, a, w[v], next[i * kVectors + v]);
          }
          return next;
        });
    for (int64_t i = 0; i < kDepthTile; ++i) {
      e.ifThen(e.lt(e.add(d0, e.index(i)), e.index(depth)), [&] {
        for (int64_t v = 0; v < kVectors; ++v) {
          Value value = acc[i * kVectors + v];
          if (!outElement.isF32())
            value = arith::TruncFOp::create(b, VectorType::get({kLanes}, outElement), value);
          vector::MaskedStoreOp::create(b, out, ValueRange{g, d[i], cols[v]}, masks[v], value);
        }
      });
    }
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}
