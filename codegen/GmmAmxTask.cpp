//===- GmmAmxTask.cpp - AMX tasks of the fast grouped matmul --------------===//
//
// bf16 x bf16 -> f32 on AMX tile registers (tdpbf16ps: a 16x32 bf16 tile
// times a 32x16 bf16 tile, the latter in the VNNI layout of row pairs,
// accumulated into a 16x16 f32 tile). A task is `rows` rows of one group
// times one column block, over the whole depth:
//
//   weights  the block [D, nc] is packed once per (group, column block) per
//            worker into tiles of 16 columns x 32 depth in the pair layout,
//            zero past D and past the last column; consecutive row blocks of
//            the same weight block skip the packing (the task order puts
//            them next to each other). The weights stream from memory once
//            per forward either way; the pack costs one L2 write per weight
//            byte and gives tiles with a 64-byte row stride (contiguous, no
//            cache-set conflicts).
//   rows     the task's rows (through the pack's permutation when gathered)
//            are packed into 16-row x 32-depth tiles, zero past D and past
//            the last row, once per task.
//   product  2 row tiles x 2 column tiles: four accumulators stay in tile
//            registers over the whole depth (8 tile registers: 2 + 2 + 4).
//   epilogue the accumulators go through a 32x32 f32 scratch to the vector
//            epilogue: SwiGLU of a gate tile and its up tile, zero for
//            padding rows (permutation < 0), bf16 rounding, masked stores.
//
// Why by hand: upstream's VectorToAMX maps one vector.contract to tiles, but
// not a grouped, gathered operand, a weight cache across tasks or the fused
// epilogue; the amx dialect's tile ops are the building blocks used here.
//
//===----------------------------------------------------------------------===//

#include "codegen/GmmAmxTask.h"
#include "codegen/Emitter.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTileRows = 16;  // rows of every tile
constexpr int64_t kTileDepth = 32; // bf16 depth elements of a tile row
constexpr int64_t kTileCols = 16;  // f32 columns of an accumulator tile
constexpr int64_t kLanes = 16;

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
} // namespace

AmxGmmTasks::AmxGmmTasks(Emitter &e, const GmmKernelPlan &plan, int64_t l2Bytes)
    : e(e), p(plan), swigluColumns(plan.swiglu) {
  paddedDepth = roundUp(p.depth, kTileDepth);
  int64_t rowBytes = paddedDepth * 2;
  // The packed weight block in half of L2. (The packed rows need not fit:
  // see kMaxRows.)
  int64_t columnsNeeded = roundUp(p.swiglu ? 2 * roundUp(p.width, kTileCols) : p.width, 2 * kTileCols);
  physicalColumns = std::clamp<int64_t>((l2Bytes / 2) / rowBytes / 32 * 32, 32, 512);
  physicalColumns = std::min(physicalColumns, columnsNeeded);
}

Value AmxGmmTasks::rowBlockFor(Value groupRows) {
  Value cap = e.index(kMaxRows), granule = e.index(kRowGranule), one = e.index(1);
  auto ceilDiv = [&](Value a, Value d) { return e.divs(e.add(a, e.sub(d, one)), d); };
  Value blocks = e.max(ceilDiv(groupRows, cap), one);
  return e.mul(ceilDiv(ceilDiv(groupRows, blocks), granule), granule);
}

AmxGmmTasks::Scratch AmxGmmTasks::allocScratch() {
  auto &b = e.b;
  Scratch s;
  s.packedRows = e.alloc({kMaxRows / kTileRows, paddedDepth / kTileDepth, kTileRows, kTileDepth},
                         b.getBF16Type(), {});
  s.packedWeights = e.alloc({physicalColumns / kTileCols, paddedDepth / 2, 2 * kTileCols},
                            b.getBF16Type(), {});
  s.weightKey = e.alloc({2}, b.getIndexType(), {});
  e.store(e.index(-1), s.weightKey, {e.index(0)});
  e.store(e.index(-1), s.weightKey, {e.index(1)});
  s.tileOut = e.alloc({2 * kTileRows, 2 * kTileCols}, b.getF32Type(), {});
  return s;
}

