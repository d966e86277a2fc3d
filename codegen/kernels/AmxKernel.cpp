//===- AmxKernel.cpp - amx_bf16 and amx_int8: AMX tile products ----------===//
//
// bf16 x bf16 -> f32 on AMX tile registers (tdpbf16ps: a 16x32 bf16 tile
// times a 32x16 bf16 tile, the latter in the pair layout of the packed
// weight block, PackedOperands.cpp, accumulated into a 16x16 f32 tile), and
// int8 x int8 -> i32 (tdpbsud: 16x64 times 64x16 in the quad layout):
//
//   rows     bf16: the task's rows (through the pack's permutation when
//            gathered) are packed into 16-row x 32-depth tiles, zero past D
//            and past the last row, once per task; with weights packed at
//            load time a task is a whole row block (wholeRowBlocks) and
//            runs all its column blocks on the rows packed once. int8: the
//            rows were quantized before the tasks (Int8Rows.cpp) into rows
//            of 64-byte multiples, which the tiles load in place.
//   product  blocks of 2 row tiles x 2 column tiles, column pairs outside
//            and row pairs inside: four accumulators stay in tile
//            registers over the whole depth (8 tile registers: 2 + 2 + 4),
//            each starting from a zero tile of its own.
//   fetch    with weights packed at load time and at least 4 row pairs,
//            each step fetches its share of the next column pair's
//            weight lines into L2 (after the task's last pair, the first
//            of the next column block, or of the worker's likely next
//            task), so that the next pair's first row pair does not wait
//            on DRAM for every tile: the hardware prefetchers did not run
//            far enough ahead of tile loads (T 4096 top-8: 327 -> 292 ms).
//            A task of at most 2 row pairs (decode sizes) fetches its own
//            tiles' lines 4 steps ahead instead.
//   epilogue the accumulators go through a 32x32 f32 (i32) scratch to the
//            shared column-pair store (int8: both scales first; SwiGLU,
//            padding rows, bf16 rounding), a row (ceil(32 / steps) rows
//            when there are fewer than 32 depth steps) per depth step of the
//            next block, which fills the scratch's other half meanwhile;
//            each row fetches the output lines two row pairs on into L2.
//
// Measured on a 2-core Sapphire Rapids VM (6.9 TFLOP/s AMX BF16 peak of
// tdpbf16ps on registers): this loop of loads and products reaches ~49%
// of the peak a core with both operands in L2 and ~62% with the rows'
// tiles in L1 (82% with all four in L1); a column pair's first row pair
// reads its weight tiles from L3/DRAM unless they were fetched ahead
// (fetch), and the packs of the rows, the per-block drain (tile stores,
// zero loads) and the epilogue come on top (docs/performance.md).
//
// A group takes this kind at run time when Linux grants the tile state and
// it has at least amx_min_rows rows (bf16: smaller groups would mostly
// multiply padding; int8: 1, a padded tile still beats every other int8
// path); the other groups run as the gmm's other kind.
//
// Why by hand: upstream's VectorToAMX maps one vector.contract to tiles, but
// not a grouped, gathered operand, a weight cache across tasks or the fused
// epilogue; the amx dialect's tile ops are the building blocks used here.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/AmxTiles.h"
#include "codegen/kernels/GmmKernel.h"
#include "codegen/kernels/PackedOperands.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTileRows = 16; // rows of every tile
constexpr int64_t kTileCols = 16; // f32 (i32) columns of an accumulator tile
constexpr int64_t kLanes = 16;
/// AMX rows per task for a large group: the group split evenly into blocks
/// of at most maxRows() rows, each a multiple of kAmxRowGranule.
///
/// With weights packed at load time: as many rows as kRowBlockBytes of
/// packed (bf16) or quantized (int8) rows hold, which stay in the 2 MiB L2
/// of every AMX core while the weights' column pairs go past. Each row
/// block reads its expert's weights once more, so the blocks are as large
/// as L2 keeps: at 256 rows everywhere, an expert of 270 rows (T 4096
/// top-8 with half the slots null, or T 2048) read them twice. Measured on
/// a Sapphire Rapids, H 2048, M 1408, top-8: 320 bf16 rows (1.25 MiB)
/// against 256: T 4096 2-6% faster, half null 6%, T 2048 9-12%; int8 T
/// 4096 4-8%, half null 10%. 448 bf16 rows (1.75 MiB) made T 3072 8%
/// slower, while 448 int8 rows (0.9 MiB) made it 9-12% faster. At least
/// kMinAmxRows, the earlier 256 everywhere (fewer, for bf16 rows past
/// D 2560, were not measured); at most kMaxAmxRows, so that at small
/// depths a hot expert stays several tasks.
///
/// With weights packed per call the worker's packed weight block (1 MiB at
/// H 2048) shares L2 with the rows: kUnpreparedAmxRows (320 made the
/// unprepared bf16 forward 3% slower, the training step no faster).
constexpr int64_t kAmxRowGranule = 32;
constexpr int64_t kRowBlockBytes = 1280 * 1024;
constexpr int64_t kMinAmxRows = 256;
constexpr int64_t kMaxAmxRows = 640;
constexpr int64_t kUnpreparedAmxRows = 256;
/// Tasks of fewer row pairs fetch none of the next pair's lines: with few
/// rows a task streams its weights, and fetching the next pair (up to 32
/// lines a step) made T 16 and T 512 top-8 5-20% slower on a Sapphire
/// Rapids; from 4 pairs on (T 2048 and up at E 60 top-8) it made them
/// 7-11% faster.
constexpr int64_t kMinFetchRowPairs = 4;
/// Tasks of at most 2 row pairs stream their weights from DRAM, faster
/// than the hardware prefetchers fetch them: each step fetches its tiles'
/// lines 4 steps ahead into L2 (SPR, top-8 bf16: T 16 35.8 -> 32.0 ms,
/// T 128 5-7% and T 256 3-5% faster; 8 steps ahead or into L1 no better,
/// 3 row pairs (T 512) no faster).
constexpr int64_t kMaxStreamRowPairs = 2;
constexpr int64_t kStreamAheadSteps = 4;
/// The epilogue's stores miss every cache: a block writes a line (bf16;
/// half a line with SwiGLU, two lines of f32 without) in each of its 32
/// rows, 4 KiB apart in the down projection's [rows, 2048] bf16 output,
/// the first time anything touches them, and the misses hold the fill
/// buffers the tile loads need. Each row r the epilogue stores fetches into L2
/// (prefetcht1) the lines row r + 32 * kOutputFetchRowPairs of the same
/// column pair will store, when the task has that row. On a Sapphire
/// Rapids, int8 T 4096 top-8 (22 depth steps a down-projection block: the
/// most stores a step), the down gmm went from 22-23% to 25% of the INT8
/// peak and the block from 138-139 to 131-132 ms; 1 row pair ahead gained
/// less, 3 about as much, 6 little; prefetchw, or prefetcht0 4 ahead, less.
constexpr int64_t kOutputFetchRowPairs = 2;

