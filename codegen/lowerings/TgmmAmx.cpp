//===- TgmmAmx.cpp - moe.tgmm on AMX tiles (bf16 weight gradients) --------===//
//
// out[g] = lhs_g^T @ rhs_g, the sum over a group's rows, with tdpbf16ps:
// a 16 x 16 f32 tile of out (16 depth values d x 16 columns n) accumulates
// A (16 d x 32 rows, bf16) times B (32 rows x 16 n, as 16 row pairs x 16
// columns of bf16 pairs). The rows are the sum's dimension, so both
// operands are packed per chunk of rows:
//
//   A  lhs transposed: for 16 row pairs and 16 depth values, each row
//      pair's two rows are interleaved (16 32-bit pairs, one a depth value)
//      and the 16 x 16 block of pairs turned in registers, so that a tile
//      row is one depth value's 16 pairs; [depth tile][step][16][32].
//   B  rhs with rows r and r + 1 interleaved: a tile row is a row pair's 16
//      columns; [column tile][step][16][32] (what the AVX512_BF16 tgmm's
//      panel holds, PackedOperands' pair layout with rows for depth).
//
//   tasks   (group, block of 512 depth values), taken by the workers from an
//           atomic counter; a task packs A once and, for each block of 512
//           columns, B, then runs blocks of 2 x 2 tiles (32 d x 32 n) over
//           the row pairs: column pairs outside, depth pairs inside. A
//           group of more than 1024 rows is summed in equal chunks of at
//           most 1024, and then A is packed per chunk and column block.
//   blocks  four accumulators from zero tiles (or, after a group's first
//           chunk, from the task's f32 block), the four operand tiles
//           loaded before the four products; out through a two-block f32
//           scratch, a row per step of the next block (emitAmxBlocks,
//           shared with the gmm's AMX kind; the steps are a run-time count
//           here, so with fewer than 32 the rest follow the steps).
//   store   every out element by exactly one task (an empty group's: zeros),
//           rounded to bf16 once.
//
// Why: on a Sapphire Rapids, vdpbf16ps (the AVX512_BF16 tgmm) retires at
// half the FP32 FMA rate, and the two weight gradients took 3.1 of a 4.3 s
// bf16 training step at T 4096 top-8 (docs/training.md).
//
// Why by hand: upstream's AMX lowering takes one vector.contract, not a sum
// over a data-dependent row range per expert.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowerings/TgmmAmx.h"
#include "codegen/Emitter.h"
#include "codegen/kernels/AmxTiles.h"
#include "codegen/kernels/GmmKernelPlan.h"
#include "codegen/kernels/GmmScheduler.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTile = 16;         // rows (and f32 columns) of a tile
// Depth tiles of a task: 512 depth values. A task packs the right operand
// once per column block for its depth block, so deeper tasks pack it fewer
// times (T 4096 top-8, the two weight gradients: 256 values 158 + 298 ms,
// 512 148 + 276, 1024 156 + 285: the left operand's panel leaves L2).
constexpr int64_t kDepthTiles = 32;
constexpr int64_t kColumnTiles = 32;  // column tiles of a column block: 512 columns
constexpr int64_t kChunkSteps = 32;   // steps of 16 row pairs in a chunk: 1024 rows
constexpr int64_t kBlock = 2 * kTile; // a block's depth values and columns

class TgmmAmxEmitter {
public:
  TgmmAmxEmitter(Emitter &e, const TgmmAmxOperands &o) : e(e), o(o), b(e.b) {}
  void emit(Operation *anchor);

private:
  struct Chunk {
    Value first, end, steps; // rows [first, end), steps of 16 row pairs
  };
  void task(Value t);
  void packRowsTransposed(const Chunk &c, Value dBase);
  void packColumnPairs(const Chunk &c, Value n0, Value liveTiles);
  /// The blocks of one (column block, chunk): `last` whether the chunk is
  /// the group's last (its sums go out; else into the task's f32 block).
  void blocks(const Chunk &c, Value g, Value dBase, Value n0, Value liveDepthPairs, Value liveColumnPairs,
              Value firstChunk, Value lastChunk);
  void storeRow(Value g, Value dBase, Value n0, Value block, Value depthPairs, Value half, Value i,
                Value lastChunk);
  /// Rows r, r + 1 of `src` from column `col` (16 bf16 lanes, zero past
  /// `limit` and for rows at or past `end`) interleaved: 32 bf16.
  Value rowPair(Value src, Value r, Value end, Value col, Value limit);

