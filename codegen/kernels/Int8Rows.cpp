//===- Int8Rows.cpp - the int8 kinds' rows, quantized once ---------------===//
//
// What the int8 gmm (moe.gmm with scales) adds to the packed-weight kinds:
// every row is quantized once, before the tasks, in parallel: its largest
// magnitude, then q = clamp(roundeven(x * 127 / max), -127, 127)
// (QuantizeLowering.cpp's arithmetic, on zmm vectors) into rows of
// paddedDepth bytes (zeros past D; rows an odd number of lines apart), 32
// zero rows past the last so that a 32-row AMX tile pair never reads past
// the end, the row's scale max / 127
// and the row's sum of q. Each row is quantized once however many column
// blocks (and int8 kinds) read it. Gathered rows (the up projection's: a
// token in each of its K experts' groups) are quantized a token at a time,
// once for its K rows, which the kinds read through the pack's permutation
// (quantizedRow), as the float kernels read their rows. A gmm whose
// lowering lists a kind that loads tiles of consecutive rows (amx_int8)
// has them quantized in its row order instead (keepRowOrder), a token K
// times, for every kind of it; so does a gmm with fewer rows than tokens
// (a pack to a capacity). A token quantized once for its K slots took the
// up projection's quantization from 32768 to 4096 rows at T 4096 top-8.
//
// The epilogue of every int8 kind (dequantizeSums) multiplies the i32 sums
// by the row's scale times the weight's (per expert, or per output channel)
// and hands them to the shared column-pair store.
//
// Why by hand: upstream has no dynamic (per-row, run-time) quantization and
// no grouped int8 matmul; arith, math and vector are the building blocks.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/Int8Arithmetic.h"
#include "codegen/kernels/PackedOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = PackedOperands::kLanes;
constexpr int64_t kPaddingRows = 32; // an AMX tile pair
} // namespace

int64_t PackedOperands::quantizedRowBytes() const {
  int64_t lines = llvm::divideCeil(paddedDepth, 64);
  return 64 * (lines % 2 ? lines : lines + 1);
}