class AmxKernel final : public GmmKernel {
public:
  AmxKernel(Emitter &e, const GmmKernelPlan &plan, PackedOperands &ops)
      : GmmKernel(e, plan), ops(ops) {}

  int64_t rowGranule() const override { return kAmxRowGranule; }
  Value rowBlock(Value groupRows) override { return evenRowBlock(e, groupRows, maxRows(), kAmxRowGranule); }
  int64_t columnBlock() const override { return ops.columnBlock(); }
  /// With weights packed at load time there is no weight block to keep: a
  /// task is a whole row block instead, its rows packed once for all its
  /// column blocks. (Packed again for each column block, 11 times in the
  /// up projection at H 2048, M 1408, the packs took a fifth of the time;
  /// with consecutive tasks sharing a row block, each worker packed the
  /// rows the other had packed, a tenth.)
  bool wholeRowBlocks() const override { return p.packedRhs && !p.int8; }
  bool runsRowBlocksTogether() const override { return !p.packedRhs; }
  bool loadsQuantizedRowTiles() const override { return p.int8; }
  void prepare() override {
    if (p.int8)
      ops.quantizeRows();
    tilesGranted = requestAmxTileState(e);
  }
  Value takesGroup(Value groupRows) override {
    return e.andI(tilesGranted, e.ge(groupRows, e.index(std::max<int64_t>(p.amxMinRows, 1))));
  }
  void allocScratch() override;
  void emitTask(const GmmTask &task) override;

private:
  /// The most rows of a row block (kRowBlockBytes; kUnpreparedAmxRows).
  int64_t maxRows() const {
    if (!p.packedRhs)
      return kUnpreparedAmxRows;
    int64_t rowBytes = std::max<int64_t>(p.int8 ? ops.quantizedRowBytes() : 2 * ops.paddedDepth, 64);
    int64_t rows = kRowBlockBytes / rowBytes / kAmxRowGranule * kAmxRowGranule;
    return std::clamp(rows, kMinAmxRows, kMaxAmxRows);
  }
  void packRows(Value r0, Value r1, Value rowsPadded);
  /// Depth step `ks` of the block of row pair `rowPair` (from `firstRow` of
  /// the quantized rows, int8, or of the task's packed rows, bf16, firstRow
  /// 0) and column pair `colPair`: the four products on `sums`.
  SmallVector<Value> stepProducts(Value rowPair, Value colPair, Value firstRow, Value ks, ValueRange sums);
  /// Row `i` (0..31) of block `block` (the task's blocks: column pairs
  /// outside, row pairs inside) from half `half` of the blocks' sums to the
  /// output.
  void epilogueRow(const GmmTask &task, Value block, Value rowPairs, Value half, Value c0, Value i);
  /// The task's blocks of column block `cb`, whose weights are `colPairs`
  /// column pairs (ensureWeights), against its `rowPairs` row pairs
  /// (`firstRow` as in stepProducts); `nextWeights`: the weight block the
  /// worker likely multiplies next (packed at load time; else null).
  void emitColumnBlock(const GmmTask &task, Value cb, Value colPairs, Value rowPairs, Value firstRow,
                       Value nextWeights);

