//===- FmaKernel.cpp - fma: AVX-512 FMA register tiles ---------------------===//
//
// A task of the fast gmm as a register-tiled, cache-blocked kernel written
// in the vector dialect, which LLVM turns into AVX-512 FMAs with embedded
// broadcasts (f32 operands, or bf16 ones widened once):
//
//   task   = for each depth block (kc): pack the weight block into panels of
//            nr = 16*nv columns (f32, contiguous: no cache-set conflicts from
//            the weight's row stride, bf16 widened once; or read the panels
//            moe.pack_weights made at load time), then for each
//            register tile of mr rows (bf16 rows widened into an f32 block
//            first) and each panel, mr x nv accumulators of vector<16xf32>
//            over the depth block
//   prepared panels: a task of one register tile of rows (decode sizes)
//            reads them in a tile of exactly its rows, its panels front to
//            back (one run of memory), fetching ahead, bf16 widened there;
//            a task of more reads f32 ones in place and widens bf16 ones
//            into the worker's block once per depth block, for all its tiles
//
// Fusions, each optional (moe-select-lowering decides what the IR allows):
//   - gather: rows are read from `x[perm[r] / K]` (the pack's gather), so the
//     packed [T*K, H] rows never exist;
//   - SwiGLU: a panel holds nr/2 gate and nr/2 up columns, and the last depth
//     block writes silu(gate) * up: the [T*K, 2M] hidden never reaches memory.
//     With one vector a row (nv = 1, AVX2's 6 x 16 tile) the vector is split:
//     lanes 0-7 gate, 8-15 up (or 8 interleaved pairs), 8 outputs a panel.
//
// Why by hand: upstream's linalg tiling + vectorization gives a tiled matmul,
// but not grouped rows with a data-dependent row-to-weight map, a gathered
// left operand, or an epilogue that pairs columns N apart.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <optional>

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
// Weight rows fetched ahead of the packing. A block's part of a weight row
// is a few cache lines (AVX2's SwiGLU gmm, nc = 96: 48 gate and 48 up
// columns, three lines each, the next row 11 KiB on, in another page), too
// short a stream for the hardware prefetcher, so every row was a miss to
// DRAM.
constexpr int64_t kPrefetchRows = 16;
// How far ahead in its block of prepared panels a task of one register
// tile fetches. The block is one contiguous stream, but at decode sizes
// (T 16 top-8, about two rows an expert) the hardware prefetcher alone left
// the memory idle part of the time: bf16 53-61 ms a call (znver3, 874.5
// MiB), 2 KiB ahead 43-54 ms (64 rows of bf16 panels, 32 of f32; 1 and 4
// KiB were no better, 16 KiB slower; measured when a panel was fetched
// alone, before the tile read the block front to back).
constexpr int64_t kPrefetchBytes = 2048;

class FmaKernel final : public GmmKernel {
public:
  FmaKernel(Emitter &e, const GmmKernelPlan &plan)
      : GmmKernel(e, plan), b(e.b), t(plan.tiling), nr(kLanes * t.vectors),
        split(plan.swiglu && t.vectors == 1), outPerPanel(plan.swiglu ? nr / 2 : nr),
        panelsPerBlock(t.columnBlock / nr), vecType(VectorType::get({kLanes}, b.getF32Type())),
        narrowPanels(p.packedRhs && !cast<MemRefType>(p.packedRhs.getType()).getElementType().isF32()) {}

