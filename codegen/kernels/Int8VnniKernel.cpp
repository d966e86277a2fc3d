//===- Int8VnniKernel.cpp - int8_vnni: vpdpbusd register tiles -----------===//
//
// The int8 kind without AMX tiles: vpdpbusd (4 products a lane: an unsigned
// times a signed byte) of a row of a packed weight tile (the quad layout AMX
// reads too, offset to w + 128, PackedOperands.cpp) against a quantized
// row's 4 depth bytes (Int8Rows.cpp), broadcast, on register tiles of 6 rows
// x 4 zmm of 16 columns (a task of 1 to 4 rows, and a task's rows past its
// full tiles: a tile of 1, 2 or 4 rows);
// 128 times the row's sum takes the offset back out
// (withoutWeightOffset). The offset goes on the weights, not on the rows:
// their sums come for free with the quantization, where per-column sums
// would cost the packing a pass.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/Int8Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = PackedOperands::kLanes;
// A VNNI register tile: kVnniRows rows x kVnniPairs column pairs (two zmm of
// 16 columns each): 24 accumulators, a broadcast of 4 depth bytes per row
// and one weight vector at a time. Measured on a 4096 x 2048 x 1408 gmm
// (best of 6): 6 x 2 17.0 ms, 3 x 4 19.8 ms (8 weight vectors), and 6 x 2
// with all four weight vectors loaded first 19.4 ms.
constexpr int64_t kVnniRows = 6;
constexpr int64_t kVnniPairs = 2;
static_assert(kVnniRows == PackedOperands::kInt8RowGranule, "a task's rows are whole register tiles");
// A decode task's own tiles, fetched this many depth steps ahead (1 KiB of
// each tile's stream; PackedOperands::fetchTilesAhead). AMD EPYC znver5,
// int8 T 16 top-8, 2 threads, alternating: 32 steps 11.7 ms against 16's
// 10.4 and none's 12.7 (six rounds); again (medians of 8 runs) 16 steps
// 11.4 ms, 24 11.5, 32 12.3.
constexpr int64_t kVnniStreamAheadSteps = 16;

class Int8VnniKernel final : public Int8Kernel {
public:
  using Int8Kernel::Int8Kernel;

  void allocScratch() override { ops.allocWeightCache(); }
  bool runsRowBlocksTogether() const override { return !p.packedRhs; }
  void emitTask(const GmmTask &task) override;

private:
  /// The register tile of `m` rows (m <= kVnniRows) at task row `ir`. With
  /// `next`, the tile's depth steps (from the task's `firstStep`) fetch
  /// their part of the next block (PackedOperands::nextBlock); a decode
  /// tile that is its task's first fetches its own tiles ahead too
  /// (PackedOperands::fetchTilesAhead).
  void registerTile(int64_t m, Value r0, Value rows, Value ir, Value q, Value colPairs, Value c0, Value g,
                    const PackedOperands::NextBlock *next, Value firstStep);

};
} // namespace

namespace {
/// vpdpbusd (AVX512-VNNI: u8 x s8, four products summed into each i32 lane)
/// as a declaration the LLVM lowering turns into the intrinsic of that name.
/// Why not x86vector: it has only the AVX-VNNI-INT8 form (vpdpbssd, signed x
/// signed), which this CPU class lacks.
func::FuncOp vpdpbusdFunction(Emitter &e, VectorType sumType, VectorType bytesType) {
  return e.intrinsic("llvm.x86.avx512.vpdpbusd.512",
                     FunctionType::get(e.b.getContext(), {sumType, bytesType, bytesType}, {sumType}));
}
} // namespace