Value AmxGmmTasks::requestTileState(Emitter &e, Operation *anchor) {
  auto &b = e.b;
  auto module = anchor->getParentOfType<ModuleOp>();
  auto i64 = b.getI64Type();
  // long syscall(long number, ...): libc's, declared variadic as it is.
  auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>("syscall");
  if (!fn) {
    OpBuilder mb(module.getBodyRegion());
    fn = LLVM::LLVMFuncOp::create(mb, module.getLoc(), "syscall",
                                  LLVM::LLVMFunctionType::get(i64, {i64}, /*isVarArg=*/true));
  }
  auto constant = [&](int64_t v) { return arith::ConstantOp::create(b, b.getI64IntegerAttr(v)); };
  constexpr int64_t kSysArchPrctl = 158, kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  Value rc = LLVM::CallOp::create(b, fn, ValueRange{constant(kSysArchPrctl), constant(kReqXcompPerm),
                                                    constant(kXfeatureXtiledata)})
                 .getResult();
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rc, constant(0));
}

void AmxGmmTasks::packWeights(Value g, Value c0, Value colPairs, Value packed) {
  auto &b = e.b;
  Type bf16 = b.getBF16Type();
  auto halfType = VectorType::get({kLanes}, bf16);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(halfType, b.getZeroAttr(bf16)));
  Value noLanes = lanesBelow(e, e.index(0), e.index(0), kLanes);
  Value depth = e.index(p.depth), width = e.index(p.width);
  // Depth row pairs outside, columns inside: the weight is read row by row.
  e.forLoop(e.index(0), e.index(paddedDepth / 2), [&](Value kp) {
    Value row0 = e.mul(kp, e.index(2)), row1 = e.add(row0, e.index(1));
    e.forLoop(e.index(0), colPairs, [&](Value pair) {
      for (int64_t half = 0; half < 2; ++half) {
        Value src = p.gateRhs, col, limit = width;
        if (p.swiglu && half == 1) {
          src = p.upRhs;
          Value offset = e.index(p.upOffset);
          col = e.add(e.add(c0, e.mul(pair, e.index(kTileCols))), offset);
          limit = e.add(width, offset);
        } else if (p.swiglu) {
          col = e.add(c0, e.mul(pair, e.index(kTileCols)));
        } else {
          col = e.add(c0, e.add(e.mul(pair, e.index(2 * kTileCols)), e.index(half * kTileCols)));
        }
        Value columns = lanesBelow(e, col, limit, kLanes);
        auto rowOf = [&](Value row) {
          // Rows past D (the last pair of an odd depth, the padding): zeros.
          Value mask = arith::SelectOp::create(b, e.lt(row, depth), columns, noLanes);
          // Clamped so that even a fully masked load addresses a real row.
          Value at = e.min(row, e.index(p.depth - 1));
          return vector::MaskedLoadOp::create(b, halfType, src, ValueRange{g, at, col}, mask, zeros)
              .getResult();
        };
        Value pairs = vector::InterleaveOp::create(b, rowOf(row0), rowOf(row1));
        Value tile = e.add(e.mul(pair, e.index(2)), e.index(half));
        vector::StoreOp::create(b, pairs, packed, ValueRange{tile, kp, e.index(0)});
      }
    });
  });
}

