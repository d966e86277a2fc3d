//===- Int8VectorKernel.cpp - int8_vector: exact i32 multiply-adds -------===//
//
// The int8 kind for a CPU without AVX2 (or gmm-strategy=microkernel-fma,
// which keeps to the FMA tiles' instruction set): exact i32
// multiply-adds of a quantized row's value (Int8Rows.cpp) against 16 weight
// columns read in place (not packed), two 16-column tiles at a time; the
// shared int8 epilogue (dequantizeSums) and column-pair store. For
// correctness, not for speed.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/Int8Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = PackedOperands::kLanes;

class Int8VectorKernel final : public Int8Kernel {
public:
  using Int8Kernel::Int8Kernel;

  void allocScratch() override {}
  void emitTask(const GmmTask &task) override;

};
} // namespace

void Int8VectorKernel::emitTask(const GmmTask &task) {
  auto &b = e.b;
  auto i8Vec = VectorType::get({kLanes}, b.getI8Type());
  auto i32Vec = VectorType::get({kLanes}, b.getI32Type());
  Value zero = e.index(0);
  Value zeroBytes = arith::ConstantOp::create(b, DenseElementsAttr::get(i8Vec, b.getZeroAttr(b.getI8Type())));
  Value zeroSums = arith::ConstantOp::create(b, DenseElementsAttr::get(i32Vec, b.getZeroAttr(b.getI32Type())));
  Value g = task.group;
  Value c0 = ops.firstColumn(task.columnBlock);
  Value colPairs = ops.columnPairs(task.columnBlock);
  e.forLoop(task.firstRow, task.endRow, [&](Value r) {
    Value qr = ops.quantizedRow(r);
    e.forLoop(zero, colPairs, [&](Value pair) {
      PackedOperands::TileColumns tiles[2] = {ops.tileColumns(c0, pair, 0), ops.tileColumns(c0, pair, 1)};
      Value masks[2] = {lanesBelow(e, tiles[0].column, tiles[0].limit, kLanes),
                        lanesBelow(e, tiles[1].column, tiles[1].limit, kLanes)};
      SmallVector<Value> sums = e.forLoop(
          zero, e.index(p.depth), ValueRange{zeroSums, zeroSums},
          [&](Value d, ValueRange acc) -> SmallVector<Value> {
            Value q = arith::ExtSIOp::create(b, b.getI32Type(), e.load(ops.quantizedRows(), {qr, d}));
            Value a = vector::BroadcastOp::create(b, i32Vec, q);
            SmallVector<Value> out;
            for (int64_t half = 0; half < 2; ++half) {
              const PackedOperands::TileColumns &tc = tiles[half];
              Value w = vector::MaskedLoadOp::create(b, i8Vec, tc.weight, ValueRange{g, d, tc.column},
                                                     masks[half], zeroBytes);
              w = arith::ExtSIOp::create(b, i32Vec, w);
              out.push_back(arith::AddIOp::create(b, acc[half], arith::MulIOp::create(b, a, w)));
            }
            return out;
          });
      ops.storePair(r, g, pair, c0, ops.dequantizeSums(sums[0], qr, g, tiles[0]),
                    ops.dequantizeSums(sums[1], qr, g, tiles[1]));
    });
  });
}

// Plain vector arithmetic, which LLVM legalizes for any x86-64.
const GmmKernelKind mlir::moe::codegen::kInt8VectorKernel = {
    "int8_vector", {}, /*usesTiles=*/false, makeInt8Kernel<Int8VectorKernel>};