  Emitter &e;
  const TgmmAmxOperands &o;
  ImplicitLocOpBuilder &b;
  // The worker's scratch.
  Value aPanel, bPanel, sums;
  AmxBlockScratch blockScratch;
};

Value TgmmAmxEmitter::rowPair(Value src, Value r, Value end, Value col, Value limit) {
  Type bf16 = b.getBF16Type();
  auto lanesType = VectorType::get({kTile}, bf16);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(lanesType, b.getZeroAttr(bf16)));
  Value inside = lanesBelow(e, col, limit, kTile), none = lanesBelow(e, e.index(0), e.index(0), kTile);
  Value lastRow = e.sub(e.dim(src, 0), e.index(1));
  // Clamped so that even a fully masked load addresses a real element.
  Value at = e.min(col, e.sub(limit, e.index(1)));
  auto load = [&](Value row) {
    Value mask = arith::SelectOp::create(b, e.lt(row, end), inside, none);
    return vector::MaskedLoadOp::create(b, lanesType, src, ValueRange{e.max(e.min(row, lastRow), e.index(0)), at},
                                        mask, zeros)
        .getResult();
  };
  return vector::InterleaveOp::create(b, load(r), load(e.add(r, e.index(1))));
}

void TgmmAmxEmitter::packRowsTransposed(const Chunk &c, Value dBase) {
  // Every depth tile of the task (past D: zeros), so that a block's second
  // tile never reads stale pairs.
  Value zero = e.index(0);
  auto pairs32 = VectorType::get({kTile}, b.getI32Type());
  auto bf16x32 = VectorType::get({2 * kTile}, b.getBF16Type());
  e.forLoop(zero, c.steps, [&](Value step) {
    e.forLoop(zero, e.index(kDepthTiles), [&](Value dt) {
      Value d0 = e.add(dBase, e.mul(dt, e.index(kTile)));
      SmallVector<Value> rows;
      for (int64_t j = 0; j < kTile; ++j) {
        Value r = e.add(c.first, e.mul(e.add(e.mul(step, e.index(kTile)), e.index(j)), e.index(2)));
        rows.push_back(
            vector::BitCastOp::create(b, pairs32, rowPair(o.lhs, r, c.end, d0, e.index(o.depth))));
      }
      // rows[j] lane l: pair j of depth value d0 + l; turned, rows[l] lane
      // j: a tile row, depth value d0 + l's 16 pairs.
      transpose16x16(b, rows);
      for (int64_t l = 0; l < kTile; ++l)
        vector::StoreOp::create(b, vector::BitCastOp::create(b, bf16x32, rows[l]), aPanel,
                                ValueRange{dt, step, e.index(l), zero});
    });
  });
}

void TgmmAmxEmitter::packColumnPairs(const Chunk &c, Value n0, Value liveTiles) {
  Value zero = e.index(0);
  e.forLoop(zero, c.steps, [&](Value step) {
    e.forLoop(zero, e.index(kTile), [&](Value j) {
      Value r = e.add(c.first, e.mul(e.add(e.mul(step, e.index(kTile)), j), e.index(2)));
      e.forLoop(zero, liveTiles, [&](Value ct) {
        Value n = e.add(n0, e.mul(ct, e.index(kTile)));
        vector::StoreOp::create(b, rowPair(o.rhs, r, c.end, n, e.index(o.width)), bPanel,
                                ValueRange{ct, step, j, zero});
      });
    });
  });
}

