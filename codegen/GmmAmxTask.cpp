//===- GmmAmxTask.cpp - the AMX task of the fast grouped matmul -----------===//
//
// bf16 x bf16 -> f32 on AMX tile registers (tdpbf16ps: a 16x32 bf16 tile
// times a 32x16 bf16 tile, the latter in the pair layout of the packed
// weight block, GmmPackedTasks.cpp, accumulated into a 16x16 f32 tile), and
// int8 x int8 -> i32 (tdpbsud: 16x64 times 64x16 in the quad layout):
//
//   rows     bf16: the task's rows (through the pack's permutation when
//            gathered) are packed into 16-row x 32-depth tiles, zero past D
//            and past the last row, once per task. int8: the rows were
//            quantized before the tasks (GmmInt8Task.cpp) into rows of
//            64-byte multiples, which the tiles load in place.
//   product  2 row tiles x 2 column tiles: four accumulators stay in tile
//            registers over the whole depth (8 tile registers: 2 + 2 + 4).
//   epilogue the accumulators go through a 32x32 f32 (i32) scratch to the
//            shared column-pair store (int8: both scales first; SwiGLU,
//            padding rows, bf16 rounding).
//
// Why by hand: upstream's VectorToAMX maps one vector.contract to tiles, but
// not a grouped, gathered operand, a weight cache across tasks or the fused
// epilogue; the amx dialect's tile ops are the building blocks used here.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/GmmPackedTasks.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTileRows = 16; // rows of every tile
constexpr int64_t kTileCols = 16; // f32 (i32) columns of an accumulator tile
constexpr int64_t kLanes = 16;
} // namespace

Value PackedGmmTasks::rowBlockFor(Value groupRows, int64_t maxRows, int64_t rowGranule) {
  Value cap = e.index(maxRows), granule = e.index(rowGranule), one = e.index(1);
  auto ceilDiv = [&](Value a, Value d) { return e.divs(e.add(a, e.sub(d, one)), d); };
  Value blocks = e.max(ceilDiv(groupRows, cap), one);
  // At least one granule: an empty group's loop must still have a step.
  return e.max(e.mul(ceilDiv(ceilDiv(groupRows, blocks), granule), granule), granule);
}

void PackedGmmTasks::packAmxRows(Value r0, Value r1, Value rowsPadded, Value packed) {
  auto &b = e.b;
  Type bf16 = b.getBF16Type();
  auto rowType = VectorType::get({tileDepth}, bf16);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(rowType, b.getZeroAttr(bf16)));
  Value zero = e.index(0), steps = e.index(paddedDepth / tileDepth);
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
      Value k = e.mul(ks, e.index(tileDepth));
      Value mask = lanesBelow(e, k, e.index(p.depth), tileDepth);
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