  PackedOperands &ops;
  Value tilesGranted;
  Value packedRows; // bf16: the task's rows as tiles (int8 tiles load the quantized rows in place)
  Value rowsKey;    // bf16: the first row of the row block packedRows holds (-1: none yet)
  AmxBlockScratch blockScratch;
  /// Weights packed at load time: what each step fetches of the next
  /// column pair's weights (stepProducts; `fetching`, i1: whether it
  /// does), or, for a task of few rows, of its own tiles ahead.
  struct {
    Value fetching, linesPerStep, steps, colPairs;
    Value nextWeights; // the weight block of the worker's likely next task
    Value streaming;   // i1: fetch the task's own tiles a few steps ahead instead
  } fetch;
};
} // namespace

void AmxKernel::allocScratch() {
  auto &b = e.b;
  ops.allocWeightCache();
  if (!p.int8) {
    packedRows = e.alloc({maxRows() / kTileRows, ops.paddedDepth / ops.tileDepth, kTileRows, ops.tileDepth},
                         b.getBF16Type(), {});
    if (!wholeRowBlocks()) {
      rowsKey = e.alloc({1}, b.getIndexType(), {});
      e.store(e.index(-1), rowsKey, {e.index(0)});
    }
  }
  blockScratch = allocAmxBlockScratch(e, p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type()));
}