  int64_t rowGranule() const override { return t.rowBlock; }
  /// Whether a task may hold more than one register tile of rows.
  bool severalTiles() const { return t.rowBlock > t.rows; }
  /// The group in even blocks of at most mc rows: 546 rows (T 4096 top-8)
  /// were a task of 510 and one of 36, whose weight block served 6 tiles.
  Value rowBlock(Value groupRows) override { return evenRowBlock(e, groupRows, t.rowBlock, t.rows); }
  int64_t columnBlock() const override { return panelsPerBlock * outPerPanel; }
  void allocScratch() override {
    // The worker's f32 weight block (packed per task, or prepared bf16
    // panels widened for a task of several register tiles) and the partial
    // sums of a task's rows.
    if (!p.packedRhs || (narrowPanels && severalTiles()))
      scratch = e.alloc({panelsPerBlock, t.depthBlock, nr}, b.getF32Type(), {});
    partial = e.alloc({t.rowBlock, panelsPerBlock * nr}, b.getF32Type(), {});
    if (!cast<MemRefType>(p.lhs.getType()).getElementType().isF32())
      wideRows = e.alloc({t.rows, t.depthBlock}, b.getF32Type(), {});
  }
  void emitTask(const GmmTask &task) override { this->task(task); }

private:
  Value splat(double v) {
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, static_cast<float>(v)));
  }
  void packWeights(Value g, Value pc, Value kLen, Value c0, Value panels);
  void packTransposedWeights(Value g, Value pc, Value kLen, Value c0, Value panels);
  /// The left operand rows of the register tile from row `ir`, its first
  /// `m`: where each is read (rows past r1 repeat its last row: computed,
  /// never stored) and, gathered, whether it is a real slot.
  struct TileRows {
    SmallVector<Value> source, valid;
  };
  TileRows tileRows(int64_t m, Value r1, Value ir);
  /// The depth blocks [pc, pc + kLen) of the weights, in order.
  void depthBlocks(llvm::function_ref<void(Value pc, Value kLen)> body);
  /// bf16 rows: the tile's first `m` rows widened into `wideRows` [i][k],
  /// for the panels that depth block's tile reads next (all of the block's;
  /// streamTile's one).
  void widenRows(const TileRows &rows, int64_t m, Value pc, Value kLen);
  /// bf16 panels packed at load time, a task of several register tiles:
  /// the depth block's rows of the task's panels widened into the worker's
  /// f32 block, once for all of them.
  void widenPanels(Value prepared, Value pc, Value kLen, Value panels);
  /// Prepared panels streaming through a task of one register tile
  /// (streamTile): the lines kPrefetchBytes past panel `pi`'s row `row` in
  /// the task's block seen as one run (`stream`), up to its last value.
  struct Stream {
    Value values, last;
  };
  void prefetchPanelRow(const Stream &stream, Value pi, Value row);
  /// Prepared panels, a task of several register tiles: the depth block
  /// its tiles read next (the task's next one, or the first of the block
  /// the worker likely takes next: GmmTask), in the prepared block holding
  /// it seen as one run (`values`), `depth` its first row and `rows` its
  /// rows; fetched at `stride` values a depth step over the current
  /// depth block's tiles.
  struct NextDepthBlock {
    Value values, depth, rows, stride;
  };
  /// A register tile's part of that: its depth steps fetch
  /// values[min(first + k * stride, last)].
  struct Fetch {
    Value values, first, last, stride;
  };
  /// The register tiles of a depth block's rows, all panels, read from
  /// `packed` (the worker's block, or prepared f32 panels found in L2
  /// after the first tile); with `ahead`, fetching it.
  void registerTiles(Value r0, Value r1, Value g, Value c0, Value pc, Value kLen, Value panels,
                     const NextDepthBlock *ahead = nullptr);
  /// The tile's first `m` rows (m <= mr) over panel `pi`'s depth block;
  /// with `stream`, prepared panels read once, fetched ahead; with `fetch`,
  /// that part of the next depth block.
  void registerTile(const TileRows &rows, int64_t m, Value r0, Value r1, Value g, Value ir, Value pi,
                    Value c0, Value pc, Value kLen, const Stream *stream, const Fetch *fetch = nullptr);
  /// Where the weight columns of a panel's vector `v` are, for the panel
  /// writing output columns from `colOut`: runs of consecutive columns of
  /// one weight, each its lanes [lane0, lane0 + lanes) of the vector, with
  /// the weight, its first column, the end of its columns, and its bias. One
  /// run of 16 lanes, or with a split vector the gate's 8 and the up's 8.
  struct VectorColumns {
    Value weight, column, limit, bias;
    int64_t lane0 = 0, lanes = kLanes;
  };
  SmallVector<VectorColumns, 2> vectorRuns(int64_t v, Value colOut);
  /// The one run of an unsplit vector.
  VectorColumns vectorColumns(int64_t v, Value colOut) {
    SmallVector<VectorColumns, 2> runs = vectorRuns(v, colOut);
    assert(runs.size() == 1 && "a split vector has two runs");
    return runs.front();
  }
  /// Lanes [lane0, lane0 + lanes) of `v`.
  Value lanesOf(Value v, int64_t lane0, int64_t lanes) {
    return vector::ShuffleOp::create(b, v, v, llvm::to_vector(llvm::seq<int64_t>(lane0, lane0 + lanes)));
  }
  void task(const GmmTask &task);
  /// A task of one register tile of rows reading prepared panels: each
  /// panel row once, from memory, fetched ahead.
  void streamTile(Value r0, Value r1, Value g, Value c0, Value panels);
  /// streamTile's tile of `m` rows, the task's count.
  void streamTileOf(int64_t m, Value r0, Value r1, Value g, Value c0, Value panels);

  ImplicitLocOpBuilder &b;
  const GmmTiling &t;
  int64_t nr;
  // A SwiGLU's gate and up columns share each vector (nv = 1).
  bool split;
  int64_t outPerPanel, panelsPerBlock;
  VectorType vecType;
  Value scratch, partial; // the worker's scratch
  // The panels the register tiles read: `scratch`, or the task's block of
  // prepared ones.
  Value packed;
  // bf16 rows widened, [mr, kc], once per register tile and depth block for
  // all its panels (streamTile's tile: for each panel, m x kc values beside
  // the tile's kc x m FMAs a vector; null for f32 rows, broadcast in place). Broadcast in
  // place, a bf16 value is a load, a shift and a broadcast, three times an
  // f32 one's uops: with AVX2's 6-row tile the bf16 forward at T 4096 top-2
  // (znver3) took 1.72-1.78 s that way, 1.08-1.12 s widened first.
  Value wideRows;
  // Where a depth block starts in `packed`: 0 in the worker's block, the
  // block's first depth row in weights packed at load time (all of D).
  Value packedDepth;
  // bf16 panels packed at load time: half the bytes of f32 ones, which is
  // what bounds a decode-size batch. A task of one register tile (decode)
  // widens them in the tile as it reads them: at T 16 top-8 (znver3) a
  // block widened first, then read by the tile, streamed at 11-13 GB/s,
  // the memory idle while the tile ran. A task of more widens a depth
  // block once for all its tiles: widened (and fetched ahead) in every
  // tile, the bf16 forward at T 4096 top-8 lost 5-20%.
  bool narrowPanels;
};

