//===- Bf16DotKernel.cpp - avx512bf16_dot: vdpbf16ps register tiles -----===//
//
// bf16 x bf16 -> f32 with vdpbf16ps (x86vector.avx512.dot): each f32 lane
// accumulates a[2i] * b[2i] + a[2i + 1] * b[2i + 1], so one instruction does
// two depth steps of 16 columns. The weight operand is a row of a packed
// weight tile (16 columns x one depth pair, PackedOperands.cpp), the row
// operand the row's depth pair as one 32-bit value broadcast to all lanes.
// Twice the multiply-adds of an f32 FMA per instruction, on bf16 operands as
// they are in memory (no widening pass).
//
//   weights  the packed block shared with the AMX tasks. (Reading the
//            weight in place, two depth rows interleaved per vector and
//            prefetched ahead, was measured 1.6-2.7x slower for groups of
//            under 16 rows: the walk down a 128-byte strip of rows a row
//            stride apart defeats the hardware prefetchers.)
//   rows     read in place, a depth pair (one 32-bit value) at a time, when D
//            is even: the loop stops at D, so a broadcast never reads past
//            its row, and a gathered row's source (through the pack's
//            permutation) is looked up once per register tile. (Packing the
//            rows per task, as an odd D needs, copied the task's 48 rows once
//            per column block: measured 4-6% of the forward.) An odd D: the
//            rows packed once per task as depth pairs, zero past D.
//   product  register tiles of kTileRowCount rows x 2 column pairs (4 zmm of
//            16 columns): 24 accumulators over the whole depth, 4 weight
//            loads and 6 broadcasts per 24 dot products; a task of 1 to 4
//            rows (decode sizes), and the rows a task has past its full
//            tiles, a tile of 1, 2 or 4 rows.
//   epilogue the shared column-pair store (SwiGLU, padding rows, rounding).
//
// This is the kind for groups too small for AMX tiles (decode-sized
// batches, the tail experts of a skewed routing) and for every bf16 group
// where AMX is not allowed or not granted. Why by hand: upstream lowers
// vector.contract on bf16 by widening to f32; x86vector.avx512.dot is the
// building block used here.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernel.h"
#include "codegen/kernels/PackedOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTileRowCount = 6; // rows of a register tile
// A decode task of 2 to 4 rows fetches its own tiles this many depth pairs
// (depth loop steps, a 64-byte line of each tile; not kDepthStep's 32
// values) ahead: 2 KiB of each tile's stream (PackedOperands::
// fetchTilesAhead). AMD EPYC znver5, 2 threads, T 16 top-8 (experts of
// 0-5 rows), alternating, medians of 6-12 runs in four sets: none 20.60 /
// 22.26 / 18.58 / 19.11 ms, 32 steps in every tile of 1-4 rows 17.92 /
// 19.84 / 16.80 / 16.65; 16 steps 18.55 (first set), 48 and 64 slower than
// 32 (20.73 and 21.41 against 19.02). At T 4 (about one row an expert)
// fetching in the one-row tiles too ran 4-13% slower (7.20 / 8.18 / 7.87 ms
// none against 8.15 / 8.59 / 8.46), so a task of one row fetches none.
// Tiles of 2-4 rows only: T 16 17.25 / 17.02 ms, T 4 8.37 / 8.02 (those
// sets' none: 18.58 / 19.11 and 8.18 / 7.87), and the builds before and
// after, T 16 20.20 -> 17.22 ms, T 4 7.49 -> 7.78: T 4 stays 2-4% slower
// (at the noise of a 8 ms call here), taken for T 16's 11-15%. A task of 5
// rows takes the 6-row tile, which fetches nothing of its own (not
// measured with it). (Measured earlier at 16 steps in every decode tile,
// in fewer runs: T 16 17.9 against 18.2 ms, T 4 8.1 against 7.6.)
constexpr int64_t kDotStreamAheadSteps = 32;
constexpr int64_t kTilesPerRow = 4;  // zmm accumulators per row: 2 column pairs
constexpr int64_t kLanes = 16;
constexpr int64_t kDepthStep = 32;   // bf16 elements a row pack loads at once
// Tasks of a group whose weights are packed per call: up to this many times
// dot_rows rows (Bf16DotKernel::rowBlock).
constexpr int64_t kPackedCallRows = 4;

class Bf16DotKernel final : public GmmKernel {
public:
  Bf16DotKernel(Emitter &e, const GmmKernelPlan &plan, PackedOperands &ops)
      : GmmKernel(e, plan), ops(ops) {}