void TgmmAmxEmitter::storeRow(Value g, Value dBase, Value n0, Value block, Value depthPairs, Value half, Value i,
                              Value lastChunk) {
  auto vecType = VectorType::get({kTile}, b.getF32Type());
  Value columnPair = e.divs(block, depthPairs), depthPair = e.rems(block, depthPairs);
  Value dIn = e.add(e.mul(depthPair, e.index(kBlock)), i); // in the task's depth block
  Value d = e.add(dBase, dIn);
  Value nIn = e.mul(columnPair, e.index(kBlock)); // in the column block
  e.ifThen(e.lt(d, e.index(o.depth)), [&] {
    Value v0 = vector::LoadOp::create(b, vecType, blockScratch.sums, ValueRange{half, i, e.index(0)});
    Value v1 = vector::LoadOp::create(b, vecType, blockScratch.sums, ValueRange{half, i, e.index(kTile)});
    auto last = scf::IfOp::create(b, TypeRange{}, lastChunk, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    // The group's sums: out, rounded once, masked to the columns that exist.
    b.setInsertionPoint(last.thenBlock()->getTerminator());
    Type outElement = cast<MemRefType>(o.out.getType()).getElementType();
    SmallVector<Value, 2> halves = {v0, v1};
    for (auto [half, v] : llvm::enumerate(halves)) {
      Value n = e.add(e.add(n0, nIn), e.index(half * kTile));
      Value value = v;
      if (!outElement.isF32())
        value = arith::TruncFOp::create(b, VectorType::get({kTile}, outElement), value);
      vector::MaskedStoreOp::create(b, o.out, ValueRange{g, d, n}, lanesBelow(e, n, e.index(o.width), kTile),
                                    value);
    }
    // A partial sum: the task's f32 block, which the next chunk starts from.
    b.setInsertionPoint(last.elseBlock()->getTerminator());
    vector::StoreOp::create(b, v0, sums, ValueRange{dIn, nIn});
    vector::StoreOp::create(b, v1, sums, ValueRange{dIn, e.add(nIn, e.index(kTile))});
  });
}

void TgmmAmxEmitter::blocks(const Chunk &c, Value g, Value dBase, Value n0, Value liveDepthPairs,
                            Value liveColumnPairs, Value firstChunk, Value lastChunk) {
  Value zero = e.index(0), one = e.index(1), two = e.index(2);
  auto operandType = amx::TileType::get({kTile, 2 * kTile}, b.getBF16Type());
  auto accType = amx::TileType::get({kTile, kTile}, b.getF32Type());
  // Blocks: column pairs outside, depth pairs inside; a block's pairs are
  // set before its steps (initial), which read them.
  Value columnPair, depthPair;
  // The group's first chunk starts from zero tiles, a later one from the
  // partial sums the chunk before left in the task's f32 block.
  auto initial = [&](Value block) -> SmallVector<Value> {
    columnPair = e.divs(block, liveDepthPairs), depthPair = e.rems(block, liveDepthPairs);
    auto from = scf::IfOp::create(b, TypeRange{accType, accType, accType, accType}, firstChunk,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(from.thenBlock());
    scf::YieldOp::create(b, amxZeroAccumulators(e, blockScratch));
    b.setInsertionPointToStart(from.elseBlock());
    Value dIn = e.mul(depthPair, e.index(kBlock)), nIn = e.mul(columnPair, e.index(kBlock));
    SmallVector<Value> partial;
    for (auto [dd, nn] : {std::pair{0, 0}, {0, 1}, {1, 0}, {1, 1}})
      partial.push_back(amx::TileLoadOp::create(
          b, accType, sums, ValueRange{e.add(dIn, e.index(dd * kTile)), e.add(nIn, e.index(nn * kTile))}));
    scf::YieldOp::create(b, partial);
    return from.getResults();
  };
  auto step = [&](Value, Value s, ValueRange in) -> SmallVector<Value> {
    Value dt0 = e.mul(depthPair, two), dt1 = e.add(dt0, one);
    Value ct0 = e.mul(columnPair, two), ct1 = e.add(ct0, one);
    Value a0 = amx::TileLoadOp::create(b, operandType, aPanel, ValueRange{dt0, s, zero, zero});
    Value a1 = amx::TileLoadOp::create(b, operandType, aPanel, ValueRange{dt1, s, zero, zero});
    Value b0 = amx::TileLoadOp::create(b, operandType, bPanel, ValueRange{ct0, s, zero, zero});
    Value b1 = amx::TileLoadOp::create(b, operandType, bPanel, ValueRange{ct1, s, zero, zero});
    return {amx::TileMulFOp::create(b, accType, a0, b0, in[0]), amx::TileMulFOp::create(b, accType, a0, b1, in[1]),
            amx::TileMulFOp::create(b, accType, a1, b0, in[2]), amx::TileMulFOp::create(b, accType, a1, b1, in[3])};
  };
  emitAmxBlocks(e, blockScratch, e.mul(liveColumnPairs, liveDepthPairs), c.steps, initial, step,
                [&](Value block, Value half, Value i) {
                  storeRow(g, dBase, n0, block, liveDepthPairs, half, i, lastChunk);
                });
}

void TgmmAmxEmitter::task(Value t) {
  Value zero = e.index(0), one = e.index(1);
  int64_t depthBlocks = llvm::divideCeil(o.depth, kDepthTiles * kTile);
  // A group's depth blocks one after another: its rows stay in cache.
  Value g = e.divs(t, e.index(depthBlocks));
  Value dBase = e.mul(e.rems(t, e.index(depthBlocks)), e.index(kDepthTiles * kTile));
  Value liveDepthTiles = e.min(e.index(kDepthTiles), e.divs(e.add(e.sub(e.index(o.depth), dBase),
                                                                  e.index(kTile - 1)),
                                                            e.index(kTile)));
  Value liveDepthPairs = e.divs(e.add(liveDepthTiles, one), e.index(2));
  Value first = e.load(o.firstRow, {g}), end = e.load(o.endRow, {g});
  Value rows = e.sub(end, first);
  // Equal chunks of at most kChunkSteps steps (32 rows a step); one for
  // an empty group, whose zero sums are stored.
  int64_t chunkRows = kChunkSteps * 2 * kTile;
  Value chunks = e.max(one, e.divs(e.add(rows, e.index(chunkRows - 1)), e.index(chunkRows)));
  Value perChunk = e.divs(e.add(rows, e.sub(chunks, one)), chunks);
  auto chunkAt = [&](Value k) {
    Value cFirst = e.add(first, e.mul(k, perChunk));
    Value cEnd = e.min(e.add(cFirst, perChunk), end);
    Value steps = e.divs(e.add(e.max(e.sub(cEnd, cFirst), zero), e.index(2 * kTile - 1)), e.index(2 * kTile));
    return Chunk{cFirst, cEnd, steps};
  };
  Value several = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, chunks, one);
  // One chunk (the usual case): A once for every column block.
  e.ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, chunks, one),
           [&] { packRowsTransposed(chunkAt(zero), dBase); });
  int64_t columnBlocks = llvm::divideCeil(o.width, kColumnTiles * kTile);
  e.forLoop(zero, e.index(columnBlocks), [&](Value cb) {
    Value n0 = e.mul(cb, e.index(kColumnTiles * kTile));
    Value liveColumnTiles = e.min(e.index(kColumnTiles),
                                  e.divs(e.add(e.sub(e.index(o.width), n0), e.index(kTile - 1)), e.index(kTile)));
    Value liveColumnPairs = e.divs(e.add(liveColumnTiles, one), e.index(2));
    e.forLoop(zero, chunks, [&](Value k) {
      Chunk c = chunkAt(k);
      e.ifThen(several, [&] { packRowsTransposed(c, dBase); });
      // Both tiles of the last column pair (past N: zeros).
      packColumnPairs(c, n0, e.mul(liveColumnPairs, e.index(2)));
      blocks(c, g, dBase, n0, liveDepthPairs, liveColumnPairs,
             arith::CmpIOp::create(b, arith::CmpIPredicate::eq, k, zero),
             arith::CmpIOp::create(b, arith::CmpIPredicate::eq, k, e.sub(chunks, one)));
    });
  });
}