SmallVector<FmaKernel::VectorColumns, 2> FmaKernel::vectorRuns(int64_t v, Value colOut) {
  Value width = e.index(p.width);
  Value offset = e.index(p.upOffset);
  if (p.swiglu && p.interleaved)
    // Gate and up alternate: the panel's 2 x outPerPanel weight columns.
    return {{p.gateRhs, e.add(e.mul(colOut, e.index(2)), e.index(v * kLanes)),
             e.mul(width, e.index(2)), p.gateBias}};
  if (split)
    return {{p.gateRhs, colOut, width, p.gateBias, 0, kLanes / 2},
            {p.upRhs, e.add(colOut, offset), e.add(width, offset), p.upBias, kLanes / 2, kLanes / 2}};
  if (p.swiglu && v >= t.vectors / 2)
    return {{p.upRhs, e.add(e.add(colOut, offset), e.index((v - t.vectors / 2) * kLanes)),
             e.add(width, offset), p.upBias}};
  return {{p.gateRhs, e.add(colOut, e.index(v * kLanes)), width, p.gateBias}};
}

void FmaKernel::packWeights(Value g, Value pc, Value kLen, Value c0, Value panels) {
  if (p.transposeRhs) {
    packTransposedWeights(g, pc, kLen, c0, panels);
    return;
  }
  Value zero = e.index(0);
  // Weight rows in memory order (a row of the block is contiguous; a new
  // row is a new page, which the hardware prefetcher does not cross).
  e.forLoop(zero, kLen, [&](Value k) {
    Value depthRow = e.add(pc, k);
    // The row kPrefetchRows ahead (clamped to the weight: a prefetch of a
    // real line).
    Value ahead = e.min(e.add(depthRow, e.index(kPrefetchRows)), e.index(p.depth - 1));
    e.forLoop(zero, panels, [&](Value pi) {
      Value colOut = e.add(c0, e.mul(pi, e.index(outPerPanel)));
      for (int64_t v = 0; v < t.vectors; ++v)
        for (const VectorColumns &run : vectorRuns(v, colOut)) {
          Value src = run.weight, col = run.column, limit = run.limit;
          // A line per run, for the pack of the row kPrefetchRows on.
          memref::PrefetchOp::create(b, src, ValueRange{g, ahead, e.min(col, e.sub(limit, e.index(1)))},
                                     /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
          // Widened, zeros past the weight (VectorPieces.cpp: no masked or
          // branch-crossing bf16 vectors, which AVX2 takes a lane at a time).
          Value vec = loadColumnsAsF32(e, src, ValueRange{g, depthRow}, col, limit, run.lanes);
          vector::StoreOp::create(b, vec, scratch, ValueRange{pi, k, e.index(v * kLanes + run.lane0)});
        }
    });
  });
}

/// The 8 x 8 transpose of eight vector<8xf32> rows as vector.shuffles (the
/// unpack / shuffle / 128-bit permute sequence, 24 shuffles), which LLVM
/// selects for any x86-64 target. Why not x86vector's transpose8x8xf32: it
/// blends through inline assembly (vblendps), an AVX instruction whatever
/// the compile target.
static void transpose8x8(ImplicitLocOpBuilder &b, SmallVectorImpl<Value> &rows) {
  auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
    return vector::ShuffleOp::create(b, x, y, mask);
  };
  // Pairs of rows interleaved within each 128-bit half.
  SmallVector<Value, 8> t(8), s(8);
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = shuffle(rows[2 * i], rows[2 * i + 1], {0, 8, 1, 9, 4, 12, 5, 13});
    t[2 * i + 1] = shuffle(rows[2 * i], rows[2 * i + 1], {2, 10, 3, 11, 6, 14, 7, 15});
  }
  // Four rows' values of columns (j, j + 4) for j = 0..3, rows 0-3 in s[0..3]
  // and rows 4-7 in s[4..7].
  for (int h = 0; h < 2; ++h) {
    Value lo0 = t[4 * h], hi0 = t[4 * h + 1], lo1 = t[4 * h + 2], hi1 = t[4 * h + 3];
    s[4 * h + 0] = shuffle(lo0, lo1, {0, 1, 8, 9, 4, 5, 12, 13});
    s[4 * h + 1] = shuffle(lo0, lo1, {2, 3, 10, 11, 6, 7, 14, 15});
    s[4 * h + 2] = shuffle(hi0, hi1, {0, 1, 8, 9, 4, 5, 12, 13});
    s[4 * h + 3] = shuffle(hi0, hi1, {2, 3, 10, 11, 6, 7, 14, 15});
  }
  // Column j: the low halves of s[j] and s[j + 4]; column j + 4: the high ones.
  for (int j = 0; j < 4; ++j) {
    rows[j] = shuffle(s[j], s[j + 4], {0, 1, 2, 3, 8, 9, 10, 11});
    rows[j + 4] = shuffle(s[j], s[j + 4], {4, 5, 6, 7, 12, 13, 14, 15});
  }
}