void AmxKernel::packRows(Value r0, Value r1, Value rowsPadded) {
  auto &b = e.b;
  Type bf16 = b.getBF16Type();
  auto rowType = VectorType::get({ops.tileDepth}, bf16);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(rowType, b.getZeroAttr(bf16)));
  Value zero = e.index(0), steps = e.index(ops.paddedDepth / ops.tileDepth);
  e.forLoop(zero, rowsPadded, [&](Value i) {
    Value r = e.add(r0, i);
    Value tile = e.divs(i, e.index(kTileRows)), inTile = e.rems(i, e.index(kTileRows));
    auto rowIf = scf::IfOp::create(b, TypeRange{}, e.lt(r, r1), /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rowIf.thenBlock()->getTerminator());
    Value src = lhsRow(e, p, r);
    e.forLoop(zero, steps, [&](Value ks) {
      Value k = e.mul(ks, e.index(ops.tileDepth));
      Value mask = lanesBelow(e, k, e.index(p.depth), ops.tileDepth);
      Value v = vector::MaskedLoadOp::create(b, rowType, p.lhs, ValueRange{src, k}, mask, zeros);
      vector::StoreOp::create(b, v, packedRows, ValueRange{tile, ks, inTile, zero});
    });
    // Padding rows: zeros, so that they cannot carry NaNs into anything.
    b.setInsertionPoint(rowIf.elseBlock()->getTerminator());
    e.forLoop(zero, steps, [&](Value ks) {
      vector::StoreOp::create(b, zeros, packedRows, ValueRange{tile, ks, inTile, zero});
    });
  });
}

SmallVector<Value> AmxKernel::stepProducts(Value rowPair, Value colPair, Value firstRow, Value ks,
                                           ValueRange sums) {
  auto &b = e.b;
  Type operand = p.int8 ? Type(b.getI8Type()) : Type(b.getBF16Type());
  Type sum = p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto operandType = amx::TileType::get({kTileRows, ops.tileDepth}, operand);
  auto accType = amx::TileType::get({kTileRows, kTileCols}, sum);
  Value zero = e.index(0), one = e.index(1), two = e.index(2);
  Value rt0 = e.mul(rowPair, two), rt1 = e.add(rt0, one);
  Value ct0 = e.mul(colPair, two), ct1 = e.add(ct0, one);
  // The row tiles: the task's packed rows (bf16), or 16 quantized rows read
  // in place (int8: the buffer's row stride is the tile stride).
  auto rowTile = [&](Value rt) -> Value {
    if (!p.int8)
      return amx::TileLoadOp::create(b, operandType, packedRows, ValueRange{rt, ks, zero, zero});
    Value row = e.add(firstRow, e.mul(rt, e.index(kTileRows)));
    return amx::TileLoadOp::create(b, operandType, ops.quantizedRows(),
                                   ValueRange{row, e.mul(ks, e.index(ops.tileDepth))});
  };
  auto product = [&](Value a, Value w, Value c) -> Value {
    if (p.int8) // tdpbsud: signed rows, weights offset to unsigned
      return amx::TileMulIOp::create(b, accType, a, w, c, /*isZextLhs=*/false, /*isZextRhs=*/true);
    return amx::TileMulFOp::create(b, accType, a, w, c);
  };
  // The four operand tiles before the four products (emitAmxBlocks): loaded
  // between them, the second row tile's live range began after the first's
  // ended, LLVM gave both one register, and each load waited for the two
  // products reading the other.
  Value kp = e.mul(ks, e.index(kTileRows));
  Value a0 = rowTile(rt0), a1 = rowTile(rt1);
  Value b0 = amx::TileLoadOp::create(b, operandType, ops.packedWeights(), ValueRange{ct0, kp, zero});
  Value b1 = amx::TileLoadOp::create(b, operandType, ops.packedWeights(), ValueRange{ct1, kp, zero});
  if (fetch.fetching) {
    // The next column pair's weight lines into L2 (after the task's last
    // pair: the first of the block the worker likely multiplies next);
    // tasks that fetch none skip the step's bookkeeping too.
    e.ifThen(fetch.fetching, [&] {
      Value lanes = e.index(ops.paddedDepth / ops.depthPerLane);
      Value u = e.add(e.mul(rowPair, fetch.steps), ks);
      Value inTask = e.lt(e.add(colPair, one), fetch.colPairs);
      Value weights = arith::SelectOp::create(b, inTask, ops.packedWeights(), fetch.nextWeights);
      Value nextTile = e.select(inTask, e.mul(e.add(colPair, one), two), zero);
      e.forLoop(zero, fetch.linesPerStep, [&](Value j) {
        Value line = e.add(e.mul(u, fetch.linesPerStep), j);
        e.ifThen(e.lt(line, e.mul(lanes, two)), [&] {
          Value second = e.ge(line, lanes);
          Value tile = e.select(second, e.add(nextTile, one), nextTile);
          Value lane = e.select(second, e.sub(line, lanes), line);
          memref::PrefetchOp::create(b, weights, ValueRange{tile, lane, zero}, /*isWrite=*/false,
                                     /*localityHint=*/2, /*isDataCache=*/true);
        });
      });
    });
  }
  if (fetch.streaming) {
    // A streaming task's own tiles, kStreamAheadSteps depth steps ahead
    // (clamped to the pair's last lane: the next pair's first lines are
    // the hardware prefetchers' to find).
    Value lastLane = e.index(ops.paddedDepth / ops.depthPerLane - 1);
    Value aheadLane = e.mul(e.add(ks, e.index(kStreamAheadSteps)), e.index(kTileRows));
    e.ifThen(fetch.streaming, [&] {
      for (int64_t j = 0; j < kTileRows; ++j) {
        Value lane = e.min(e.add(aheadLane, e.index(j)), lastLane);
        for (Value tile : {ct0, ct1})
          memref::PrefetchOp::create(b, ops.packedWeights(), ValueRange{tile, lane, zero}, /*isWrite=*/false,
                                     /*localityHint=*/2, /*isDataCache=*/true);
      }
    });
  }
  return {product(a0, b0, sums[0]), product(a0, b1, sums[1]), product(a1, b0, sums[2]), product(a1, b1, sums[3])};
}