  // moe-select-lowering's dot_rows: a multiple of the register tile.
  int64_t rowGranule() const override { return p.dotRows; }
  /// Row blocks of dot_rows with weights packed at load time; packed per
  /// call, a group in even blocks of up to kPackedCallRows: each worker
  /// packs each block it takes a task of, and two workers taking tasks of
  /// one block pack it twice (T 512 top-8, 68 rows an expert, tasks of 48
  /// and 20 rows: the bf16 gmms scaled 1.66-1.72x from 1 to 2 threads).
  /// Either way a task is a range of them (runsRowBlocksTogether).
  Value rowBlock(Value groupRows) override {
    if (p.packedRhs)
      return e.index(p.dotRows);
    return evenRowBlock(e, groupRows, taskRowsCap(), kTileRowCount);
  }
  int64_t columnBlock() const override { return ops.columnBlock(); }
  /// Weights packed per call: one worker packs a block for all its row
  /// blocks. Packed at load time too: the first row block reads the block
  /// from DRAM and the others from the worker's L2. As one task each, the
  /// two workers took the 48- and 20-row tasks of a 68-row expert (T 512
  /// top-8) side by side, each reading the block: twice the weights'
  /// traffic of one thread, and the gmms 1.72-1.80x from 1 to 2 threads. AMD EPYC znver5, T 512 top-8,
  /// alternating (medians of 15 calls): 120.8 / 120.4 / 126.9 / 116.6 ms
  /// -> 112.0 / 104.8 / 97.6 / 112.5; T 4096 top-8 819 / 760 / 803 -> 756
  /// / 777 / 777, top-2 unchanged (215 / 199 / 233 -> 214 / 207 / 228).
  /// With only a range's last row block fetching the next block
  /// (GmmScheduler.cpp), six more pairs at T 512: 102-140 ms (median 119)
  /// -> 105-125 (110); null routing f 0.5 (about 274 rows an expert) 431 /
  /// 399 / 396 -> 392 / 380 / 385 ms, f 0 unchanged.
  bool runsRowBlocksTogether() const override { return true; }
  void allocScratch() override {
    ops.allocWeightCache();
    if (!rowsInPlace)
      packedRows = e.alloc({taskRowsCap(), ops.paddedDepth / 2}, e.b.getI32Type(), {});
  }
  void emitTask(const GmmTask &task) override;

private:
  void packRows(Value r0, Value r1);
  /// The `m` rows the register tile at task row `ir` reads: packed rows, or
  /// the lhs's rows in place; rows past the task's end repeat its last row.
  SmallVector<Value> tileRows(int64_t m, Value r0, Value rows, Value ir);
  /// Register tile `ir` of column quad `q`, its first `m` rows (m <=
  /// kTileRowCount); with `next`, its depth steps (from the task's
  /// `firstStep`) fetch their part of the next block.
  void registerTile(int64_t m, Value r0, Value rows, Value ir, ArrayRef<Value> tileRow, Value q, Value g,
                    Value colPairs, Value c0, const PackedOperands::NextBlock *next, Value firstStep);

  /// The depth pairs a register tile's loop runs over: in place it stops at
  /// D (the packed weights past it are zeros).
  int64_t depthPairCount() const { return rowsInPlace ? p.depth / 2 : ops.paddedDepth / 2; }
  /// The most rows a task gets.
  int64_t taskRowsCap() const { return p.packedRhs ? p.dotRows : kPackedCallRows * p.dotRows; }

  PackedOperands &ops;
  // An even depth: the rows' depth pairs are read in place (file comment).
  const bool rowsInPlace = p.depth % 2 == 0;
  Value packedRows; // the task's rows as depth pairs: i32 [dotRows, paddedDepth / 2]
};
} // namespace

void Bf16DotKernel::packRows(Value r0, Value r1) {
  auto &b = e.b;
  Type bf16 = b.getBF16Type();
  auto rowType = VectorType::get({kDepthStep}, bf16);
  auto pairType = VectorType::get({kDepthStep / 2}, b.getI32Type());
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(rowType, b.getZeroAttr(bf16)));
  Value zero = e.index(0);
  e.forLoop(zero, e.sub(r1, r0), [&](Value i) {
    Value src = lhsRow(e, p, e.add(r0, i));
    e.forLoop(zero, e.index(ops.paddedDepth / kDepthStep), [&](Value ks) {
      Value k = e.mul(ks, e.index(kDepthStep));
      Value mask = lanesBelow(e, k, e.index(p.depth), kDepthStep);
      Value v = vector::MaskedLoadOp::create(b, rowType, p.lhs, ValueRange{src, k}, mask, zeros);
      vector::StoreOp::create(b, vector::BitCastOp::create(b, pairType, v), packedRows,
                              ValueRange{i, e.mul(ks, e.index(kDepthStep / 2))});
    });
  });
}

