//===- GmmAmxTask.cpp - the AMX task of the fast grouped matmul -----------===//
//
// bf16 x bf16 -> f32 on AMX tile registers (tdpbf16ps: a 16x32 bf16 tile
// times a 32x16 bf16 tile, the latter in the pair layout of the packed
// weight block, GmmBf16Tasks.cpp, accumulated into a 16x16 f32 tile):
//
//   rows     the task's rows (through the pack's permutation when gathered)
//            are packed into 16-row x 32-depth tiles, zero past D and past
//            the last row, once per task.
//   product  2 row tiles x 2 column tiles: four accumulators stay in tile
//            registers over the whole depth (8 tile registers: 2 + 2 + 4).
//   epilogue the accumulators go through a 32x32 f32 scratch to the shared
//            column-pair store (SwiGLU, padding rows, bf16 rounding).
//
// Why by hand: upstream's VectorToAMX maps one vector.contract to tiles, but
// not a grouped, gathered operand, a weight cache across tasks or the fused
// epilogue; the amx dialect's tile ops are the building blocks used here.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/GmmBf16Tasks.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTileRows = 16;  // rows of every tile
constexpr int64_t kTileDepth = 32; // bf16 depth elements of a tile row
constexpr int64_t kTileCols = 16;  // f32 columns of an accumulator tile
constexpr int64_t kLanes = 16;
} // namespace

Value Bf16GmmTasks::amxRowBlockFor(Value groupRows) {
  Value cap = e.index(kMaxAmxRows), granule = e.index(kAmxRowGranule), one = e.index(1);
  auto ceilDiv = [&](Value a, Value d) { return e.divs(e.add(a, e.sub(d, one)), d); };
  Value blocks = e.max(ceilDiv(groupRows, cap), one);
  return e.mul(ceilDiv(ceilDiv(groupRows, blocks), granule), granule);
}

void Bf16GmmTasks::packAmxRows(Value r0, Value r1, Value rowsPadded, Value packed) {
  auto &b = e.b;
  Type bf16 = b.getBF16Type();
  auto rowType = VectorType::get({kTileDepth}, bf16);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(rowType, b.getZeroAttr(bf16)));
  Value zero = e.index(0), steps = e.index(paddedDepth / kTileDepth);
  e.forLoop(zero, rowsPadded, [&](Value i) {
    Value r = e.add(r0, i);
    Value tile = e.divs(i, e.index(kTileRows)), inTile = e.rems(i, e.index(kTileRows));
    auto rowIf = scf::IfOp::create(b, TypeRange{}, e.lt(r, r1), /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rowIf.thenBlock()->getTerminator());
    Value src = r;
    if (p.perm) {
      Value slot = e.toIndex(e.load(p.perm, {r}));
      src = e.divs(e.max(slot, zero), e.index(p.topK));
    }
    e.forLoop(zero, steps, [&](Value ks) {
      Value k = e.mul(ks, e.index(kTileDepth));
      Value mask = lanesBelow(e, k, e.index(p.depth), kTileDepth);
      Value v = vector::MaskedLoadOp::create(b, rowType, p.lhs, ValueRange{src, k}, mask, zeros);
      vector::StoreOp::create(b, v, packed, ValueRange{tile, ks, inTile, zero});
    });
    // Padding rows: zeros, so that they cannot carry NaNs into anything.
    b.setInsertionPoint(rowIf.elseBlock()->getTerminator());
    e.forLoop(zero, steps, [&](Value ks) {
      vector::StoreOp::create(b, zeros, packed, ValueRange{tile, ks, inTile, zero});
    });
  });
}

void Bf16GmmTasks::amxTileProduct(Value rowPair, Value colPair, const Scratch &s) {
  auto &b = e.b;
  auto operandType = amx::TileType::get({kTileRows, kTileDepth}, b.getBF16Type());
  auto accType = amx::TileType::get({kTileRows, kTileCols}, b.getF32Type());
  Value zero = e.index(0), one = e.index(1), two = e.index(2);
  Value rt0 = e.mul(rowPair, two), rt1 = e.add(rt0, one);
  Value ct0 = e.mul(colPair, two), ct1 = e.add(ct0, one);
  Value z = amx::TileZeroOp::create(b, accType);
  SmallVector<Value> acc = e.forLoop(
      zero, e.index(paddedDepth / kTileDepth), ValueRange{z, z, z, z},
      [&](Value ks, ValueRange c) -> SmallVector<Value> {
        Value kp = e.mul(ks, e.index(kTileRows));
        // Interleaved so that each product's operands are loaded just before.
        Value a0 = amx::TileLoadOp::create(b, operandType, s.amxRows, ValueRange{rt0, ks, zero, zero});
        Value b0 = amx::TileLoadOp::create(b, operandType, s.packedWeights, ValueRange{ct0, kp, zero});
        Value c00 = amx::TileMulFOp::create(b, accType, a0, b0, c[0]);
        Value b1 = amx::TileLoadOp::create(b, operandType, s.packedWeights, ValueRange{ct1, kp, zero});
        Value c01 = amx::TileMulFOp::create(b, accType, a0, b1, c[1]);
        Value a1 = amx::TileLoadOp::create(b, operandType, s.amxRows, ValueRange{rt1, ks, zero, zero});
        Value c10 = amx::TileMulFOp::create(b, accType, a1, b0, c[2]);
        Value c11 = amx::TileMulFOp::create(b, accType, a1, b1, c[3]);
        return {c00, c01, c10, c11};
      });
  Value t = e.index(kTileRows);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{zero, zero}, acc[0]);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{zero, t}, acc[1]);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{t, zero}, acc[2]);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{t, t}, acc[3]);
}

void Bf16GmmTasks::amxEpilogue(Value r0, Value r1, Value rowPair, Value colPair, Value c0,
                               const Scratch &s) {
  auto &b = e.b;
  auto vecType = VectorType::get({kLanes}, b.getF32Type());
  Value zero = e.index(0);
  Value first = e.add(r0, e.mul(rowPair, e.index(2 * kTileRows)));
  Value count = e.min(e.sub(r1, first), e.index(2 * kTileRows));
  e.forLoop(zero, count, [&](Value i) {
    Value v0 = vector::LoadOp::create(b, vecType, s.tileOut, ValueRange{i, zero});
    Value v1 = vector::LoadOp::create(b, vecType, s.tileOut, ValueRange{i, e.index(kTileCols)});
    storePair(e.add(first, i), colPair, c0, v0, v1);
  });
}

void Bf16GmmTasks::amxTask(Value r0, Value r1, Value g, Value cb, const Scratch &s) {
  Value zero = e.index(0);
  Value colPairs = ensureWeights(g, cb, s);
  Value c0 = firstColumn(cb);
  int64_t pairRows = 2 * kTileRows;
  Value rowsPadded = e.mul(e.divs(e.add(e.sub(r1, r0), e.index(pairRows - 1)), e.index(pairRows)),
                           e.index(pairRows));
  packAmxRows(r0, r1, rowsPadded, s.amxRows);
  e.forLoop(zero, e.divs(rowsPadded, e.index(pairRows)), [&](Value rowPair) {
    e.forLoop(zero, colPairs, [&](Value colPair) {
      amxTileProduct(rowPair, colPair, s);
      amxEpilogue(r0, r1, rowPair, colPair, c0, s);
    });
  });
}