void AmxKernel::epilogueRow(const GmmTask &task, Value block, Value rowPairs, Value half, Value c0, Value i) {
  auto &b = e.b;
  Type sum = p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto vecType = VectorType::get({kLanes}, sum);
  Value colPair = e.divs(block, rowPairs), rowPair = e.rems(block, rowPairs);
  Value r = e.add(task.firstRow, e.add(e.mul(rowPair, e.index(2 * kTileRows)), i));
  e.ifThen(e.lt(r, task.endRow), [&] {
    Value v0 = vector::LoadOp::create(b, vecType, blockScratch.sums, ValueRange{half, i, e.index(0)});
    Value v1 = vector::LoadOp::create(b, vecType, blockScratch.sums, ValueRange{half, i, e.index(kTileCols)});
    if (p.int8) {
      Value g = task.group;
      // The rows are quantized in order (keepRowOrder): row r's is r.
      v0 = ops.dequantizeSums(ops.withoutWeightOffset(v0, r), r, g, ops.tileColumns(c0, colPair, 0));
      v1 = ops.dequantizeSums(ops.withoutWeightOffset(v1, r), r, g, ops.tileColumns(c0, colPair, 1));
    }
    ops.storePair(r, task.group, colPair, c0, v0, v1);
    // The lines row r + 32 * kOutputFetchRowPairs stores for this column
    // pair, into L2.
    Value ahead = e.add(r, e.index(2 * kTileRows * kOutputFetchRowPairs));
    e.ifThen(e.lt(ahead, task.endRow), [&] { ops.fetchPairOutput(ahead, colPair, c0); });
  });
}

