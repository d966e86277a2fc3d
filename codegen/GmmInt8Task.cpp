//===- GmmInt8Task.cpp - int8 rows and the int8 vector task ---------------===//
//
// What the int8 gmm (moe.gmm with scales) adds to the packed-weight tasks:
//
//   rows     every row is quantized once, before the tasks, in parallel: its
//            largest magnitude, then q = clamp(roundeven(x * 127 / max), -127,
//            127) (QuantizeLowering.cpp's arithmetic, on zmm vectors) into
//            rows of paddedDepth bytes (zeros past D), 32 zero rows past the
//            last so that a 32-row AMX tile pair never reads past the end,
//            the row's scale max / 127 and the row's sum of q. Gathered rows
//            are read through the pack's permutation, as the float kernels
//            read them. Each row is quantized once however many column
//            blocks read it.
//   vnni     the task without AMX tiles: vpdpbusd (4 products a lane: an
//            unsigned times a signed byte) of a row of a packed weight tile
//            (the quad layout AMX reads too, offset to w + 128) against a
//            row's 4 depth bytes, broadcast, on register tiles of 6 rows x 4
//            zmm of 16 columns; 128 times the row's sum takes the offset back
//            out (withoutWeightOffset). The offset goes on the weights, not
//            on the rows: their sums come for free with the quantization,
//            where per-column sums would cost the packing a pass.
//   vector   the task for a CPU with neither: exact i32 multiply-adds of a
//            row's value against 16 weight columns read in place; for
//            correctness, not for speed.
//
// The epilogue of both (dequantizeSums, GmmPackedTasks.cpp) multiplies the
// i32 sums by the row's scale times the weight's (per expert, or per output
// channel) and hands them to the shared column-pair store.
//
// Why by hand: upstream has no dynamic (per-row, run-time) quantization and
// no grouped int8 matmul; arith, math and vector are the building blocks.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/GmmPackedTasks.h"
#include "codegen/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
constexpr int64_t kPaddingRows = 32; // an AMX tile pair
// A VNNI register tile: kVnniRows rows x kVnniPairs column pairs (two zmm of
// 16 columns each): 24 accumulators, a broadcast of 4 depth bytes per row
// and one weight vector at a time. Measured on a 4096 x 2048 x 1408 gmm
// (best of 6): 6 x 2 17.0 ms, 3 x 4 19.8 ms (8 weight vectors), and 6 x 2
// with all four weight vectors loaded first 19.4 ms.
constexpr int64_t kVnniRows = 6;
constexpr int64_t kVnniPairs = 2;
} // namespace

void PackedGmmTasks::quantizeRows() {
  auto &b = e.b;
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  Type lhsElement = cast<MemRefType>(p.lhs.getType()).getElementType();
  auto loadType = VectorType::get({kLanes}, lhsElement);
  auto f32Vec = VectorType::get({kLanes}, f32);
  auto i8Vec = VectorType::get({kLanes}, i8);
  auto i32Vec = VectorType::get({kLanes}, b.getI32Type());
  Value zero = e.index(0);
  Value rows = p.rowCount;
  Value allocated = e.add(rows, e.index(kPaddingRows));
  quantizedRows = e.alloc({ShapedType::kDynamic, paddedDepth}, i8, {allocated});
  rowScales = e.alloc({ShapedType::kDynamic}, f32, {allocated});
  rowSums = e.alloc({ShapedType::kDynamic}, b.getI32Type(), {allocated});
  Value steps = e.index(paddedDepth / kLanes);
  Value passThru = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(lhsElement)));
  Value zeroBytes = arith::ConstantOp::create(b, DenseElementsAttr::get(i8Vec, b.getZeroAttr(i8)));
  Value zeroSums = arith::ConstantOp::create(b, DenseElementsAttr::get(i32Vec, b.getI32IntegerAttr(0)));

  e.forLoop(rows, allocated, [&](Value r) {
    e.store(e.f32(0), rowScales, {r});
    e.store(e.i32(0), rowSums, {r});
    e.forLoop(zero, steps, [&](Value ks) {
      vector::StoreOp::create(b, zeroBytes, quantizedRows, ValueRange{r, e.mul(ks, e.index(kLanes))});
    });
  });
  e.parallelFor(zero, rows, [&](Value r) {
    Value src = r;
    if (p.perm) {
      // A padding slot (< 0) reads token 0: its output is zeroed anyway.
      Value slot = e.toIndex(e.load(p.perm, {r}));
      src = e.divs(e.max(slot, zero), e.index(p.topK));
    }
    auto load = [&](Value ks) -> Value {
      Value k = e.mul(ks, e.index(kLanes));
      Value v = vector::MaskedLoadOp::create(b, loadType, p.lhs, ValueRange{src, k},
                                             lanesBelow(e, k, e.index(p.depth), kLanes), passThru);
      if (!lhsElement.isF32())
        v = arith::ExtFOp::create(b, f32Vec, v);
      return v;
    };
    Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(f32Vec, 0.0f));
    Value maxima = e.forLoop(zero, steps, ValueRange{zeros},
                             [&](Value ks, ValueRange m) -> SmallVector<Value> {
                               return {absMax(e, m[0], load(ks))};
                             })[0];
    Value maxAbs = vector::ReductionOp::create(b, vector::CombiningKind::MAXIMUMF, maxima); // NaN kept
    e.store(int8Scale(e, maxAbs), rowScales, {r});
    Value reciprocal = vector::BroadcastOp::create(b, f32Vec, int8Reciprocal(e, maxAbs));
    Value sums = e.forLoop(zero, steps, ValueRange{zeroSums},
                           [&](Value ks, ValueRange acc) -> SmallVector<Value> {
                             Value q = arith::FPToSIOp::create(b, i32Vec, quantizeInt8(e, load(ks), reciprocal));
                             vector::StoreOp::create(b, arith::TruncIOp::create(b, i8Vec, q), quantizedRows,
                                                     ValueRange{r, e.mul(ks, e.index(kLanes))});
                             return {arith::AddIOp::create(b, acc[0], q)};
                           })[0];
    e.store(vector::ReductionOp::create(b, vector::CombiningKind::ADD, sums), rowSums, {r});
  });
}