void FmaKernel::packTransposedWeights(Value g, Value pc, Value kLen, Value c0, Value panels) {
  // rhs [E, N, D]: a panel vector's 16 columns are 16 rows of the weight.
  // Eight of them are read 8 depth values at a time (contiguous), turned in
  // registers and stored as 8 packed rows of 8 columns. Gathered a scalar
  // at a time (as before), the 16 reads sat one weight row apart (8 KiB for
  // D = 2048): all in one 8-way L1 set, so nearly every one missed L1.
  Value zero = e.index(0);
  Type element = cast<MemRefType>(p.gateRhs.getType()).getElementType();
  auto rowType = VectorType::get({8}, element);
  auto f32Row = VectorType::get({8}, b.getF32Type());
  Value zeroRow = arith::ConstantOp::create(b, DenseElementsAttr::get(f32Row, 0.0f));
  // Depth values in whole 8s; the rest (D % 8) a scalar at a time.
  Value kWhole = e.mul(e.divs(kLen, e.index(8)), e.index(8));
  e.forLoop(zero, panels, [&](Value pi) {
    Value colOut = e.add(c0, e.mul(pi, e.index(outPerPanel)));
    for (int64_t v = 0; v < t.vectors; ++v)
      for (const VectorColumns &vc : vectorRuns(v, colOut)) {
        Value limit = vc.limit, last = e.sub(vc.limit, e.index(1));
        for (int64_t half = 0; half < vc.lanes / 8; ++half) {
          // The eight weight rows (past the weight: its last row, zeroed).
          SmallVector<Value> rowAt, live;
          for (int64_t i = 0; i < 8; ++i) {
            Value c = e.add(vc.column, e.index(half * 8 + i));
            rowAt.push_back(e.min(c, last));
            live.push_back(e.lt(c, limit));
          }
          // The next eight weight rows (the block's next eight columns, or
          // the next block's first: clamped to the weight): each depth step
          // fetches theirs at its own depth, so that they are on their way
          // while these eight are turned. Each row's part of the block is
          // kc values (2 KiB of f32 at kc 512), too short a stream for the
          // hardware prefetcher to ramp up on. Measured (AMD EPYC znver5, 2
          // threads, T 512 top-8 f32 forward_backward, --stage-timing, 11
          // alternating pairs): the backward's gmm^T 4096x2048 190.8 ->
          // 171.8 ms and 4096x1408 90.4 -> 86.9 ms (medians of the last
          // 5); a fetch twice as far ahead in depth gained no more.
          SmallVector<Value> nextRow;
          for (int64_t i = 0; i < 8; ++i)
            nextRow.push_back(e.min(e.add(vc.column, e.index(half * 8 + 8 + i)), last));
          e.forLoop(zero, kWhole, e.index(8), {}, [&](Value k, ValueRange) -> SmallVector<Value> {
            Value depthAt = e.add(pc, k);
            for (Value r : nextRow)
              memref::PrefetchOp::create(b, vc.weight, ValueRange{g, r, depthAt},
                                         /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
            SmallVector<Value> rows;
            for (int64_t i = 0; i < 8; ++i) {
              Value r = vector::LoadOp::create(b, rowType, vc.weight, ValueRange{g, rowAt[i], depthAt});
              if (!element.isF32())
                r = arith::ExtFOp::create(b, f32Row, r);
              rows.push_back(arith::SelectOp::create(b, live[i], r, zeroRow));
            }
            transpose8x8(b, rows);
            for (int64_t q = 0; q < 8; ++q)
              vector::StoreOp::create(
                  b, rows[q], scratch,
                  ValueRange{pi, e.add(k, e.index(q)), e.index(v * kLanes + vc.lane0 + half * 8)});
            return {};
          });
          e.forLoop(kWhole, kLen, [&](Value k) {
            for (int64_t i = 0; i < 8; ++i) {
              Value x = e.loadF32(vc.weight, {g, rowAt[i], e.add(pc, k)});
              x = arith::SelectOp::create(b, live[i], x, e.f32(0.0));
              memref::StoreOp::create(b, x, scratch,
                                      ValueRange{pi, k, e.index(v * kLanes + vc.lane0 + half * 8 + i)});
            }
          });
        }
      }
  });
}

FmaKernel::TileRows FmaKernel::tileRows(int64_t m, Value r1, Value ir) {
  Value zero = e.index(0), one = e.index(1);
  TileRows rows;
  for (int64_t i = 0; i < m; ++i) {
    Value r = e.min(e.add(ir, e.index(i)), e.sub(r1, one));
    rows.source.push_back(lhsRow(e, p, r));
    if (p.perm)
      rows.valid.push_back(e.ge(e.toIndex(e.load(p.perm, {r})), zero));
  }
  return rows;
}

void FmaKernel::widenPanels(Value prepared, Value pc, Value kLen, Value panels) {
  // A panel's depth rows are contiguous: nr values each, whole vectors.
  auto narrow = VectorType::get({kLanes}, cast<MemRefType>(prepared.getType()).getElementType());
  Value zero = e.index(0);
  e.forLoop(zero, panels, [&](Value pi) {
    e.forLoop(zero, kLen, [&](Value k) {
      for (int64_t v = 0; v < t.vectors; ++v) {
        Value x =
            vector::LoadOp::create(b, narrow, prepared, ValueRange{pi, e.add(pc, k), e.index(v * kLanes)});
        vector::StoreOp::create(b, arith::ExtFOp::create(b, vecType, x), scratch,
                                ValueRange{pi, k, e.index(v * kLanes)});
      }
    });
  });
}

void FmaKernel::prefetchPanelRow(const Stream &stream, Value pi, Value row) {
  // The task reads its panels front to back (streamTile), one after the
  // other in memory, so the fetch runs kPrefetchBytes ahead in the block
  // seen as one run of values (past a panel's last row: the next panel's
  // first ones), up to its last value. Kept to an add and a min a depth
  // step: as a panel and row (a division by D) it was 14 integer
  // instructions beside a one-row tile's 2 FMAs.
  int64_t bits = cast<MemRefType>(packed.getType()).getElementTypeBitWidth();
  int64_t ahead = std::max<int64_t>(nr, kPrefetchBytes * 8 / bits);
  Value at = e.add(e.mul(e.add(e.mul(pi, e.index(p.depth)), row), e.index(nr)), e.index(ahead));
  // A prefetch per cache line of the row (one for a bf16 row of 16, which
  // is half a line: the line a row on is fetched twice, a cheap no-op).
  int64_t perLine = 64 * 8 / bits;
  for (int64_t c = 0; c < nr; c += perLine)
    memref::PrefetchOp::create(b, stream.values, ValueRange{e.min(e.add(at, e.index(c)), stream.last)},
                               /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
}

void FmaKernel::widenRows(const TileRows &rows, int64_t m, Value pc, Value kLen) {
  // 16 values of a row at a time, the rest (kLen % 16) one by one.
  Type element = cast<MemRefType>(p.lhs.getType()).getElementType();
  auto narrow = VectorType::get({kLanes}, element);
  Value whole = e.mul(e.divs(kLen, e.index(kLanes)), e.index(kLanes));
  for (int64_t i = 0; i < m; ++i) {
    e.forLoop(e.index(0), whole, e.index(kLanes), {}, [&](Value k, ValueRange) -> SmallVector<Value> {
      Value v = vector::LoadOp::create(b, narrow, p.lhs, ValueRange{rows.source[i], e.add(pc, k)});
      vector::StoreOp::create(b, arith::ExtFOp::create(b, vecType, v), wideRows, ValueRange{e.index(i), k});
      return {};
    });
    e.forLoop(whole, kLen, [&](Value k) {
      memref::StoreOp::create(b, e.loadF32(p.lhs, {rows.source[i], e.add(pc, k)}), wideRows,
                              ValueRange{e.index(i), k});
    });
  }
}

void FmaKernel::registerTile(const TileRows &rows, int64_t m, Value r0, Value r1, Value g, Value ir,
                             Value pi, Value c0, Value pc, Value kLen, const Stream *stream,
                             const Fetch *fetch) {
  Value zero = e.index(0);
  Value rowsHere = e.sub(r1, ir);
  const SmallVector<Value> &srcRow = rows.source, &valid = rows.valid;
  Value isFirst = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pc, zero);
  Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, e.add(pc, kLen),
                                       e.index(p.depth));
  Value tileRow = e.sub(ir, r0);
  int64_t accCount = m * t.vectors;
  SmallVector<Type> accTypes(accCount, vecType);

  {
    Value panelCol = e.mul(pi, e.index(nr));
    // Accumulators: zero on the first depth block, else the partial sums.
    auto init = scf::IfOp::create(b, accTypes, isFirst, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(init.thenBlock());
      Value z = splat(0.0);
      scf::YieldOp::create(b, SmallVector<Value>(accCount, z));
      b.setInsertionPointToStart(init.elseBlock());
      SmallVector<Value> loaded;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t v = 0; v < t.vectors; ++v)
          loaded.push_back(vector::LoadOp::create(
              b, vecType, partial,
              ValueRange{e.add(tileRow, e.index(i)), e.add(panelCol, e.index(v * kLanes))}));
      scf::YieldOp::create(b, loaded);
    }
    SmallVector<Value> acc = e.forLoop(
        zero, kLen, init.getResults(), [&](Value k, ValueRange in) -> SmallVector<Value> {
          SmallVector<Value> w;
          if (stream)
            prefetchPanelRow(*stream, pi, e.add(packedDepth, k));
          if (fetch)
            memref::PrefetchOp::create(
                b, fetch->values, ValueRange{e.min(e.add(fetch->first, e.mul(k, fetch->stride)), fetch->last)},
                /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
          auto panelType = VectorType::get({kLanes}, cast<MemRefType>(packed.getType()).getElementType());
          for (int64_t v = 0; v < t.vectors; ++v) {
            Value x = vector::LoadOp::create(b, panelType, packed,
                                             ValueRange{pi, e.add(packedDepth, k), e.index(v * kLanes)});
            w.push_back(panelType == vecType ? x : arith::ExtFOp::create(b, vecType, x).getResult());
          }
          Value depthCol = e.add(pc, k);
          SmallVector<Value> out(in.begin(), in.end());
          for (int64_t i = 0; i < m; ++i) {
            Value x = wideRows ? memref::LoadOp::create(b, wideRows, ValueRange{e.index(i), k}).getResult()
                               : e.loadF32(p.lhs, {srcRow[i], depthCol});
            Value a = vector::BroadcastOp::create(b, vecType, x);
            for (int64_t v = 0; v < t.vectors; ++v)
              out[i * t.vectors + v] = vector::FMAOp::create(b, a, w[v], out[i * t.vectors + v]);
          }
          return out;
        });

    auto done = scf::IfOp::create(b, TypeRange{}, isLast, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    // Not the last depth block: keep the partial sums.
    b.setInsertionPoint(done.elseBlock()->getTerminator());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t v = 0; v < t.vectors; ++v)
        vector::StoreOp::create(b, acc[i * t.vectors + v], partial,
                                ValueRange{e.add(tileRow, e.index(i)),
                                           e.add(panelCol, e.index(v * kLanes))});
    // The last: the epilogue writes the output rows that exist.
    b.setInsertionPoint(done.thenBlock()->getTerminator());
    Value colOut = e.add(c0, e.mul(pi, e.index(outPerPanel)));
    Value width = e.index(p.width);
    int64_t outVectors = split ? 1 : p.swiglu ? t.vectors / 2 : t.vectors;
    int64_t outLanes = split ? kLanes / 2 : kLanes;
    for (int64_t i = 0; i < m; ++i) {
      e.ifThen(e.lt(e.index(i), rowsHere), [&] {
        // The sums of vector v (a padding row, which moe.gather_rows gives
        // zeros, has zero sums: its output is the bias through the
        // activation, as unfused).
        auto rawSum = [&](int64_t v) {
          Value s = acc[i * t.vectors + v];
          if (p.perm)
            s = arith::SelectOp::create(b, valid[i], s, splat(0.0));
          return s;
        };
        // The sums with their bias, in the weight's column order.
        auto sum = [&](int64_t v) {
          VectorColumns vc = vectorColumns(v, colOut);
          return plusBias(e, rawSum(v), vc.bias, g, vc.column, vc.limit);
        };
        for (int64_t u = 0; u < outVectors; ++u) {
          Value v;
          if (split && p.interleaved) {
            // 8 gate/up pairs: the vector's halves deinterleaved.
            Value s = sum(0);
            auto [gate, up] = deinterleave(e, lanesOf(s, 0, outLanes), lanesOf(s, outLanes, outLanes));
            v = activation(e, p.activation, gate, up);
          } else if (split) {
            SmallVector<VectorColumns, 2> runs = vectorRuns(0, colOut);
            Value s = rawSum(0);
            auto half = [&](const VectorColumns &run) {
              return plusBias(e, lanesOf(s, run.lane0, run.lanes), run.bias, g, run.column, run.limit);
            };
            v = activation(e, p.activation, half(runs[0]), half(runs[1]));
          } else if (p.swiglu && p.interleaved) {
            auto [gate, up] = deinterleave(e, sum(2 * u), sum(2 * u + 1));
            v = activation(e, p.activation, gate, up);
          } else if (p.swiglu) {
            v = activation(e, p.activation, sum(u), sum(u + outVectors));
          } else {
            v = sum(u);
          }
          storeColumns(e, v, p.out, e.add(ir, e.index(i)), e.add(colOut, e.index(u * outLanes)), width);
        }
      });
    }
  }
}