void AmxKernel::emitTask(const GmmTask &task) {
  Value r0 = task.firstRow, r1 = task.endRow, g = task.group;
  Value zero = e.index(0), one = e.index(1);
  int64_t pairRows = 2 * kTileRows;
  Value rowPairs = e.divs(e.add(e.sub(r1, r0), e.index(pairRows - 1)), e.index(pairRows));
  if (p.int8) {
    // The tiles read the quantized rows from r0 on: rows past r1 are the
    // range's next row block's, the next group's or the zero padding past
    // the last row, computed and never stored.
    Value colPairs = ops.ensureWeights(g, task.columnBlock);
    Value next = p.packedRhs ? ops.weightBlock(task.nextGroup, task.nextColumnBlock) : Value();
    emitColumnBlock(task, task.columnBlock, colPairs, rowPairs, r0, next);
    return;
  }
  Value rowsPadded = e.mul(rowPairs, e.index(pairRows));
  if (!wholeRowBlocks()) {
    // A task of one column block: its weight block (packed unless the
    // worker holds it), then its rows, packed already when the worker's
    // previous task had the same row block (a group of one row block,
    // whose column blocks alternate between the workers).
    Value colPairs = ops.ensureWeights(g, task.columnBlock);
    e.ifThen(arith::CmpIOp::create(e.b, arith::CmpIPredicate::ne, e.load(rowsKey, {zero}), r0), [&] {
      packRows(r0, r1, rowsPadded);
      e.store(r0, rowsKey, {zero});
    });
    emitColumnBlock(task, task.columnBlock, colPairs, rowPairs, zero, Value());
    return;
  }
  packRows(r0, r1, rowsPadded);
  // The task's column blocks; after the last, the worker's likely next
  // task's first.
  Value last = e.sub(task.columnBlockEnd, one);
  e.forLoop(task.columnBlock, task.columnBlockEnd, [&](Value cb) {
    Value colPairs = ops.ensureWeights(g, cb);
    Value isLast = arith::CmpIOp::create(e.b, arith::CmpIPredicate::eq, cb, last);
    Value nextGroup = e.select(isLast, task.nextGroup, g);
    Value nextBlock = e.select(isLast, task.nextColumnBlock, e.min(e.add(cb, one), last));
    emitColumnBlock(task, cb, colPairs, rowPairs, zero, ops.weightBlock(nextGroup, nextBlock));
  });
}

void AmxKernel::emitColumnBlock(const GmmTask &task, Value cb, Value colPairs, Value rowPairs, Value firstRow,
                                Value nextWeights) {
  Value c0 = ops.firstColumn(cb);
  // Blocks of 32 rows x 32 columns over the whole depth, column pairs
  // outside and row pairs inside: a column pair's weight tiles are read
  // from L2 by all its row pairs but the first, which reads them from
  // farther away - from L2 too when they were fetched during the pair
  // before (fetch).
  Value steps = e.index(ops.paddedDepth / ops.tileDepth);
  fetch = {};
  if (nextWeights) {
    // The next pair's lines spread evenly over the current pair's steps.
    int64_t pairLines = 2 * ops.paddedDepth / ops.depthPerLane;
    Value span = e.mul(rowPairs, steps);
    Value perStep = e.divs(e.add(e.index(pairLines), e.sub(span, e.index(1))), span);
    fetch = {e.ge(rowPairs, e.index(kMinFetchRowPairs)), perStep, steps, colPairs, nextWeights,
             e.lt(rowPairs, e.index(kMaxStreamRowPairs + 1))};
  }
  Value rowPair, colPair; // the block's, set before its steps
  emitAmxBlocks(
      e, blockScratch, e.mul(colPairs, rowPairs), steps,
      [&](Value block) {
        colPair = e.divs(block, rowPairs), rowPair = e.rems(block, rowPairs);
        return amxZeroAccumulators(e, blockScratch);
      },
      [&](Value, Value ks, ValueRange sums) { return stepProducts(rowPair, colPair, firstRow, ks, sums); },
      [&](Value block, Value half, Value i) { epilogueRow(task, block, rowPairs, half, c0, i); });
}

// Tile code compiles for any x86-64 target (the outlined function carries
// it); whether it may run is asked at run time (requestAmxTileState).
const GmmKernelKind mlir::moe::codegen::kAmxBf16Kernel = {
    "amx_bf16", {}, /*usesTiles=*/true,
    [](Emitter &e, const GmmKernelPlan &plan, PackedOperands &shared) -> std::unique_ptr<GmmKernel> {
      if (plan.int8)
        return nullptr;
      return std::make_unique<AmxKernel>(e, plan, shared);
    }};

const GmmKernelKind mlir::moe::codegen::kAmxInt8Kernel = {
    "amx_int8", {}, /*usesTiles=*/true,
    [](Emitter &e, const GmmKernelPlan &plan, PackedOperands &shared) -> std::unique_ptr<GmmKernel> {
      if (!plan.int8)
        return nullptr;
      return std::make_unique<AmxKernel>(e, plan, shared);
    }};
