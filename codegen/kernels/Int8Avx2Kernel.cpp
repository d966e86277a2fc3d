//===- Int8Avx2Kernel.cpp - int8_avx2: vpmaddwd register tiles -----------===//
//
// The int8 kind for AVX2 CPUs without AVX512-VNNI (AMD Zen 1-3, Intel
// Haswell to Coffee Lake, Skylake-X; Alder Lake's AVX-VNNI on ymm registers
// would be a kind of its own): the quad-packed weights the VNNI and AMX kinds
// read (PackedOperands.cpp: a 64-byte tile row is 16 columns x 4 depth
// bytes, w + 128) widened to 16 bits a quarter row at a time (vpmovzxbw: 4
// columns x 4 depth), times a quantized row's 4 depth values widened and
// broadcast, by vpmaddwd: 16-bit products summed in pairs into 32-bit lanes.
// A lane of a quarter holds one column's depth pair (0-1 or 2-3); the two
// are added once, after the depth loop. 128 times the row's sum takes the
// offset back out (withoutWeightOffset), as for VNNI.
//
//   register tile = kAvx2Rows rows x one 16-column weight tile: 4 x 8-lane
//                   accumulators a row (8 of the 16 ymm registers with the
//                   row broadcasts, the widened quarter and the product)
//   task          = row tiles outside (a one-row tile last for an odd
//                   count), column pairs (a gate and an up tile with
//                   SwiGLU) inside, each tile over the whole depth, so the
//                   task's weight block streams once from memory and the
//                   later row tiles find it in L2
//
// Exact, as every int8 kind here: |q| <= 127 and w + 128 <= 255, so a pair
// of products is at most 64770, which an i32 lane holds, and D of them are
// far from its limit. Why not vpmaddubsw (bytes multiplied straight away,
// the usual AVX2 int8 GEMM): it saturates a pair's sum at 32767.
//
// Why by hand: the vector dialect has no widening pairwise multiply-add
// and x86vector has only AVX-512 and AVX-VNNI forms, so vpmaddwd is its
// LLVM intrinsic (Emitter::intrinsic), as vpdpbusd is for Int8VnniKernel.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/Int8Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = PackedOperands::kLanes;
// Rows of a register tile. Two rows x 4 accumulators leave room for the
// broadcasts, the widened quarter and the product; three need 17 ymm
// registers, and LLVM's spills made T 16 top-8 slower (znver3: 27-30 ms
// a call against 24-26).
constexpr int64_t kAvx2Rows = 2;
static_assert(PackedOperands::kInt8RowGranule % kAvx2Rows == 0, "a task's rows are whole register tiles");
// Quarters of a 64-byte tile row: 16 bytes, 4 columns x 4 depth values.
constexpr int64_t kQuarters = 4;
// How far ahead in the tile the depth loop fetches: at decode sizes a
// task's weights are read once, from memory, and the hardware prefetcher
// alone left it idle part of the time (T 16 top-8, znver3: 28-29 ms a call
// without, 24-27 with; fetching across into the next tile near a tile's
// end gained nothing).
constexpr int64_t kPrefetchTileRows = 32; // 2 KiB

class Int8Avx2Kernel final : public Int8Kernel {
public:
  using Int8Kernel::Int8Kernel;

  bool runsRowBlocksTogether() const override { return !p.packedRhs; }
  void allocScratch() override {
    ops.allocWeightCache();
    firstSums = e.alloc({kAvx2Rows, kLanes}, e.b.getI32Type(), {});
  }
  void emitTask(const GmmTask &task) override;

private:
  /// The i32 sums of `rows` (1 or kAvx2Rows quantized rows) against weight
  /// tile `tile` of the block, over the padded depth: one vector<16xi32> a
  /// row.
  SmallVector<Value> tileSums(ArrayRef<Value> rows, Value tile);

  // The first tile's sums of a column pair while the second's are
  // computed: kept in registers, they pushed the second tile's depth loop
  // past the 16 ymm registers, and LLVM spilled an accumulator there, a
  // load and a store every depth step (T 16 top-8 measured within the
  // host's noise either way: the loop is not what bounds it there).
  Value firstSums;
};
} // namespace