SmallVector<Value> Bf16DotKernel::tileRows(int64_t m, Value r0, Value rows, Value ir) {
  SmallVector<Value> tileRow;
  for (int64_t i = 0; i < m; ++i) {
    Value row = e.min(e.add(ir, e.index(i)), e.sub(rows, e.index(1)));
    tileRow.push_back(rowsInPlace ? lhsRow(e, p, e.add(r0, row)) : row);
  }
  return tileRow;
}

void Bf16DotKernel::registerTile(int64_t m, Value r0, Value rows, Value ir, ArrayRef<Value> tileRow,
                                 Value q, Value g, Value colPairs, Value c0,
                                 const PackedOperands::NextBlock *next, Value firstStep) {
  auto &b = e.b;
  Value zero = e.index(0), one = e.index(1);
  auto accType = VectorType::get({kLanes}, b.getF32Type());
  auto pairsType = VectorType::get({kLanes}, b.getI32Type());
  auto operandType = VectorType::get({2 * kLanes}, b.getBF16Type());
  // Rows past the task's end (tileRows) and the second column pair past the
  // block's end (its last pair): computed, never stored.
  Value pair0 = e.mul(q, e.index(2));
  Value pair1 = e.min(e.add(pair0, one), e.sub(colPairs, one));
  Value tiles[kTilesPerRow] = {e.mul(pair0, e.index(2)), e.add(e.mul(pair0, e.index(2)), one),
                               e.mul(pair1, e.index(2)), e.add(e.mul(pair1, e.index(2)), one)};

  Value z = arith::ConstantOp::create(b, DenseElementsAttr::get(accType, 0.0f));
  SmallVector<Value> init(m * kTilesPerRow, z);
  auto depthPairType = VectorType::get({2}, b.getBF16Type());
  auto pairOf = [&](Value row, Value kp) -> Value {
    if (!rowsInPlace)
      return e.load(packedRows, {row, kp});
    Value two =
        vector::LoadOp::create(b, depthPairType, p.lhs, ValueRange{row, e.mul(kp, e.index(2))});
    Value bits = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), two);
    return vector::ExtractOp::create(b, bits, ArrayRef<int64_t>{0});
  };
  Value depthPairs = e.index(depthPairCount());
  // A task of 2 to 4 rows (its first tile: not the rows past a larger
  // task's full tiles, which find the block in L2) streams its block from
  // DRAM and fetches its own tiles ahead (kDotStreamAheadSteps).
  Value ownStream, lastPair;
  if (m >= 2 && m < kTileRowCount) {
    ownStream = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, ir, zero);
    lastPair = e.index(depthPairCount() - 1);
  }
  SmallVector<Value> acc = e.forLoop(
      zero, depthPairs, init, [&](Value kp, ValueRange in) -> SmallVector<Value> {
        if (next)
          ops.fetchNextBlock(*next, e.add(firstStep, kp));
        ops.fetchTilesAhead(ownStream, tiles, kp, lastPair, kDotStreamAheadSteps);
        Value w[kTilesPerRow];
        for (int64_t j = 0; j < kTilesPerRow; ++j)
          w[j] = vector::LoadOp::create(b, operandType, ops.packedWeights(), ValueRange{tiles[j], kp, zero});
        SmallVector<Value> out(in.begin(), in.end());
        for (int64_t i = 0; i < m; ++i) {
          Value pairBits = vector::BroadcastOp::create(b, pairsType, pairOf(tileRow[i], kp));
          Value a = vector::BitCastOp::create(b, operandType, pairBits);
          for (int64_t j = 0; j < kTilesPerRow; ++j)
            out[i * kTilesPerRow + j] =
                x86vector::DotBF16Op::create(b, accType, out[i * kTilesPerRow + j], a, w[j]);
        }
        return out;
      });

  Value secondPairExists = e.lt(e.add(pair0, one), colPairs);
  for (int64_t i = 0; i < m; ++i) {
    e.ifThen(e.lt(e.add(ir, e.index(i)), rows), [&] {
      Value r = e.add(r0, e.add(ir, e.index(i)));
      const Value *v = &acc[i * kTilesPerRow];
      ops.storePair(r, g, pair0, c0, v[0], v[1]);
      e.ifThen(secondPairExists, [&] { ops.storePair(r, g, e.add(pair0, one), c0, v[2], v[3]); });
    });
  }
}

