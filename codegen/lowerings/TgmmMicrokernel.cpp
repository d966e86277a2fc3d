//===- TgmmMicrokernel.cpp - the fast transposed grouped matmul -----------===//
//
// moe.tgmm, out[e] = lhs_e^T @ rhs_e (the backward's weight gradients), as
// register tiles in the vector dialect:
//
//   tasks  (column block of 128, expert, depth block of kDepthBlock)
//          with the depth block innermost, so that the static
//          split of the parallel loop gives every thread a share of every
//          expert (a hot expert is spread over both cores, not one expert
//          per thread).
//   chunks a task walks its group's rows kRowChunk at a time: the chunk's
//          rhs[r, block's columns] are packed into a contiguous stack panel,
//          and so are the chunk's lhs[r, block's depth values]; then every
//          tile of the block runs over them. Read in place, those rows sit
//          one row stride apart (a multiple of 4 KiB for common widths), all
//          in a few L1 sets: each tile missed on them again. The blocks are
//          as large as L2 allows because every lhs value is packed once per
//          column block and every rhs value once per depth block: 64 x 48
//          blocks packed each 22-44 times and took half the kernel's time;
//          128 x 192 blocks take it from 4.7 s to 3.1 s at the seeds' shape
//          (A = 32768 rows, 2048 x 1408, 60 experts, 2 threads; 256 columns
//          or 384 depth values per task were slower again: the block
//          accumulator leaves L2).
//   tile   kDepthTile depth values d x kVectors * 16 columns (6 x 64
//          with AVX-512, 6 x 16 with AVX2: tileFor): 24 (6)
//          vector<16xf32> accumulators over the chunk's rows, each step
//          broadcasting lhs[r, d + i] and loading one panel row; the tile
//          starts from and returns to an f32 block accumulator on the stack
//          (so bf16 gradients are rounded once, at the end).
//   store  every output element by exactly one task; an empty group's
//          tasks store zeros.
//
// Why by hand: the reduction runs over a data-dependent row range per
// expert, which upstream's linalg tiling cannot express.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernelPlan.h"
#include "codegen/lowerings/Lowerings.h"

#include <tuple>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
constexpr int64_t kBlockVectors = 8;  // 16-column vectors of a task's block (128 columns)
constexpr int64_t kDepthBlock = 192; // depth values of a task