void AmxGmmTasks::packRows(Value r0, Value r1, Value rowsPadded, Value packed) {
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

void AmxGmmTasks::tileProduct(Value rowPair, Value colPair, const Scratch &s) {
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
        Value a0 = amx::TileLoadOp::create(b, operandType, s.packedRows, ValueRange{rt0, ks, zero, zero});
        Value b0 = amx::TileLoadOp::create(b, operandType, s.packedWeights, ValueRange{ct0, kp, zero});
        Value c00 = amx::TileMulFOp::create(b, accType, a0, b0, c[0]);
        Value b1 = amx::TileLoadOp::create(b, operandType, s.packedWeights, ValueRange{ct1, kp, zero});
        Value c01 = amx::TileMulFOp::create(b, accType, a0, b1, c[1]);
        Value a1 = amx::TileLoadOp::create(b, operandType, s.packedRows, ValueRange{rt1, ks, zero, zero});
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

void AmxGmmTasks::epilogue(Value r0, Value r1, Value rowPair, Value colPair, Value c0,
                           const Scratch &s) {
  auto &b = e.b;
  auto vecType = VectorType::get({kLanes}, b.getF32Type());
  Value zeroVector = arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, 0.0f));
  Type outElement = cast<MemRefType>(p.out.getType()).getElementType();
  Value width = e.index(p.width), zero = e.index(0);
  Value first = e.add(r0, e.mul(rowPair, e.index(2 * kTileRows)));
  Value count = e.min(e.sub(r1, first), e.index(2 * kTileRows));
  e.forLoop(zero, count, [&](Value i) {
    Value r = e.add(first, i);
    Value v0 = vector::LoadOp::create(b, vecType, s.tileOut, ValueRange{i, zero});
    Value v1 = vector::LoadOp::create(b, vecType, s.tileOut, ValueRange{i, e.index(kTileCols)});
    Value valid;
    if (p.perm)
      valid = e.ge(e.toIndex(e.load(p.perm, {r})), zero);
    auto store = [&](Value v, Value col) {
      if (valid)
        v = arith::SelectOp::create(b, valid, v, zeroVector);
      if (!outElement.isF32())
        v = arith::TruncFOp::create(b, VectorType::get({kLanes}, outElement), v);
      vector::MaskedStoreOp::create(b, p.out, ValueRange{r, col}, lanesBelow(e, col, width, kLanes), v);
    };
    if (p.swiglu) {
      store(siluTimes(e, v0, v1), e.add(c0, e.mul(colPair, e.index(kTileCols))));
    } else {
      Value col = e.add(c0, e.mul(colPair, e.index(2 * kTileCols)));
      store(v0, col);
      store(v1, e.add(col, e.index(kTileCols)));
    }
  });
}

void AmxGmmTasks::task(Value r0, Value r1, Value g, Value cb, const Scratch &s) {
  auto &b = e.b;
  Value zero = e.index(0), one = e.index(1);
  int64_t outColumns = columnBlock();
  Value c0 = e.mul(cb, e.index(outColumns));
  Value cEnd = e.min(e.add(c0, e.index(outColumns)), e.index(p.width));
  // Column pairs: two 16-column tiles (gate and up with SwiGLU).
  int64_t pairColumns = p.swiglu ? kTileCols : 2 * kTileCols;
  Value colPairs = e.divs(e.add(e.sub(cEnd, c0), e.index(pairColumns - 1)), e.index(pairColumns));

  Value heldGroup = e.load(s.weightKey, {zero}), heldBlock = e.load(s.weightKey, {one});
  Value held = e.andI(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, heldGroup, g),
                      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, heldBlock, cb));
  // Held already: nothing to do; else pack it.
  auto repack = scf::IfOp::create(b, TypeRange{}, held, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(repack.elseBlock()->getTerminator());
    packWeights(g, c0, colPairs, s.packedWeights);
    e.store(g, s.weightKey, {zero});
    e.store(cb, s.weightKey, {one});
  }
  int64_t pairRows = 2 * kTileRows;
  Value rowsPadded = e.mul(e.divs(e.add(e.sub(r1, r0), e.index(pairRows - 1)), e.index(pairRows)),
                           e.index(pairRows));
  packRows(r0, r1, rowsPadded, s.packedRows);
  e.forLoop(zero, e.divs(rowsPadded, e.index(pairRows)), [&](Value rowPair) {
    e.forLoop(zero, colPairs, [&](Value colPair) {
      tileProduct(rowPair, colPair, s);
      epilogue(r0, r1, rowPair, colPair, c0, s);
    });
  });
}