void PackedGmmTasks::amxTileProduct(Value rowPair, Value colPair, Value firstRow,
                                    const Scratch &s) {
  auto &b = e.b;
  Type operand = p.int8 ? Type(b.getI8Type()) : Type(b.getBF16Type());
  Type sum = p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto operandType = amx::TileType::get({kTileRows, tileDepth}, operand);
  auto accType = amx::TileType::get({kTileRows, kTileCols}, sum);
  Value zero = e.index(0), one = e.index(1), two = e.index(2);
  Value rt0 = e.mul(rowPair, two), rt1 = e.add(rt0, one);
  Value ct0 = e.mul(colPair, two), ct1 = e.add(ct0, one);
  // The row tiles: the task's packed rows (bf16), or 16 quantized rows read
  // in place (int8: the buffer's row stride is the tile stride).
  auto rowTile = [&](Value rt, Value ks) -> Value {
    if (!p.int8)
      return amx::TileLoadOp::create(b, operandType, s.amxRows, ValueRange{rt, ks, zero, zero});
    Value row = e.add(firstRow, e.mul(rt, e.index(kTileRows)));
    return amx::TileLoadOp::create(b, operandType, quantizedRows,
                                   ValueRange{row, e.mul(ks, e.index(tileDepth))});
  };
  auto product = [&](Value a, Value w, Value c) -> Value {
    if (p.int8) // tdpbsud: signed rows, weights offset to unsigned
      return amx::TileMulIOp::create(b, accType, a, w, c, /*isZextLhs=*/false, /*isZextRhs=*/true);
    return amx::TileMulFOp::create(b, accType, a, w, c);
  };
  Value z = amx::TileZeroOp::create(b, accType);
  SmallVector<Value> acc = e.forLoop(
      zero, e.index(paddedDepth / tileDepth), ValueRange{z, z, z, z},
      [&](Value ks, ValueRange c) -> SmallVector<Value> {
        Value kp = e.mul(ks, e.index(kTileRows));
        // Interleaved so that each product's operands are loaded just before.
        Value a0 = rowTile(rt0, ks);
        Value b0 = amx::TileLoadOp::create(b, operandType, s.packedWeights, ValueRange{ct0, kp, zero});
        Value c00 = product(a0, b0, c[0]);
        Value b1 = amx::TileLoadOp::create(b, operandType, s.packedWeights, ValueRange{ct1, kp, zero});
        Value c01 = product(a0, b1, c[1]);
        Value a1 = rowTile(rt1, ks);
        Value c10 = product(a1, b0, c[2]);
        Value c11 = product(a1, b1, c[3]);
        return {c00, c01, c10, c11};
      });
  Value t = e.index(kTileRows);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{zero, zero}, acc[0]);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{zero, t}, acc[1]);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{t, zero}, acc[2]);
  amx::TileStoreOp::create(b, s.tileOut, ValueRange{t, t}, acc[3]);
}

void PackedGmmTasks::amxEpilogue(Value r0, Value r1, Value rowPair, Value colPair, Value c0,
                                 Value g, const Scratch &s) {
  auto &b = e.b;
  Type sum = p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto vecType = VectorType::get({kLanes}, sum);
  Value zero = e.index(0);
  Value first = e.add(r0, e.mul(rowPair, e.index(2 * kTileRows)));
  Value count = e.min(e.sub(r1, first), e.index(2 * kTileRows));
  e.forLoop(zero, count, [&](Value i) {
    Value v0 = vector::LoadOp::create(b, vecType, s.tileOut, ValueRange{i, zero});
    Value v1 = vector::LoadOp::create(b, vecType, s.tileOut, ValueRange{i, e.index(kTileCols)});
    Value r = e.add(first, i);
    if (p.int8) {
      v0 = dequantizeSums(withoutWeightOffset(v0, r), r, g, tileColumns(c0, colPair, 0));
      v1 = dequantizeSums(withoutWeightOffset(v1, r), r, g, tileColumns(c0, colPair, 1));
    }
    storePair(r, g, colPair, c0, v0, v1);
  });
}

void PackedGmmTasks::amxTask(Value r0, Value r1, Value g, Value cb, const Scratch &s) {
  Value zero = e.index(0);
  Value colPairs = ensureWeights(g, cb, s);
  Value c0 = firstColumn(cb);
  int64_t pairRows = 2 * kTileRows;
  Value rowsPadded = e.mul(e.divs(e.add(e.sub(r1, r0), e.index(pairRows - 1)), e.index(pairRows)),
                           e.index(pairRows));
  if (!p.int8)
    packAmxRows(r0, r1, rowsPadded, s.amxRows);
  // int8 tiles read rows from r0 on: rows past r1 are the next group's (or
  // the zero padding past the last row), computed and never stored.
  Value firstRow = p.int8 ? r0 : zero;
  e.forLoop(zero, e.divs(rowsPadded, e.index(pairRows)), [&](Value rowPair) {
    e.forLoop(zero, colPairs, [&](Value colPair) {
      amxTileProduct(rowPair, colPair, firstRow, s);
      amxEpilogue(r0, r1, rowPair, colPair, c0, g, s);
    });
  });
}