void FmaKernel::registerTiles(Value r0, Value r1, Value g, Value c0, Value pc, Value kLen, Value panels,
                              const NextDepthBlock *ahead) {
  OpBuilder::InsertionGuard guard(b);
  // Rows outside, panels inside: a register tile's rows of the left operand
  // (mr x kc) stay in L1 while the packed block's panels stream from L2.
  auto rowLoop = scf::ForOp::create(b, r0, r1, e.index(t.rows));
  b.setInsertionPoint(rowLoop.getBody()->getTerminator());
  Value ir = rowLoop.getInductionVar();
  TileRows rows = tileRows(t.rows, r1, ir);
  if (wideRows)
    widenRows(rows, t.rows, pc, kLen);
  auto panelLoop = scf::ForOp::create(b, e.index(0), panels, e.index(1));
  b.setInsertionPoint(panelLoop.getBody()->getTerminator());
  Value pi = panelLoop.getInductionVar();
  std::optional<Fetch> fetch;
  if (ahead) {
    // Panel pi's part of the next depth block ([pi, depth, 0] on, rows x
    // nr values), each tile of rows taking its share of it in turn.
    Value start = e.mul(e.add(e.mul(pi, e.index(p.depth)), ahead->depth), e.index(nr));
    Value tileIndex = e.divs(e.sub(ir, r0), e.index(t.rows));
    fetch = Fetch{ahead->values, e.add(start, e.mul(e.mul(tileIndex, kLen), ahead->stride)),
                  e.sub(e.add(start, e.mul(ahead->rows, e.index(nr))), e.index(1)), ahead->stride};
  }
  registerTile(rows, t.rows, r0, r1, g, ir, pi, c0, pc, kLen, /*stream=*/nullptr, fetch ? &*fetch : nullptr);
}