void Int8VnniKernel::registerTile(int64_t m, Value r0, Value rows, Value ir, Value q, Value colPairs,
                                  Value c0, Value g, const PackedOperands::NextBlock *next,
                                  Value firstStep) {
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
  // row: the quantized rows the tile's rows read (PackedOperands::quantizedRow).
  SmallVector<Value> row, pair, tiles;
  for (int64_t i = 0; i < m; ++i)
    row.push_back(ops.quantizedRow(e.add(r0, e.min(e.add(ir, e.index(i)), e.sub(rows, one)))));
  Value firstPair = e.mul(q, e.index(kVnniPairs));
  for (int64_t j = 0; j < kVnniPairs; ++j) {
    pair.push_back(e.min(e.add(firstPair, e.index(j)), e.sub(colPairs, one)));
    tiles.push_back(e.mul(pair.back(), e.index(2)));
    tiles.push_back(e.add(tiles.back(), one));
  }

  Value z = arith::ConstantOp::create(b, DenseElementsAttr::get(sumType, b.getI32IntegerAttr(0)));
  SmallVector<Value> init(m * kTiles, z);
  // A decode tile that is the task's first (a task of 1 to 4 rows), not
  // the rows past a larger task's full tiles, which find the block in L2.
  Value streams, lastQuad;
  if (m < kVnniRows) {
    streams = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, ir, zero);
    lastQuad = e.index(ops.paddedDepth / 4 - 1);
  }
  SmallVector<Value> acc = e.forLoop(
      zero, e.index(ops.paddedDepth / 4), init, [&](Value kq, ValueRange in) -> SmallVector<Value> {
        // The rows' broadcasts first, then one weight vector at a time
        // against every row: m x 4 accumulators, m broadcasts, 1 weight live.
        if (next)
          ops.fetchNextBlock(*next, e.add(firstStep, kq));
        // A decode task's block 16 steps ahead: T 16 top-8 (AMD EPYC
        // znver5, 2 threads, alternating, medians of 6 runs in two sets)
        // 13.2 -> 11.8 ms and 12.7 -> 10.4 ms, T 4 5.0 -> 4.8 ms. Fetched
        // by the rows past a larger task's full tiles too, T 4096 top-8
        // ran 5% slower (397 -> 415 ms, medians of five pairs); not by them,
        // unchanged. The AVX512_BF16 dot kind fetches 32 steps ahead, in
        // tiles of 2 to 4 rows only (Bf16DotKernel.cpp).
        ops.fetchTilesAhead(streams, tiles, kq, lastQuad, kVnniStreamAheadSteps);
        Value depth = e.mul(kq, e.index(4));
        Value a[kVnniRows];
        for (int64_t i = 0; i < m; ++i) {
          Value quad = vector::LoadOp::create(b, quadType, ops.quantizedRows(), ValueRange{row[i], depth});
          Value lanes = vector::BroadcastOp::create(b, sumType, vector::BitCastOp::create(b, oneLane, quad));
          a[i] = vector::BitCastOp::create(b, bytesType, lanes);
        }
        SmallVector<Value> out(in.begin(), in.end());
        for (int64_t j = 0; j < kTiles; ++j) {
          Value w = vector::LoadOp::create(b, bytesType, ops.packedWeights(), ValueRange{tiles[j], kq, zero});
          for (int64_t i = 0; i < m; ++i)
            out[i * kTiles + j] =
                func::CallOp::create(b, vpdpbusd, ValueRange{out[i * kTiles + j], w, a[i]}).getResult(0);
        }
        return out;
      });

  for (int64_t i = 0; i < m; ++i) {
    e.ifThen(e.lt(e.add(ir, e.index(i)), rows), [&] {
      Value r = e.add(r0, e.add(ir, e.index(i)));
      for (int64_t j = 0; j < kVnniPairs; ++j) {
        auto store = [&, j] {
          const Value *v = &acc[i * kTiles + 2 * j];
          // row[i] is row r's (r is a row of the task here).
          Value v0 = ops.dequantizeSums(ops.withoutWeightOffset(v[0], row[i]), row[i], g, ops.tileColumns(c0, pair[j], 0));
          Value v1 = ops.dequantizeSums(ops.withoutWeightOffset(v[1], row[i]), row[i], g, ops.tileColumns(c0, pair[j], 1));
          ops.storePair(r, g, pair[j], c0, v0, v1);
        };
        if (j == 0)
          store();
        else
          e.ifThen(e.lt(e.add(firstPair, e.index(j)), colPairs), store);
      }
    });
  }
}

void Int8VnniKernel::emitTask(const GmmTask &task) {
  Value r0 = task.firstRow, r1 = task.endRow, g = task.group, cb = task.columnBlock;
  Value colPairs = ops.ensureWeights(g, cb);
  Value c0 = ops.firstColumn(cb);
  Value rows = e.sub(r1, r0);
  Value pairGroups = e.divs(e.add(colPairs, e.index(kVnniPairs - 1)), e.index(kVnniPairs));
  Value depthQuads = e.index(ops.paddedDepth / 4);
  Value rowTiles = e.divs(e.add(rows, e.index(kVnniRows - 1)), e.index(kVnniRows));
  // No next block fetched by a task of a group of fewer rows than a full
  // tile, as in the AVX512_BF16 dot kind (Bf16DotKernel.cpp): T 16 top-8
  // (AMD EPYC znver5, 2 threads, alternating; medians of 6 pairs each)
  // 11.7 -> 10.8, 12.5 -> 11.2 ms; T 4 5.1 -> 4.7, 4.9 -> 4.8 ms. (A first
  // set, with no task fetching: 11.6 ms with the fetch, 12.0 without.)
  std::optional<PackedOperands::NextBlock> next =
      ops.nextBlock(task, e.mul(e.mul(rowTiles, pairGroups), depthQuads), kVnniRows);
  // Row tiles outside: a tile's rows stay in L1 while the weight block
  // streams from L2 under it.
  auto tilesOf = [&](int64_t m, Value ir) {
    Value tileIndex = e.divs(ir, e.index(kVnniRows));
    e.forLoop(e.index(0), pairGroups, [&](Value q) {
      Value firstStep = e.mul(e.add(e.mul(tileIndex, pairGroups), q), depthQuads);
      registerTile(m, r0, rows, ir, q, colPairs, c0, g, next ? &*next : nullptr, firstStep);
    });
  };
  // A task of 1 to 4 rows (decode sizes), and the rows a task has past its
  // full tiles, take a smaller tile, as Bf16DotKernel's do.
  emitByRowCount(e, rows, kDecodeTileRows, kVnniRows, tilesOf);
}

namespace {
constexpr llvm::StringLiteral kVnniFeatures[] = {"avx512f", "avx512vnni"};
} // namespace

const GmmKernelKind mlir::moe::codegen::kInt8VnniKernel = {
    "int8_vnni", kVnniFeatures, /*usesTiles=*/false, makeInt8Kernel<Int8VnniKernel>};