void Bf16DotKernel::emitTask(const GmmTask &task) {
  Value r0 = task.firstRow, r1 = task.endRow, g = task.group;
  Value colPairs = ops.ensureWeights(g, task.columnBlock);
  Value c0 = ops.firstColumn(task.columnBlock);
  Value rows = e.sub(r1, r0);
  if (!rowsInPlace)
    packRows(r0, r1);
  Value quads = e.divs(e.add(colPairs, e.index(1)), e.index(2));
  Value depthPairs = e.index(depthPairCount());
  // Weights packed at load time: the first tile of rows reads the task's
  // block from DRAM (later tiles find it in L2). Fetching the block of the
  // worker's next task meanwhile, spread over the task's depth steps at up
  // to a line a step, hides that for the next one. T 4096 top-2 (136 rows
  // an expert, three row blocks a block; AMD EPYC znver5, 2 threads): the up
  // and down gmms 80% and 78% -> 92% and 94% of the AVX512_BF16 peak
  // (94-95% with the weights in L3); top-8 (12 row blocks a block) unchanged.
  // Not by a task of a group of fewer rows than a full tile (decode
  // sizes), which reads its block once, from DRAM, and is bound by that
  // stream: its fetch of a quarter of a guessed next block (a line a step;
  // a wrong guess is bandwidth lost) made the calls slower. T 16 top-8 (AMD
  // EPYC znver5, 2 threads, alternating with the fetch; medians of 4-8
  // runs) 21.7 -> 19.6, 20.6 -> 19.3 and 21.6 -> 18.2 ms; T 4 9.0 -> 8.6
  // and 8.6 -> 7.6 ms. Its own tiles it fetches ahead instead, in tiles
  // of 2 to 4 rows (registerTile, kDotStreamAheadSteps). The last few rows
  // of a larger group still fetch: skipping theirs too made T 4096 top-2 2%
  // slower (212 against 208 ms, medians of four pairs; then a task of their
  // own, now a range's first row block, which fetches its own block:
  // GmmScheduler.cpp).
  Value rowTiles = e.divs(e.add(rows, e.index(kTileRowCount - 1)), e.index(kTileRowCount));
  std::optional<PackedOperands::NextBlock> next =
      ops.nextBlock(task, e.mul(e.mul(rowTiles, quads), depthPairs), kTileRowCount);
  // Row tiles outside: a tile's rows (packed or in place, their sources
  // looked up once) stay in L1 while the weight block streams from L2 under
  // it.
  auto tilesOf = [&](int64_t m, Value ir) {
    SmallVector<Value> tileRow = tileRows(m, r0, rows, ir);
    Value tileIndex = e.divs(ir, e.index(kTileRowCount));
    e.forLoop(e.index(0), quads, [&](Value q) {
      Value firstStep = e.mul(e.add(e.mul(tileIndex, quads), q), depthPairs);
      registerTile(m, r0, rows, ir, tileRow, q, g, colPairs, c0, next ? &*next : nullptr, firstStep);
    });
  };
  // A task of 1 to 4 rows (decode sizes: T 16 top-8 gives an expert 0-5
  // rows, 2.1 on average) takes the smallest tile of 1, 2 or 4 rows that
  // holds them (5 rows: a 6-row tile), and so do the rows left past a
  // task's full tiles (7 rows: 6 + 1; emitByRowCount): the full tile multiplied
  // each streamed weight vector by 6 rows, most of them copies of the
  // last. AMD EPYC znver5, 2 threads, T 2 top-8 of 8 experts (H 1024, M
  // 512, weights in L3): bf16 0.37-0.39 -> 0.31-0.33 ms, int8 0.15-0.16
  // -> 0.13-0.14 ms.
  emitByRowCount(e, rows, kDecodeTileRows, kTileRowCount, tilesOf);
}

namespace {
constexpr llvm::StringLiteral kDotFeatures[] = {"avx512f", "avx512bf16"};
} // namespace

const GmmKernelKind mlir::moe::codegen::kBf16DotKernel = {
    "avx512bf16_dot", kDotFeatures, /*usesTiles=*/false,
    [](Emitter &e, const GmmKernelPlan &plan, PackedOperands &shared) -> std::unique_ptr<GmmKernel> {
      if (plan.int8)
        return nullptr;
      return std::make_unique<Bf16DotKernel>(e, plan, shared);
    }};