void FmaKernel::streamTile(Value r0, Value r1, Value g, Value c0, Value panels) {
  // A tile of exactly the task's rows: at decode sizes an expert has a
  // few (T 16 top-8: 0-5, 2.1 on average), and the mr-row tile computed
  // all mr for them. With AVX2's 6-row tile that made a bf16 T 16 call
  // as much FMA work as memory traffic (znver3: about 29 ms of each, so
  // 45-50 ms a call).
  // A tile for every count 1 to mr - 1; mr rows (the most a task here
  // has) the full tile, once.
  SmallVector<int64_t> counts = llvm::to_vector(llvm::seq<int64_t>(1, t.rows));
  emitByRowCount(e, e.sub(r1, r0), counts, t.rows,
                 [&](int64_t m, Value) { streamTileOf(m, r0, r1, g, c0, panels); });
}

void FmaKernel::streamTileOf(int64_t m, Value r0, Value r1, Value g, Value c0, Value panels) {
  // Panels outside, depth blocks inside: the task's block of prepared
  // panels (contiguous, [panels, D, nr]) is read front to back, one stream
  // the prefetches run ahead of, where depth blocks outside read it in
  // kc-row pieces a panel (D x nr) apart.
  OpBuilder::InsertionGuard guard(b);
  TileRows rows = tileRows(m, r1, r0);
  // The block's panels are contiguous ([panels, D, nr] of the prepared
  // weights' [E, P, D, nr]): one run of values.
  Stream stream{memref::CollapseShapeOp::create(b, packed, SmallVector<ReassociationIndices>{{0, 1, 2}}),
                e.sub(e.mul(panels, e.index(p.depth * nr)), e.index(1))};
  auto panelLoop = scf::ForOp::create(b, e.index(0), panels, e.index(1));
  b.setInsertionPoint(panelLoop.getBody()->getTerminator());
  Value pi = panelLoop.getInductionVar();
  depthBlocks([&](Value pc, Value kLen) {
    packedDepth = pc;
    if (wideRows)
      widenRows(rows, m, pc, kLen);
    registerTile(rows, m, r0, r1, g, r0, pi, c0, pc, kLen, &stream);
  });
}