/// The register tile: depthTile output rows x vectors 16-column vectors,
/// as many accumulators as the register file holds beside a panel row's
/// vectors and a broadcast. AVX-512's 32 vectors: 6 x 4 (24 + 4 + 1).
/// AVX2's 16 ymm hold 8 16-lane vectors, where 6 x 4 spilled most of its
/// accumulators: 6 x 1 (12 ymm accumulators, a panel row's 2, a
/// broadcast). Measured on AMD EPYC znver3, 2 threads, a tgmm of 4080
/// rows (60 experts of 68) x 1408 x 2048, medians of 7: 6 x 4 670 ms,
/// 6 x 1 360-413, 2 x 2 451-485, 4 x 1 496-535, 4 x 2 573-631, 3 x 2
/// 605-661.
struct TgmmTile {
  int64_t depthTile, vectors;
};
TgmmTile tileFor(int64_t vectorRegisters) {
  if (vectorRegisters >= 32)
    return {6, 4};
  return {6, 1};
}
// Rows of a packed panel: the rhs panel (32 KiB; one tile's columns of it,
// 64 (16 KiB) or 16 with AVX2, in L1 while the tiles of the block run), the
// lhs panel (48 KiB) and the block accumulator (96 KiB) stay in L2 together.
constexpr int64_t kRowChunk = 64;
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
  // Named values, not a structured binding: the loop bodies capture them
  // (a C++20 feature for bindings).
  Value firstRow, endRow;
  std::tie(firstRow, endRow) = groupBounds(e, sizes, rowCount);

  auto target = op->getParentOfType<ModuleOp>()->getAttrOfType<TargetAttr>(kTargetAttrName);
  TgmmTile tile = tileFor(target ? target.getVectorRegisters() : 32);
  const int64_t kDepthTile = tile.depthTile, kVectors = tile.vectors;
  static_assert(kDepthBlock % 6 == 0 && kBlockVectors % 4 == 0, "tileFor's tiles divide the block");
  const int64_t kSubBlocks = kBlockVectors / kVectors; // tile-wide column blocks of a task
  int64_t tileColumns = kVectors * kLanes;
  int64_t columns = kBlockVectors * kLanes;
  int64_t columnBlocks = (width + columns - 1) / columns;
  auto vecType = VectorType::get({kLanes}, b.getF32Type());
  Type rhsElement = cast<MemRefType>(rhs.getType()).getElementType();
  auto loadType = VectorType::get({kLanes}, rhsElement);
  Value passThru = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(rhsElement)));
  Type lhsElement = cast<MemRefType>(lhs.getType()).getElementType();
  auto lhsLoadType = VectorType::get({kLanes}, lhsElement);
  Value lhsPassThru =
      arith::ConstantOp::create(b, DenseElementsAttr::get(lhsLoadType, b.getZeroAttr(lhsElement)));
  Value zeroVector = arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, 0.0f));
  Value cWidth = e.index(width);

  int64_t depthBlocks = (depth + kDepthBlock - 1) / kDepthBlock;
  Value tasks = e.mul(e.mul(e.index(columnBlocks), groups), e.index(depthBlocks));
  e.parallelFor(zero, tasks, [&](Value task) {
    Value db = e.rems(task, e.index(depthBlocks));
    Value rest = e.divs(task, e.index(depthBlocks));
    Value g = e.rems(rest, groups);
    Value cb = e.divs(rest, groups);
    Value dBase = e.mul(db, e.index(kDepthBlock));
    Value n0 = e.mul(cb, e.index(columns));
    SmallVector<Value> cols, masks;
    for (int64_t v = 0; v < kBlockVectors; ++v) {
      cols.push_back(e.add(n0, e.index(v * kLanes)));
      masks.push_back(lanesBelow(e, cols.back(), cWidth, kLanes));
    }
    Value panel = e.allocaScratch({kRowChunk, columns}, b.getF32Type());
    Value block = e.allocaScratch({kDepthBlock, columns}, b.getF32Type());
    Value lhsPanel = e.allocaScratch({kRowChunk, kDepthBlock}, b.getF32Type());
    SmallVector<Value> depthCols, depthMasks;
    for (int64_t q = 0; q < kDepthBlock / kLanes; ++q) {
      depthCols.push_back(e.add(dBase, e.index(q * kLanes)));
      depthMasks.push_back(lanesBelow(e, depthCols.back(), e.index(depth), kLanes));
    }
    e.forLoop(zero, e.index(kDepthBlock), [&](Value i) {
      for (int64_t v = 0; v < kBlockVectors; ++v)
        vector::StoreOp::create(b, zeroVector, block, ValueRange{i, e.index(v * kLanes)});
    });
    Value first = e.load(firstRow, {g}), end = e.load(endRow, {g});
    e.forLoop(first, end, e.index(kRowChunk), {}, [&](Value c, ValueRange) -> SmallVector<Value> {
      Value n = e.min(e.index(kRowChunk), e.sub(end, c));
      // The chunk's block columns, contiguous (columns past N read as zero).
      e.forLoop(zero, n, [&](Value r) {
        Value row = e.add(c, r);
        for (int64_t v = 0; v < kBlockVectors; ++v) {
          Value loaded = vector::MaskedLoadOp::create(b, loadType, rhs, ValueRange{row, cols[v]},
                                                      masks[v], passThru);
          if (!rhsElement.isF32())
            loaded = arith::ExtFOp::create(b, vecType, loaded);
          vector::StoreOp::create(b, loaded, panel, ValueRange{r, e.index(v * kLanes)});
        }
        // And the block's depth values of each row, contiguous: read in
        // place they too would be a row stride apart (depth past D: zero).
        for (size_t q = 0; q < depthCols.size(); ++q) {
          Value loaded = vector::MaskedLoadOp::create(b, lhsLoadType, lhs, ValueRange{row, depthCols[q]},
                                                      depthMasks[q], lhsPassThru);
          if (!lhsElement.isF32())
            loaded = arith::ExtFOp::create(b, vecType, loaded);
          vector::StoreOp::create(b, loaded, lhsPanel, ValueRange{r, e.index(int64_t(q) * kLanes)});
        }
      });
      for (int64_t sub = 0; sub < kSubBlocks; ++sub) {
        // A sub-block wholly past N (narrow outputs) has nothing to store.
        int64_t base = sub * tileColumns;
        e.ifThen(e.lt(e.add(n0, e.index(base)), cWidth), [&] {
          e.forLoop(zero, e.index(kDepthBlock / kDepthTile), [&](Value t) {
            Value t0 = e.mul(t, e.index(kDepthTile));
            Value d0 = e.add(dBase, t0);
            e.ifThen(e.lt(d0, e.index(depth)), [&] {
              // Depth values past D are zero in the panel: computed, never stored.
              SmallVector<Value> init;
              for (int64_t i = 0; i < kDepthTile; ++i) {
                for (int64_t v = 0; v < kVectors; ++v)
                  init.push_back(vector::LoadOp::create(b, vecType, block,
                                                        ValueRange{e.add(t0, e.index(i)), e.index(base + v * kLanes)}));
              }
              SmallVector<Value> acc = e.forLoop(
                  zero, n, init, [&](Value r, ValueRange in) -> SmallVector<Value> {
                    SmallVector<Value> w;
                    for (int64_t v = 0; v < kVectors; ++v)
                      w.push_back(vector::LoadOp::create(b, vecType, panel, ValueRange{r, e.index(base + v * kLanes)}));
                    SmallVector<Value> next(in.begin(), in.end());
                    for (int64_t i = 0; i < kDepthTile; ++i) {
                      Value a = vector::BroadcastOp::create(
                          b, vecType, e.load(lhsPanel, {r, e.add(t0, e.index(i))}));
                      for (int64_t v = 0; v < kVectors; ++v)
                        next[i * kVectors + v] = vector::FMAOp::create(b, a, w[v], next[i * kVectors + v]);
                    }
                    return next;
                  });
              for (int64_t i = 0; i < kDepthTile; ++i)
                for (int64_t v = 0; v < kVectors; ++v)
                  vector::StoreOp::create(b, acc[i * kVectors + v], block,
                                          ValueRange{e.add(t0, e.index(i)), e.index(base + v * kLanes)});
            });
          });
        });
      }
      return {};
    });
    // The block to the output, once (rounded there when bf16). Masked only
    // where the block passes N: AVX2's masked store (vmaskmovps) is
    // microcoded on AMD, and with few rows per expert the output is a large
    // part of the work (a 192 x 128 block for 68 rows' products).
    auto storeBlock = [&](bool masked) {
      e.forLoop(zero, e.min(e.index(kDepthBlock), e.sub(e.index(depth), dBase)), [&](Value i) {
        Value d = e.add(dBase, i);
        for (int64_t v = 0; v < kBlockVectors; ++v) {
          Value value = vector::LoadOp::create(b, vecType, block, ValueRange{i, e.index(v * kLanes)});
          if (!outElement.isF32())
            value = arith::TruncFOp::create(b, VectorType::get({kLanes}, outElement), value);
          if (masked)
            vector::MaskedStoreOp::create(b, out, ValueRange{g, d, cols[v]}, masks[v], value);
          else
            vector::StoreOp::create(b, value, out, ValueRange{g, d, cols[v]});
        }
      });
    };
    auto whole = scf::IfOp::create(b, TypeRange{}, e.lt(e.add(n0, e.index(columns - 1)), cWidth),
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(whole.thenBlock()->getTerminator());
      storeBlock(/*masked=*/false);
      b.setInsertionPoint(whole.elseBlock()->getTerminator());
      storeBlock(/*masked=*/true);
    }
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}