void PackedGmmTasks::int8VectorTask(Value r0, Value r1, Value g, Value cb) {
  auto &b = e.b;
  auto i8Vec = VectorType::get({kLanes}, b.getI8Type());
  auto i32Vec = VectorType::get({kLanes}, b.getI32Type());
  Value zero = e.index(0);
  Value zeroBytes = arith::ConstantOp::create(b, DenseElementsAttr::get(i8Vec, b.getZeroAttr(b.getI8Type())));
  Value zeroSums = arith::ConstantOp::create(b, DenseElementsAttr::get(i32Vec, b.getZeroAttr(b.getI32Type())));
  Value c0 = firstColumn(cb);
  Value colPairs = columnPairs(cb);
  e.forLoop(r0, r1, [&](Value r) {
    e.forLoop(zero, colPairs, [&](Value pair) {
      TileColumns tiles[2] = {tileColumns(c0, pair, 0), tileColumns(c0, pair, 1)};
      Value masks[2] = {lanesBelow(e, tiles[0].column, tiles[0].limit, kLanes),
                        lanesBelow(e, tiles[1].column, tiles[1].limit, kLanes)};
      SmallVector<Value> sums = e.forLoop(
          zero, e.index(p.depth), ValueRange{zeroSums, zeroSums},
          [&](Value d, ValueRange acc) -> SmallVector<Value> {
            Value q = arith::ExtSIOp::create(b, b.getI32Type(), e.load(quantizedRows, {r, d}));
            Value a = vector::BroadcastOp::create(b, i32Vec, q);
            SmallVector<Value> out;
            for (int64_t half = 0; half < 2; ++half) {
              const TileColumns &tc = tiles[half];
              Value w = vector::MaskedLoadOp::create(b, i8Vec, tc.weight, ValueRange{g, d, tc.column},
                                                     masks[half], zeroBytes);
              w = arith::ExtSIOp::create(b, i32Vec, w);
              out.push_back(arith::AddIOp::create(b, acc[half], arith::MulIOp::create(b, a, w)));
            }
            return out;
          });
      storePair(r, g, pair, c0, dequantizeSums(sums[0], r, g, tiles[0]),
                dequantizeSums(sums[1], r, g, tiles[1]));
    });
  });
}

namespace {
/// vpdpbusd (AVX512-VNNI: u8 x s8, four products summed into each i32 lane)
/// as a declaration the LLVM lowering turns into the intrinsic of that name.
/// Why not x86vector: it has only the AVX-VNNI-INT8 form (vpdpbssd, signed x
/// signed), which this CPU class lacks. Why not llvm.call_intrinsic: it has
/// no memory effects declared, which the buffer deallocation pipeline
/// refuses; a call to a declaration it handles.
func::FuncOp vpdpbusdFunction(Emitter &e, VectorType sumType, VectorType bytesType) {
  auto module = e.b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  constexpr StringLiteral name = "llvm.x86.avx512.vpdpbusd.512";
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder mb(module.getBodyRegion());
  auto fn = func::FuncOp::create(mb, module.getLoc(), name,
                                 FunctionType::get(e.b.getContext(), {sumType, bytesType, bytesType},
                                                   {sumType}));
  fn.setPrivate();
  return fn;
}
} // namespace