void PackedOperands::quantizeRows() {
  if (qRows)
    return;
  auto &b = e.b;
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  Type lhsElement = cast<MemRefType>(p.lhs.getType()).getElementType();
  auto loadType = VectorType::get({kLanes}, lhsElement);
  auto f32Vec = VectorType::get({kLanes}, f32);
  auto i8Vec = VectorType::get({kLanes}, i8);
  auto i32Vec = VectorType::get({kLanes}, b.getI32Type());
  Value zero = e.index(0);
  // Gathered rows a token at a time where there are no more tokens than
  // rows: a pack to a capacity (compact expert-parallel dispatch) or
  // routing to null experts may leave fewer rows than tokens, and those
  // keep the rows' order.
  Value rows = p.rowCount;
  if (p.perm && !rowOrder) {
    Value tokens = e.dim(p.lhs, 0);
    byToken = e.ge(p.rowCount, tokens);
    rows = e.select(byToken, tokens, p.rowCount);
  }
  Value allocated = e.add(rows, e.index(kPaddingRows));
  // Rows an odd number of 64-byte lines apart: the 32 rows of an AMX tile
  // pair then fall in 32 different L1 sets. At 2048 bytes a row they fell
  // in two, 16 lines a set of 12 ways, and the rows' tiles missed L1 at
  // every depth step (SPR, int8 T 4096 top-8: 175-177 -> 166-172 ms). The
  // kinds off AMX read the same rows (a line more a row: 3% at D 2048).
  qRows = e.alloc({ShapedType::kDynamic, quantizedRowBytes()}, i8, {allocated});
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
      vector::StoreOp::create(b, zeroBytes, qRows, ValueRange{r, e.mul(ks, e.index(kLanes))});
    });
  });
  unsigned width = lhsElement.getIntOrFloatBitWidth();
  int64_t bitLanes = 512 / width; // a zmm register of the raw elements
  auto rawType = VectorType::get({bitLanes}, lhsElement);
  auto bitsType = VectorType::get({bitLanes}, b.getIntegerType(width));
  Value bitSteps = e.index(llvm::divideCeil(paddedDepth, bitLanes));
  Value rawPassThru = arith::ConstantOp::create(b, DenseElementsAttr::get(rawType, b.getZeroAttr(lhsElement)));
  Value zeroBits = arith::ConstantOp::create(b, DenseElementsAttr::get(bitsType, b.getIntegerAttr(b.getIntegerType(width), 0)));
  Value magnitude = arith::ConstantOp::create(
      b, DenseElementsAttr::get(bitsType, b.getIntegerAttr(b.getIntegerType(width), APInt::getSignedMaxValue(width))));
  e.parallelFor(zero, rows, [&](Value r) {
    // Row r is token r (byToken), or the gmm's row r.
    Value src = byToken ? e.select(byToken, r, lhsRow(e, p, r)) : lhsRow(e, p, r);
    auto load = [&](Value ks) -> Value {
      Value k = e.mul(ks, e.index(kLanes));
      Value v = vector::MaskedLoadOp::create(b, loadType, p.lhs, ValueRange{src, k},
                                             lanesBelow(e, k, e.index(p.depth), kLanes), passThru);
      if (!lhsElement.isF32())
        v = arith::ExtFOp::create(b, f32Vec, v);
      return v;
    };
    // The largest magnitude from the elements' bits: with the sign bit
    // cleared a float's bits order as its magnitude does, and every NaN's
    // lie above infinity's, so an unsigned maximum of them is maximumf of
    // |x| (absMax), NaN kept, at one instruction a register and no
    // widening. The maximumf chain (compare, blend and max a vector after
    // the bf16 -> f32 shifts) was most of the rows' quantization, itself
    // 12-15% of the int8 gmms' time (SPR, T 4096 top-8).
    Value bitsMax = e.forLoop(zero, bitSteps, ValueRange{zeroBits},
                              [&](Value ks, ValueRange m) -> SmallVector<Value> {
                                Value k = e.mul(ks, e.index(bitLanes));
                                Value v = vector::MaskedLoadOp::create(
                                    b, rawType, p.lhs, ValueRange{src, k},
                                    lanesBelow(e, k, e.index(p.depth), bitLanes), rawPassThru);
                                Value bits = vector::BitCastOp::create(b, bitsType, v);
                                return {arith::MaxUIOp::create(b, m[0], arith::AndIOp::create(b, bits, magnitude))};
                              })[0];
    Value maxAbs = arith::BitcastOp::create(
        b, lhsElement, vector::ReductionOp::create(b, vector::CombiningKind::MAXUI, bitsMax));
    if (!lhsElement.isF32())
      maxAbs = arith::ExtFOp::create(b, f32, maxAbs);
    e.store(int8Scale(e, maxAbs), rowScales, {r});
    Value reciprocal = vector::BroadcastOp::create(b, f32Vec, int8Reciprocal(e, maxAbs));
    Value sums = e.forLoop(zero, steps, ValueRange{zeroSums},
                           [&](Value ks, ValueRange acc) -> SmallVector<Value> {
                             Value q = arith::FPToSIOp::create(b, i32Vec, quantizeInt8(e, load(ks), reciprocal));
                             vector::StoreOp::create(b, arith::TruncIOp::create(b, i8Vec, q), qRows,
                                                     ValueRange{r, e.mul(ks, e.index(kLanes))});
                             return {arith::AddIOp::create(b, acc[0], q)};
                           })[0];
    e.store(vector::ReductionOp::create(b, vector::CombiningKind::ADD, sums), rowSums, {r});
  });
}

Value PackedOperands::quantizedRow(Value r) {
  assert(qRows && "the rows are quantized before the tasks read them");
  if (!byToken)
    return r;
  return e.select(byToken, lhsRow(e, p, r), r);
}