SmallVector<Value> Int8Avx2Kernel::tileSums(ArrayRef<Value> rows, Value tile) {
  auto &b = e.b;
  Value zero = e.index(0);
  auto sumType = VectorType::get({kLanes / 2}, b.getI32Type());
  auto wordsType = VectorType::get({kLanes}, b.getI16Type());
  auto quarterType = VectorType::get({kLanes}, b.getI8Type());
  auto quadType = VectorType::get({4}, b.getI8Type());
  auto quadWords = VectorType::get({4}, b.getI16Type());
  auto oneLane = VectorType::get({1}, b.getI64Type());
  auto lanes64 = VectorType::get({4}, b.getI64Type());
  func::FuncOp pmaddwd = e.intrinsic("llvm.x86.avx2.pmadd.wd",
                                     FunctionType::get(b.getContext(), {wordsType, wordsType}, {sumType}));
  Value weights = ops.packedWeights();
  int64_t tileRows = ops.paddedDepth / 4;
  Value lastRow = e.index(tileRows - 1);

  Value z = arith::ConstantOp::create(b, DenseElementsAttr::get(sumType, b.getI32IntegerAttr(0)));
  int64_t m = rows.size();
  SmallVector<Value> init(m * kQuarters, z);
  SmallVector<Value> acc = e.forLoop(
      zero, e.index(tileRows), init, [&](Value kq, ValueRange in) -> SmallVector<Value> {
        memref::PrefetchOp::create(b, weights,
                                   ValueRange{tile, e.min(e.add(kq, e.index(kPrefetchTileRows)), lastRow), zero},
                                   /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
        // Each row's 4 depth values as 16-bit words, repeated over the 4
        // 64-bit lanes: a column's quad lines up with them.
        Value depth = e.mul(kq, e.index(4));
        SmallVector<Value, kAvx2Rows> a(m);
        for (int64_t i = 0; i < m; ++i) {
          Value quad = vector::LoadOp::create(b, quadType, ops.quantizedRows(), ValueRange{rows[i], depth});
          Value words = vector::BitCastOp::create(b, oneLane, arith::ExtSIOp::create(b, quadWords, quad));
          a[i] = vector::BitCastOp::create(b, wordsType, vector::BroadcastOp::create(b, lanes64, words));
        }
        SmallVector<Value> out(in.begin(), in.end());
        for (int64_t j = 0; j < kQuarters; ++j) {
          Value bytes = vector::LoadOp::create(b, quarterType, weights, ValueRange{tile, kq, e.index(j * kLanes)});
          Value w = arith::ExtUIOp::create(b, wordsType, bytes);
          for (int64_t i = 0; i < m; ++i) {
            Value products = func::CallOp::create(b, pmaddwd, ValueRange{w, a[i]}).getResult(0);
            out[i * kQuarters + j] = arith::AddIOp::create(b, out[i * kQuarters + j], products);
          }
        }
        return out;
      });

  // Lanes 2c and 2c + 1 of quarter j are column 4j + c's two depth pairs.
  SmallVector<int64_t> even, odd, both;
  for (int64_t l = 0; l < kLanes / 2; ++l) {
    even.push_back(2 * l);
    odd.push_back(2 * l + 1);
  }
  for (int64_t l = 0; l < kLanes; ++l)
    both.push_back(l);
  SmallVector<Value> sums;
  for (int64_t i = 0; i < m; ++i) {
    Value half[2];
    for (int64_t h = 0; h < 2; ++h) {
      Value q0 = acc[i * kQuarters + 2 * h], q1 = acc[i * kQuarters + 2 * h + 1];
      half[h] = arith::AddIOp::create(b, vector::ShuffleOp::create(b, q0, q1, even),
                                      vector::ShuffleOp::create(b, q0, q1, odd));
    }
    sums.push_back(vector::ShuffleOp::create(b, half[0], half[1], both));
  }
  return sums;
}

void Int8Avx2Kernel::emitTask(const GmmTask &task) {
  Value r0 = task.firstRow, r1 = task.endRow, g = task.group, cb = task.columnBlock;
  Value colPairs = ops.ensureWeights(g, cb);
  Value c0 = ops.firstColumn(cb);
  Value rows = e.sub(r1, r0);
  Value one = e.index(1);
  // Register tiles of `m` rows from task row `ir`, over every column pair.
  auto rowTile = [&](int64_t m, Value ir) {
    SmallVector<Value> row, quantized;
    for (int64_t i = 0; i < m; ++i) {
      row.push_back(e.add(r0, e.add(ir, e.index(i))));
      quantized.push_back(ops.quantizedRow(row.back()));
    }
    e.forLoop(e.index(0), colPairs, [&](Value pair) {
      Value tile = e.mul(pair, e.index(2));
      SmallVector<Value> first = tileSums(quantized, tile);
      for (int64_t i = 0; i < m; ++i)
        vector::StoreOp::create(e.b, first[i], firstSums, ValueRange{e.index(i), e.index(0)});
      SmallVector<Value> second = tileSums(quantized, e.add(tile, one));
      for (int64_t i = 0; i < m; ++i) {
        Value r = row[i], q = quantized[i];
        Value sums = vector::LoadOp::create(e.b, first[i].getType(), firstSums, ValueRange{e.index(i), e.index(0)});
        Value v0 = ops.dequantizeSums(ops.withoutWeightOffset(sums, q), q, g, ops.tileColumns(c0, pair, 0));
        Value v1 = ops.dequantizeSums(ops.withoutWeightOffset(second[i], q), q, g, ops.tileColumns(c0, pair, 1));
        ops.storePair(r, g, pair, c0, v0, v1);
      }
    });
  };
  // Whole tiles of kAvx2Rows, then a one-row tile for an odd count: at
  // decode sizes an expert has a few rows (T 16 top-8: 2.1 on average),
  // and a padded last tile computed a row that does not exist for every
  // odd count.
  static_assert(kAvx2Rows == 2, "the tail is one row");
  Value whole = e.mul(e.divs(rows, e.index(kAvx2Rows)), e.index(kAvx2Rows));
  e.forLoop(e.index(0), whole, e.index(kAvx2Rows), ValueRange{}, [&](Value ir, ValueRange) -> SmallVector<Value> {
    rowTile(kAvx2Rows, ir);
    return {};
  });
  e.ifThen(e.lt(whole, rows), [&] { rowTile(1, whole); });
}

namespace {
constexpr llvm::StringLiteral kAvx2Features[] = {"avx2"};
} // namespace

const GmmKernelKind mlir::moe::codegen::kInt8Avx2Kernel = {
    "int8_avx2", kAvx2Features, /*usesTiles=*/false, makeInt8Kernel<Int8Avx2Kernel>};