void TgmmAmxEmitter::emit(Operation *anchor) {
  Value zero = e.index(0), one = e.index(1);
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  // The scratch holds the largest chunk of any group.
  Value maxRows = e.forLoop(zero, o.groups, ValueRange{zero}, [&](Value g, ValueRange m) -> SmallVector<Value> {
                     return {e.max(m[0], e.sub(e.load(o.endRow, {g}), e.load(o.firstRow, {g})))};
                   })[0];
  Value maxSteps = e.max(one, e.min(e.index(kChunkSteps), e.divs(e.add(maxRows, e.index(2 * kTile - 1)),
                                                                  e.index(2 * kTile))));
  int64_t depthBlocks = llvm::divideCeil(o.depth, kDepthTiles * kTile);
  emitWorkerTasks(e, e.mul(o.groups, e.index(depthBlocks)), anchor, [&] {
    aPanel = e.alloc({kDepthTiles, ShapedType::kDynamic, kTile, 2 * kTile}, bf16, {maxSteps});
    bPanel = e.alloc({kColumnTiles, ShapedType::kDynamic, kTile, 2 * kTile}, bf16, {maxSteps});
    sums = e.alloc({kDepthTiles * kTile, kColumnTiles * kTile}, f32, {});
    blockScratch = allocAmxBlockScratch(e, f32);
  }, [&](Value t, Value) {
    // The task's tile code in a function of its own (AmxTiles.h).
    auto region = scf::IfOp::create(b, TypeRange{}, arith::ConstantOp::create(b, b.getBoolAttr(true)),
                                    /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(region.thenBlock()->getTerminator());
    task(t);
    outlineTileCode(region.getThenRegion(), anchor);
  });
}
} // namespace

void mlir::moe::codegen::emitTgmmAmx(Emitter &e, const TgmmAmxOperands &o, Operation *anchor) {
  TgmmAmxEmitter(e, o).emit(anchor);
}
