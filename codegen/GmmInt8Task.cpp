//===- GmmInt8Task.cpp - int8 rows and the int8 vector task ---------------===//
//
// What the int8 gmm (moe.gmm with scales) adds to the packed-weight tasks:
//
//   rows     every row is quantized once, before the tasks, in parallel: its
//            largest magnitude, then q = clamp(roundeven(x * 127 / max), -127,
//            127) (QuantizeLowering.cpp's arithmetic, on zmm vectors) into
//            rows of paddedDepth bytes (zeros past D), 32 zero rows past the
//            last so that a 32-row AMX tile pair never reads past the end,
//            and the row's scale max / 127. Gathered rows are read through
//            the pack's permutation, as the float kernels read them. Each
//            row is quantized once however many column blocks read it.
//   vector   the task for hosts or processes without AMX tiles: i32
//            multiply-adds of a row's quantized value against 16 weight
//            columns, the weight read in place. Exact (the same i32 sums as
//            tdpbssd), for correctness where AMX is missing, not for speed.
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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
constexpr int64_t kPaddingRows = 32; // an AMX tile pair
} // namespace

void PackedGmmTasks::quantizeRows() {
  auto &b = e.b;
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  Type lhsElement = cast<MemRefType>(p.lhs.getType()).getElementType();
  auto loadType = VectorType::get({kLanes}, lhsElement);
  auto f32Vec = VectorType::get({kLanes}, f32);
  auto i8Vec = VectorType::get({kLanes}, i8);
  Value zero = e.index(0);
  Value rows = p.rowCount;
  Value allocated = e.add(rows, e.index(kPaddingRows));
  quantizedRows = e.alloc({ShapedType::kDynamic, paddedDepth}, i8, {allocated});
  rowScales = e.alloc({ShapedType::kDynamic}, f32, {allocated});
  Value steps = e.index(paddedDepth / kLanes);
  Value passThru = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(lhsElement)));
  Value zeroBytes = arith::ConstantOp::create(b, DenseElementsAttr::get(i8Vec, b.getZeroAttr(i8)));

  e.forLoop(rows, allocated, [&](Value r) {
    e.store(e.f32(0), rowScales, {r});
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
    Value maxAbs = vector::ReductionOp::create(b, vector::CombiningKind::MAXNUMF, maxima);
    e.store(int8Scale(e, maxAbs), rowScales, {r});
    Value reciprocal = vector::BroadcastOp::create(b, f32Vec, int8Reciprocal(e, maxAbs));
    e.forLoop(zero, steps, [&](Value ks) {
      Value q = arith::FPToSIOp::create(b, i8Vec, quantizeInt8(e, load(ks), reciprocal));
      vector::StoreOp::create(b, q, quantizedRows, ValueRange{r, e.mul(ks, e.index(kLanes))});
    });
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
      storePair(r, pair, c0, dequantizeSums(sums[0], r, g, tiles[0]),
                dequantizeSums(sums[1], r, g, tiles[1]));
    });
  });
}