void PackedGmmTasks::vnniRegisterTile(Value r0, Value rows, Value ir, Value q, Value colPairs,
                                      Value c0, Value g, const Scratch &s) {
  auto &b = e.b;
  Value zero = e.index(0), one = e.index(1);
  auto sumType = VectorType::get({kLanes}, b.getI32Type());
  auto bytesType = VectorType::get({4 * kLanes}, b.getI8Type());
  auto quadType = VectorType::get({4}, b.getI8Type());
  auto oneLane = VectorType::get({1}, b.getI32Type());
  func::FuncOp vpdpbusd = vpdpbusdFunction(e, sumType, bytesType);
  constexpr int64_t kTiles = 2 * kVnniPairs;
  // Rows past the task's end repeat its last row, column pairs past the
  // block's end its last pair: computed, never stored.
  SmallVector<Value> row, pair, tiles;
  for (int64_t i = 0; i < kVnniRows; ++i)
    row.push_back(e.add(r0, e.min(e.add(ir, e.index(i)), e.sub(rows, one))));
  Value firstPair = e.mul(q, e.index(kVnniPairs));
  for (int64_t j = 0; j < kVnniPairs; ++j) {
    pair.push_back(e.min(e.add(firstPair, e.index(j)), e.sub(colPairs, one)));
    tiles.push_back(e.mul(pair.back(), e.index(2)));
    tiles.push_back(e.add(tiles.back(), one));
  }

  Value z = arith::ConstantOp::create(b, DenseElementsAttr::get(sumType, b.getI32IntegerAttr(0)));
  SmallVector<Value> init(kVnniRows * kTiles, z);
  SmallVector<Value> acc = e.forLoop(
      zero, e.index(paddedDepth / 4), init, [&](Value kq, ValueRange in) -> SmallVector<Value> {
        // The rows' broadcasts first, then one weight vector at a time
        // against every row: 24 accumulators + 3 broadcasts + 1 weight live.
        Value depth = e.mul(kq, e.index(4));
        Value a[kVnniRows];
        for (int64_t i = 0; i < kVnniRows; ++i) {
          Value quad = vector::LoadOp::create(b, quadType, quantizedRows, ValueRange{row[i], depth});
          Value lanes = vector::BroadcastOp::create(b, sumType, vector::BitCastOp::create(b, oneLane, quad));
          a[i] = vector::BitCastOp::create(b, bytesType, lanes);
        }
        SmallVector<Value> out(in.begin(), in.end());
        for (int64_t j = 0; j < kTiles; ++j) {
          Value w = vector::LoadOp::create(b, bytesType, s.packedWeights, ValueRange{tiles[j], kq, zero});
          for (int64_t i = 0; i < kVnniRows; ++i)
            out[i * kTiles + j] =
                func::CallOp::create(b, vpdpbusd, ValueRange{out[i * kTiles + j], w, a[i]}).getResult(0);
        }
        return out;
      });

  for (int64_t i = 0; i < kVnniRows; ++i) {
    e.ifThen(e.lt(e.add(ir, e.index(i)), rows), [&] {
      Value r = e.add(r0, e.add(ir, e.index(i)));
      for (int64_t j = 0; j < kVnniPairs; ++j) {
        auto store = [&, j] {
          const Value *v = &acc[i * kTiles + 2 * j];
          Value v0 = dequantizeSums(withoutWeightOffset(v[0], r), r, g, tileColumns(c0, pair[j], 0));
          Value v1 = dequantizeSums(withoutWeightOffset(v[1], r), r, g, tileColumns(c0, pair[j], 1));
          storePair(r, g, pair[j], c0, v0, v1);
        };
        if (j == 0)
          store();
        else
          e.ifThen(e.lt(e.add(firstPair, e.index(j)), colPairs), store);
      }
    });
  }
}

void PackedGmmTasks::vnniTask(Value r0, Value r1, Value g, Value cb, const Scratch &s) {
  Value colPairs = ensureWeights(g, cb, s);
  Value c0 = firstColumn(cb);
  Value rows = e.sub(r1, r0);
  Value pairGroups = e.divs(e.add(colPairs, e.index(kVnniPairs - 1)), e.index(kVnniPairs));
  // Row tiles outside: a tile's rows stay in L1 while the weight block
  // streams from L2 under it.
  e.forLoop(e.index(0), rows, e.index(kVnniRows), ValueRange{},
            [&](Value ir, ValueRange) -> SmallVector<Value> {
              e.forLoop(e.index(0), pairGroups, [&](Value q) {
                vnniRegisterTile(r0, rows, ir, q, colPairs, c0, g, s);
              });
              return {};
            });
}