void FmaKernel::depthBlocks(llvm::function_ref<void(Value pc, Value kLen)> body) {
  OpBuilder::InsertionGuard guard(b);
  Value depth = e.index(p.depth);
  auto depthLoop = scf::ForOp::create(b, e.index(0), depth, e.index(t.depthBlock));
  b.setInsertionPoint(depthLoop.getBody()->getTerminator());
  Value pc = depthLoop.getInductionVar();
  body(pc, e.min(e.index(t.depthBlock), e.sub(depth, pc)));
}

void FmaKernel::task(const GmmTask &gmmTask) {
  Value r0 = gmmTask.firstRow, r1 = gmmTask.endRow, g = gmmTask.group, cb = gmmTask.columnBlock;
  int64_t outColumns = panelsPerBlock * outPerPanel;
  Value c0 = e.mul(cb, e.index(outColumns));
  Value cEnd = e.min(e.add(c0, e.index(outColumns)), e.index(p.width));
  Value panels = e.divs(e.add(e.sub(cEnd, c0), e.index(outPerPanel - 1)), e.index(outPerPanel));
  OpBuilder::InsertionGuard guard(b);
  // Depth blocks outside (each read by every register tile of the task)
  // unless the task is one tile of prepared panels (streamTile).
  if (!p.packedRhs) {
    depthBlocks([&](Value pc, Value kLen) {
      packed = scratch;
      packWeights(g, pc, kLen, c0, panels);
      packedDepth = e.index(0);
      registerTiles(r0, r1, g, c0, pc, kLen, panels);
    });
    return;
  }
  // Packed at load time (strategy/PackedLayout.h): the task's panels.
  Value prepared = e.innerBlock(p.packedRhs, {g, e.mul(cb, e.index(panelsPerBlock)), e.index(0), e.index(0)},
                                {panelsPerBlock, p.depth, nr});
  // One register tile of rows (decode sizes): each panel row is read once,
  // from memory.
  packed = prepared;
  if (!severalTiles()) {
    streamTile(r0, r1, g, c0, panels);
    return;
  }
  Value oneTile = e.lt(e.sub(r1, r0), e.index(t.rows + 1));
  auto variant = scf::IfOp::create(b, TypeRange{}, oneTile, /*withElseRegion=*/true);
  b.setInsertionPoint(variant.thenBlock()->getTerminator());
  streamTile(r0, r1, g, c0, panels);
  b.setInsertionPoint(variant.elseBlock()->getTerminator());
  // f32 panels: read in place, as above (the tiles after the first find
  // them in L2). The first tile of a depth block would read it from DRAM:
  // the tiles before fetch it, those of the task's last depth block the
  // next task's first. T 4096 f32 (AMD EPYC znver5, 2 threads): top-2
  // (136 rows an expert, one task a block) 83% -> 88% of the FMA peak,
  // top-8 89% -> 91%; the same block with its weights in L3 ran at 90.5%.
  // Into L2 (prefetcht1), not L1, where the lines would wait a whole depth
  // block beside the panels in use: on a Sapphire Rapids (2 threads) top-2
  // 432-452 ms against prefetcht0's 450-465, top-8 1749-1756 against
  // 1773-1781. (On the Zen 5, 2026-11-29, top-8 1491 / 1541 against 1481 /
  // 1530: the noise there; not measured again.)
  Value depth = e.index(p.depth);
  Value rowTiles = e.divs(e.add(e.sub(r1, r0), e.index(t.rows - 1)), e.index(t.rows));
  depthBlocks([&](Value pc, Value kLen) {
    Value nextDepth = e.add(pc, kLen);
    Value inTask = e.lt(nextDepth, depth);
    Value nextGroup = e.select(inTask, g, gmmTask.nextGroup);
    Value nextColumnBlock = e.select(inTask, cb, gmmTask.nextColumnBlock);
    Value aheadDepth = e.select(inTask, nextDepth, e.index(0));
    Value aheadRows = e.min(e.index(t.depthBlock), e.sub(depth, aheadDepth));
    Value block = e.innerBlock(p.packedRhs, {nextGroup, e.mul(nextColumnBlock, e.index(panelsPerBlock)),
                                             e.index(0), e.index(0)},
                               {panelsPerBlock, p.depth, nr});
    Value values = memref::CollapseShapeOp::create(b, block, SmallVector<ReassociationIndices>{{0, 1, 2}});
    // Its panels' rows over this depth block's steps (rowTiles x kLen a
    // panel), at most a line a step.
    Value steps = e.mul(rowTiles, kLen);
    Value stride = fetchStride(e, values, e.mul(aheadRows, e.index(nr)), steps);
    NextDepthBlock ahead{values, aheadDepth, aheadRows, stride};
    packed = prepared;
    packedDepth = pc;
    if (narrowPanels) {
      widenPanels(prepared, pc, kLen, panels);
      packed = scratch;
      packedDepth = e.index(0);
    }
    registerTiles(r0, r1, g, c0, pc, kLen, panels, &ahead);
  });
}
} // namespace

// vector.fma on 16 f32 lanes, which LLVM legalizes for any x86-64 (AVX-512
// FMAs with embedded broadcasts where the target has them).
const GmmKernelKind mlir::moe::codegen::kFmaKernel = {
    "fma", {}, /*usesTiles=*/false,
    [](Emitter &e, const GmmKernelPlan &plan, PackedOperands &) -> std::unique_ptr<GmmKernel> {
      if (plan.int8)
        return nullptr;
      return std::make_unique<FmaKernel>(e, plan);
    }};
