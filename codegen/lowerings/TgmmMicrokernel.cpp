//===- TgmmMicrokernel.cpp - the fast transposed grouped matmul -----------===//
//
// moe.tgmm, out[e] = lhs_e^T @ rhs_e (the backward's weight gradients), as
// register tiles in the vector dialect:
//
//   tasks  (expert, depth block of kDepthBlock), taken by one worker per
//          thread from a counter (GmmScheduler.h), an expert's depth blocks
//          consecutive: the workers run side by side on one expert, each
//          reading all of its rhs rows, which the others' reads left in the
//          cache. A task walks every column block (128 columns, 256 with a
//          2 MiB L2; bf16 pairs: 512) of its depth block.
//   chunks for each column block, the task walks its group's rows in equal
//          chunks of at most kRowChunk: the chunk's
//          rhs[r, block's columns] are packed into a contiguous panel, and
//          the chunk's lhs[r, block's depth values] into one run per depth
//          tile (the values a tile broadcasts, row after row); then every
//          tile of the block runs over them. Read in place, those rows sit
//          one row stride apart (a multiple of 4 KiB for common widths), all
//          in a few L1 sets: each tile missed on them again. The lhs runs of
//          a group's first chunks (heldChunksFor) are packed in the task's
//          first column block and kept for the others, in a worker's heap
//          slots. Before, with the column blocks outside the tasks, each
//          column block packed the expert's lhs rows again, from DRAM (22
//          times for dW13 at H 2048), and that pack took a fifth of the
//          kernel (perf, AMD EPYC znver5). Measured there (T 4096 top-8 f32
//          forward_backward, 2 threads, alternating with the column blocks
//          outside): dW2 649-725 -> 530-548 ms, dW13 1250-1405 -> 1088-1135
//          ms. The dot kind keeps no chunks: it packs a chunk's lhs pairs
//          in every column block, as before. The blocks are as large as L2 allows
//          because every rhs value is packed once per depth block (and
//          every lhs value past the held chunks once per column block):
//          64 x 48 blocks packed each 22-44 times and took half the
//          kernel's time; 128 x 192 blocks take it from 4.7 s to 3.1 s at
//          the seeds' shape
//          (A = 32768 rows, 2048 x 1408, 60 experts, 2 threads; on a 1 MiB
//          L2, 256 columns or 384 depth values per task were slower again:
//          the block accumulator leaves L2; a 2 MiB L2 takes 256 columns,
//          kLargeL2BlockVectors).
//   tile   kDepthTile depth values d x kVectors * 16 columns (6 x 64
//          with AVX-512, 6 x 16 with AVX2: tileFor): 24 (6)
//          vector<16xf32> accumulators over the chunk's rows, each step
//          broadcasting lhs[r, d + i] and loading one panel row; a tile
//          of the group's first chunk starts from zeros, a later one from
//          an f32 block accumulator on the stack, where a tile of any chunk
//          but the last leaves its sums (so bf16 gradients are rounded
//          once, at the end).
//   store  the last chunk's tiles store their sums to the output from the
//          registers (with at most 80 rows an expert, T 512 top-8, every
//          group is one chunk: no block at all), each output element by
//          exactly one task; an empty group's tasks store zeros. Stored
//          from the block after the chunks, its 96 KiB went out in one
//          burst at the task's end, where the core waited on the memory:
//          a quarter of the dW13 tgmm's time at T 512 (perf).
//   bf16   with kernels = ["avx512bf16_dot"] (bf16 operands, a CPU with
//          AVX512_BF16): the sum runs over rows, so the packs pair rows
//          instead: the rhs panel holds each column's values of rows r and
//          r + 1 side by side (bf16, as vdpbf16ps reads its operand), the
//          lhs panel each depth value's pair as one 32-bit value, which
//          the tile broadcasts; a tile step is a row pair, 24 vdpbf16ps.
//          Chunks of up to twice the rows (the panels hold pairs). On the
//          FMA tiles bf16 was widened to f32 in the packs.
//
// Why by hand: the reduction runs over a data-dependent row range per
// expert, which upstream's linalg tiling cannot express.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/AmxTiles.h"
#include "codegen/kernels/GmmKernelPlan.h"
#include "codegen/kernels/GmmScheduler.h"
#include "codegen/lowerings/Lowerings.h"
#include "codegen/lowerings/TgmmAmx.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
// 16-column vectors of a task's block: 128 columns (f32 block 96 KiB), 256
// where an L2 of 2 MiB or more holds the block (192 KiB) and its panels with
// room. Measured (T 4096 top-8 f32 forward_backward, the two weight
// gradients, 2 threads, alternating): Sapphire Rapids (2 MiB L2) 128
// columns 820-832 + 1611-1718 ms, 256 778 + 1503-1516, 512 706-719 +
// 1553-1571 (its threads idle longer); on 1 MiB L2s (AMD EPYC) 256 columns
// were slower than 128 (file comment).
constexpr int64_t kBlockVectors = 8;
constexpr int64_t kLargeL2BlockVectors = 16;
constexpr int64_t kLargeL2Bytes = 2 << 20;
// With bf16 row pairs (512 columns): the pairs halve the panels' rows of a
// chunk of the same bytes, and the block, 192 x 512 f32 (384 KiB), with
// the panels (160 + 82 KiB) stays in a 1 MiB L2. Measured (AMD EPYC
// znver5, T 4096 top-8, the two bf16 weight gradients): 128 columns 361 +
// 658 ms, 256 279 + 578, 512 246 + 530.
constexpr int64_t kDotBlockVectors = 32;
constexpr int64_t kDepthBlock = 192; // depth values of a task
constexpr int64_t kPiece = 8;         // lanes of a depth tile's packed lhs values (>= its 6)
constexpr int64_t kPrefetchRows = 16; // rows ahead of the packs that the packs fetch
/// 16-value vectors of `element` in a 64-byte cache line.
int64_t lineVectors(Type element) { return 64 / (kLanes * ((element.getIntOrFloatBitWidth() + 7) / 8)); }

/// The register tile: depthTile output rows x vectors 16-column vectors,
/// as many accumulators as the register file holds beside a panel row's
/// vectors and a broadcast. AVX-512's 32 vectors: 6 x 4 (24 + 4 + 1).
/// AVX2's 16 ymm hold 8 16-lane vectors, where 6 x 4 spilled most of its
/// accumulators: 6 x 1 (12 ymm accumulators, a panel row's 2, a
/// broadcast). Measured on AMD EPYC znver3, 2 threads, a tgmm of 4080
/// rows (60 experts of 68) x 1408 x 2048, medians of 7: 6 x 4 670 ms,
/// 6 x 1 360-413, 2 x 2 451-485, 4 x 1 496-535, 4 x 2 573-631, 3 x 2
/// 605-661.
struct TgmmTile {
  int64_t depthTile, vectors;
};
TgmmTile tileFor(int64_t vectorRegisters) {
  if (vectorRegisters >= 32)
    return {6, 4};
  return {6, 1};
}
// Rows of a packed panel, at most: the rhs panel (40 KiB; one tile's
// columns of it, 64 (20 KiB) or 16 with AVX2 (5 KiB), in L1 while the tiles
// of the block run), the lhs panel (82 KiB: 32 depth tiles' runs of 82 rows
// x 8 lanes) and the block accumulator (96 KiB; 192 KiB with 256 columns
// in a 2 MiB L2), 218 KiB (314), stay in L2 together on the CPUs measured
// (512 KiB and more; 64 rows, 176 KiB, were no faster on znver3). The held
// lhs panels below come on top of them.
constexpr int64_t kRowChunk = 80;
// An lhs slot: one chunk's panel (f32, tileFor's 6-value depth tiles).
constexpr int64_t kSlotBytes = (kDepthBlock / 6) * (kRowChunk + 2) * kPiece * 4;
// L2 left to the rhs panel, the block accumulator and the operand rows
// streaming in.
constexpr int64_t kUnheldL2Bytes = 256 << 10;
// Chunks of a group whose lhs panels a task packs once and keeps for all
// its column blocks: at most 8 (640 rows, 656 KiB of f32 panels; T 4096
// top-8's 546 rows an expert are 7 chunks), as many as L2 holds beside the
// rest (a 512 KiB L2: 3, not measured); a larger group's further chunks
// are packed again for each column block, into one slot more.
int64_t heldChunksFor(int64_t l2Bytes) {
  return std::clamp<int64_t>((l2Bytes - kUnheldL2Bytes) / kSlotBytes, 0, 8);
}
} // namespace

void mlir::moe::codegen::lowerTgmmMicrokernel(RewriterBase &rewriter, TgmmOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value lhs = e.unitStrideBuffer(op.getLhs());
  Value rhs = e.unitStrideBuffer(op.getRhs());
  Value sizes = e.buffer(op.getGroupSizes());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t depth = type.getDimSize(1), width = type.getDimSize(2);
  Type outElement = type.getElementType();
  Value zero = e.index(0);
  Value rowCount = e.min(e.dim(lhs, 0), e.dim(rhs, 0));
  Value out = e.alloc(type, {});
  // The output is streamed (non-temporal stores) only with AVX2's tile,
  // when it outgrows the cores' L2s together (a smaller one may still be in
  // cache for the op that reads it next), and where every vector a task
  // stores lies on a vector's alignment: rows of whole vectors (known here)
  // and the output's start on one (the allocation asks for 64 bytes;
  // checked, since a misaligned streaming store faults). Null where
  // streaming is ruled out. Why not with AVX-512's: there the tiles store
  // their sums straight from the registers, 24 lines at a time between
  // their FMAs, and streamed those stalled on the memory where stores
  // through the cache did not (AMD EPYC znver5, T 512 top-8 f32
  // forward_backward: dW13 228-259 ms streamed, 156-164 through the cache;
  // dW2 107 and 81-83 ms; a plain loop of stores there wrote 51 GB/s on two
  // threads, a streaming one 33-36). AVX2's tile streamed its block on
  // znver3 (measured with the block stored after the chunks: this file's
  // history), not measured since.
  int64_t outBytes = outElement.getIntOrFloatBitWidth() / 8, vectorBytes = kLanes * outBytes;
  auto module = op->getParentOfType<ModuleOp>();
  auto target = module->getAttrOfType<TargetAttr>(kTargetAttrName);
  TgmmTile tile = tileFor(target ? target.getVectorRegisters() : 32);
  int64_t cacheBytes = target ? target.getL2Bytes() * std::max<int64_t>(target.getThreads(), 1) : 1 << 20;
  bool outgrowsCaches = type.hasStaticShape() && type.getNumElements() * outBytes > cacheBytes;
  Value outAligned;
  // A tile's row of the output must be whole cache lines: a streamed half
  // line (AVX2's 16 bf16 values) would leave the write-combining buffer
  // alone, its other half written by the next sub-block's tiles much later.
  bool wholeLines = tile.vectors * kLanes * outBytes % 64 == 0;
  if (tile.vectors == 1 && wholeLines && outgrowsCaches && width % kLanes == 0) {
    Value start = memref::ExtractAlignedPointerAsIndexOp::create(b, out);
    outAligned = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, e.rems(start, e.index(vectorBytes)),
                                       e.index(0));
  }

  // Group g is rows [firstRow[g], endRow[g]).
  Value groups = e.dim(sizes, 0);
  // Named values, not a structured binding: the loop bodies capture them
  // (a C++20 feature for bindings).
  Value firstRow, endRow;
  std::tie(firstRow, endRow) = groupBounds(e, sizes, rowCount);

  auto lowering = op->getAttrOfType<GmmLoweringAttr>(kLoweringAttrName);
  // AMX beside the dot kind (TgmmAmx.cpp): taken at run time where Linux
  // grants the tile state; the rest of this function is the other branch.
  std::optional<OpBuilder::InsertionGuard> amxGuard;
  if (lowering && lowering.hasKernel("amx_bf16")) {
    auto granted = scf::IfOp::create(b, TypeRange{}, requestAmxTileState(e), /*withElseRegion=*/true);
    amxGuard.emplace(b); // restored after the branches: past the if
    b.setInsertionPoint(granted.thenBlock()->getTerminator());
    emitTgmmAmx(e, TgmmAmxOperands{lhs, rhs, firstRow, endRow, groups, out, depth, width}, op);
    b.setInsertionPoint(granted.elseBlock()->getTerminator());
  }
  // vdpbf16ps on row pairs (file comment); moe-select-lowering chose it.
  const bool dot = lowering && lowering.hasKernel("avx512bf16_dot");
  if (dot && tile.vectors != 4)
    llvm::report_fatal_error("moe-lower-to-loops: the avx512bf16_dot tgmm needs AVX-512's 32 registers");
  const int64_t kDepthTile = tile.depthTile, kVectors = tile.vectors;
  static_assert(kDepthBlock % 6 == 0 && kBlockVectors % 4 == 0 && kLargeL2BlockVectors % 4 == 0 &&
                    kDotBlockVectors % 4 == 0,
                "tileFor's tiles divide the block");
  // Measured with AVX-512's 6 x 4 tile only (AVX2's 6 x 1 keeps 128).
  const bool largeL2 = target && target.getL2Bytes() >= kLargeL2Bytes && kVectors == 4;
  const int64_t blockVectors = dot ? kDotBlockVectors : largeL2 ? kLargeL2BlockVectors : kBlockVectors;
  const int64_t kSubBlocks = blockVectors / kVectors; // tile-wide column blocks of a task
  int64_t tileColumns = kVectors * kLanes;
  int64_t columns = blockVectors * kLanes;
  int64_t columnBlocks = (width + columns - 1) / columns;
  auto vecType = VectorType::get({kLanes}, b.getF32Type());
  Type rhsElement = cast<MemRefType>(rhs.getType()).getElementType();
  auto loadType = VectorType::get({kLanes}, rhsElement);
  Type lhsElement = cast<MemRefType>(lhs.getType()).getElementType();
  Value zeroVector = arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, 0.0f));
  Value cWidth = e.index(width);

  int64_t depthBlocks = (depth + kDepthBlock - 1) / kDepthBlock;
  const int64_t kDepthTiles = kDepthBlock / kDepthTile;
  // The chunks whose lhs panels a task keeps for all its column blocks
  // (file comment: chunks), and one slot more for the chunks past them,
  // which are packed again for each column block. The dot kind keeps none:
  // its rhs panel and block fill most of L2 already, and 4 held chunks
  // gained nothing (AMD EPYC znver5, T 4096 top-8 bf16 forward_backward:
  // dW2 327-329 against 323-338 ms, dW13 633-657 against 630-637).
  const int64_t heldChunks = dot ? 0 : heldChunksFor(target ? target.getL2Bytes() : 1 << 20);
  auto pieceType = VectorType::get({kPiece}, b.getF32Type());
  Value cDepth = e.index(depth);
  Value one = e.index(1);
  const int64_t chunkLimit = dot ? 2 * kRowChunk : kRowChunk;
  // Tasks group-major, the depth blocks of a group consecutive: the workers
  // take them from a counter side by side, so both read the same group's
  // rhs rows (every task of a group reads all of them), from the cache the
  // other left them in.
  Value tasks = e.mul(groups, e.index(depthBlocks));
  Value panel, block, lhsPanels;
  emitWorkerTasks(e, tasks, op, [&] {
    // The chunk's rhs columns, a tile's columns at a time: panel[sub][r]
    // holds the sub-block's columns of row r, so that the tiles of a
    // sub-block read one contiguous run (5 KiB with AVX2) where, rows of
    // the whole block, they read a line 512 bytes from the last, all in an
    // eighth of L1's sets.
    // (bf16 row pairs: [sub][pair][column, row of the pair].)
    panel = dot ? e.allocaScratch({kSubBlocks, kRowChunk, 2 * tileColumns}, b.getBF16Type())
                : e.allocaScratch({kSubBlocks, kRowChunk, tileColumns}, b.getF32Type());
    block = e.allocaScratch({kDepthBlock, columns}, b.getF32Type());
    // A chunk's lhs values, a depth tile at a time: lhsPanels[s][t][r]
    // holds lhs[row r, dBase + t * kDepthTile ..] in kPiece lanes (the tile
    // reads the first kDepthTile). A tile's broadcasts then walk one
    // contiguous 2.5 KiB run; laid out [r][depth] they were kDepthTile
    // values of a line 768 bytes from the last, and the tile ran at about
    // half the FMA peak. A row's pieces are stored one tile's run apart:
    // padded by a cache line (2 rows), so that they fall in different L1
    // sets (measured with 64-row runs: unpadded, 2 KiB apart, a row's 32
    // stores shared two sets and each missed). Held chunks' slots on the
    // heap: 9 are 738 KiB, more than a caller's thread may have of stack.
    // (bf16 row pairs: one i32, the two rows' bf16 values, a depth value.)
    SmallVector<int64_t> slotsShape{heldChunks + 1, kDepthTiles, kRowChunk + 2, kPiece};
    Type lhsValue = dot ? Type(b.getI32Type()) : Type(b.getF32Type());
    lhsPanels = heldChunks > 0 ? e.alloc(slotsShape, lhsValue, {}) : e.allocaScratch(slotsShape, lhsValue);
  }, [&](Value task, Value) {
    Value g = e.divs(task, e.index(depthBlocks));
    Value db = e.rems(task, e.index(depthBlocks));
    Value dBase = e.mul(db, e.index(kDepthBlock));
    // The task's depth tiles that start inside D (the rest are never read).
    Value liveTiles = e.min(e.index(kDepthTiles),
                            e.divs(e.add(e.sub(e.index(depth), dBase), e.index(kDepthTile - 1)),
                                   e.index(kDepthTile)));
    // Whether the lhs pack reads inside D: then every piece is a plain load
    // (AVX2's masked loads of 16-bit lanes go a lane at a time) but the
    // last, whose 2 lanes past the block may pass D.
    Value depthInside = e.ge(cDepth, e.add(dBase, e.index(kDepthBlock)));
    Value first = e.load(firstRow, {g}), end = e.load(endRow, {g});
    // The group's rows in the fewest chunks of at most chunkLimit, of equal
    // size: each chunk is a pass over the block's tiles (their accumulators
    // loaded from the block after the first chunk, stored to it before the
    // last), and a short last chunk is such a pass for few rows (68 rows an
    // expert were 64 + 4).
    Value rows = e.sub(end, first);
    Value chunks = e.max(one, e.divs(e.add(rows, e.index(chunkLimit - 1)), e.index(chunkLimit)));
    Value chunkRows = e.max(one, e.divs(e.add(rows, e.sub(chunks, one)), chunks));
    // The row kPrefetchRows after `row`, a line at a time: a row's part of
    // the block is 8-12 lines, the next row a row stride on, too short a
    // stream for the hardware prefetcher (the pack waited on memory).
    // (Within the group: past it, the rows are another task's.)
    auto rowAhead = [&](Value row) { return e.min(e.add(row, e.index(kPrefetchRows)), e.sub(end, one)); };
    auto prefetchLhsAhead = [&](Value row) {
      Value ahead = rowAhead(row);
      for (int64_t q = 0; q < kDepthBlock; q += kLanes * lineVectors(lhsElement)) {
        Value d = e.min(e.add(dBase, e.index(q)), e.sub(cDepth, one));
        memref::PrefetchOp::create(b, lhs, ValueRange{ahead, d}, /*isWrite=*/false, /*localityHint=*/3,
                                   /*isDataCache=*/true);
      }
    };
    e.forLoop(zero, e.index(columnBlocks), [&](Value cb) {
      Value n0 = e.mul(cb, e.index(columns));
      SmallVector<Value> cols, masks;
      for (int64_t v = 0; v < blockVectors; ++v) {
        cols.push_back(e.add(n0, e.index(v * kLanes)));
        masks.push_back(lanesBelow(e, cols.back(), cWidth, kLanes));
      }
      // Whether the rhs pack reads inside N (plain loads).
      Value columnsInside = e.ge(cWidth, e.add(n0, e.index(columns)));
      Value firstColumnBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, cb, zero);
      // The block's columns of the row kPrefetchRows after `row`.
      auto prefetchRhsAhead = [&](Value row) {
        Value ahead = rowAhead(row);
        for (int64_t v = 0; v < blockVectors; v += lineVectors(rhsElement))
          memref::PrefetchOp::create(b, rhs, ValueRange{ahead, e.min(cols[v], e.sub(cWidth, one))},
                                     /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
      };
      // How the sums reach the output (rounded there when bf16): masked only
      // where the block passes N (AVX2's masked store, vmaskmovps, is
      // microcoded on AMD); streamed (non-temporal) where `outAligned` allows
      // (AVX2's tile: the output is written once and read by no task, and
      // there a store through the cache first read the line it writes; the
      // whole output is 1.4 GB at T 512, top-8), else through the cache.
      enum class OutStore { Masked, Plain, Streaming };
      auto storeVector = [&](OutStore how, Value value, Value d, int64_t v) {
        if (!outElement.isF32())
          value = arith::TruncFOp::create(b, VectorType::get({kLanes}, outElement), value);
        SmallVector<Value, 3> at{g, d, cols[v]};
        if (how == OutStore::Masked)
          vector::MaskedStoreOp::create(b, out, at, masks[v], value);
        else
          vector::StoreOp::create(b, value, out, at, /*nontemporal=*/how == OutStore::Streaming,
                                  how == OutStore::Streaming ? llvm::MaybeAlign(vectorBytes) : llvm::MaybeAlign());
      };
      // `body` once for each way this column block may store, under the
      // run-time conditions that choose it.
      auto byOutStore = [&](llvm::function_ref<void(OutStore)> body) {
        auto inside = scf::IfOp::create(b, TypeRange{}, columnsInside, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(inside.elseBlock()->getTerminator());
        body(OutStore::Masked);
        b.setInsertionPoint(inside.thenBlock()->getTerminator());
        if (!outAligned) {
          body(OutStore::Plain);
          return;
        }
        auto streamed = scf::IfOp::create(b, TypeRange{}, outAligned, /*withElseRegion=*/true);
        b.setInsertionPoint(streamed.thenBlock()->getTerminator());
        body(OutStore::Streaming);
        b.setInsertionPoint(streamed.elseBlock()->getTerminator());
        body(OutStore::Plain);
      };
      // A tile's sums, output rows d0 .. d0 + kDepthTile (those inside D) and
      // the block's vectors v0 .. v0 + kVectors.
      auto storeTile = [&](ArrayRef<Value> acc, Value d0, int64_t v0) {
        byOutStore([&](OutStore how) {
          for (int64_t i = 0; i < kDepthTile; ++i) {
            Value d = e.add(d0, e.index(i));
            e.ifThen(e.lt(d, cDepth), [&] {
              for (int64_t v = 0; v < kVectors; ++v)
                storeVector(how, acc[i * kVectors + v], d, v0 + v);
            });
          }
        });
      };
      e.forLoop(first, end, chunkRows, {}, [&](Value c, ValueRange) -> SmallVector<Value> {
        Value n = e.min(chunkRows, e.sub(end, c));
        Value firstChunk = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, c, first);
        Value lastChunk = e.ge(e.add(c, n), end);
        // The chunk's lhs slot: its own among the held chunks' (packed in
        // the first column block), else the spare (packed in each).
        Value slot = zero, packLhs = arith::ConstantOp::create(b, b.getBoolAttr(true));
        if (heldChunks > 0) {
          Value chunkIndex = e.divs(e.sub(c, first), chunkRows);
          slot = e.min(chunkIndex, e.index(heldChunks));
          packLhs = arith::OrIOp::create(b, firstColumnBlock, e.ge(chunkIndex, e.index(heldChunks)));
        }
        // The tiles' steps over the chunk: its rows, or its row pairs (dot).
        Value steps = dot ? e.divs(e.add(n, one), e.index(2)) : n;
        auto packRhs = [&](bool inside) {
          e.forLoop(zero, n, [&](Value r) {
            Value row = e.add(c, r);
            prefetchRhsAhead(row);
            // The chunk's block columns, a tile's columns at a time (past N: zero).
            for (int64_t v = 0; v < blockVectors; ++v) {
              Value loaded;
              if (inside) {
                loaded = vector::LoadOp::create(b, loadType, rhs, ValueRange{row, cols[v]});
                if (!rhsElement.isF32())
                  loaded = arith::ExtFOp::create(b, vecType, loaded);
              } else {
                auto part = scf::IfOp::create(b, TypeRange{vecType}, e.lt(cols[v], cWidth),
                                              /*withElseRegion=*/true);
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(part.thenBlock());
                scf::YieldOp::create(b, loadColumnsAsF32(e, rhs, ValueRange{row}, cols[v], cWidth, kLanes));
                b.setInsertionPointToStart(part.elseBlock());
                scf::YieldOp::create(b, zeroVector);
                loaded = part.getResult(0);
              }
              vector::StoreOp::create(b, loaded, panel,
                                      ValueRange{e.index(v / kVectors), r, e.index((v % kVectors) * kLanes)});
            }
          });
        };
        // The chunk's depth values, a tile's piece at a time (past D: zero).
        auto packLhsValues = [&](bool inside) {
          e.forLoop(zero, n, [&](Value r) {
            Value row = e.add(c, r);
            prefetchLhsAhead(row);
            auto piece = [&](Value t, bool last) {
              Value d = e.add(dBase, e.mul(t, e.index(kDepthTile)));
              Value loaded;
              if (inside && !last) {
                loaded =
                    vector::LoadOp::create(b, VectorType::get({kPiece}, lhsElement), lhs, ValueRange{row, d});
                if (!lhsElement.isF32())
                  loaded = arith::ExtFOp::create(b, pieceType, loaded);
              } else {
                loaded = loadColumnsAsF32(e, lhs, ValueRange{row}, d, cDepth, kPiece);
              }
              vector::StoreOp::create(b, loaded, lhsPanels, ValueRange{slot, t, r, zero});
            };
            if (inside) {
              for (int64_t t = 0; t < kDepthTiles; ++t)
                piece(e.index(t), /*last=*/t == kDepthTiles - 1);
            } else {
              e.forLoop(zero, liveTiles, [&](Value t) { piece(t, /*last=*/true); });
            }
          });
        };
        // bf16 row pairs (dot): rows r and r + 1 of the chunk interleaved,
        // zeros for a missing second row and past N and D (masked loads:
        // AVX-512 has 16-bit ones).
        auto packPairs = [&] {
          auto bf16 = b.getBF16Type();
          auto columnsType = VectorType::get({kLanes}, bf16), pieceBf16 = VectorType::get({kPiece}, bf16);
          Value zeroColumns = arith::ConstantOp::create(b, DenseElementsAttr::get(columnsType, b.getZeroAttr(bf16)));
          Value zeroPiece = arith::ConstantOp::create(b, DenseElementsAttr::get(pieceBf16, b.getZeroAttr(bf16)));
          Value noColumns = lanesBelow(e, zero, zero, kLanes), noPiece = lanesBelow(e, zero, zero, kPiece);
          e.forLoop(zero, steps, [&](Value rp) {
            Value row0 = e.add(c, e.mul(rp, e.index(2)));
            Value hasSecond = e.lt(e.add(row0, one), e.add(c, n));
            Value row1 = e.min(e.add(row0, one), e.sub(end, one));
            for (Value row : {row0, e.add(row0, one)}) {
              prefetchRhsAhead(row);
              prefetchLhsAhead(row);
            }
            for (int64_t v = 0; v < blockVectors; ++v) {
              // A vector wholly past N reads nothing (its address would be).
              auto part = scf::IfOp::create(b, TypeRange{VectorType::get({2 * kLanes}, bf16)},
                                            e.lt(cols[v], cWidth), /*withElseRegion=*/true);
              {
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(part.thenBlock());
                Value x0 = vector::MaskedLoadOp::create(b, columnsType, rhs, ValueRange{row0, cols[v]}, masks[v],
                                                        zeroColumns);
                Value x1 = vector::MaskedLoadOp::create(b, columnsType, rhs, ValueRange{row1, cols[v]},
                                                        arith::SelectOp::create(b, hasSecond, masks[v], noColumns),
                                                        zeroColumns);
                scf::YieldOp::create(b, ValueRange{vector::InterleaveOp::create(b, x0, x1).getResult()});
                b.setInsertionPointToStart(part.elseBlock());
                scf::YieldOp::create(b, ValueRange{arith::ConstantOp::create(
                                            b, DenseElementsAttr::get(VectorType::get({2 * kLanes}, bf16),
                                                                      b.getZeroAttr(bf16)))
                                                       .getResult()});
              }
              vector::StoreOp::create(b, part.getResult(0), panel,
                                      ValueRange{e.index(v / kVectors), rp, e.index((v % kVectors) * 2 * kLanes)});
            }
            e.forLoop(zero, liveTiles, [&](Value t) {
              Value d = e.add(dBase, e.mul(t, e.index(kDepthTile)));
              Value inD = lanesBelow(e, d, cDepth, kPiece);
              Value y0 = vector::MaskedLoadOp::create(b, pieceBf16, lhs, ValueRange{row0, d}, inD, zeroPiece);
              Value y1 = vector::MaskedLoadOp::create(b, pieceBf16, lhs, ValueRange{row1, d},
                                                      arith::SelectOp::create(b, hasSecond, inD, noPiece), zeroPiece);
              Value both = vector::InterleaveOp::create(b, y0, y1);
              vector::StoreOp::create(b, vector::BitCastOp::create(b, VectorType::get({kPiece}, b.getI32Type()), both),
                                      lhsPanels, ValueRange{slot, t, rp, zero});
            });
          });
        };
        // `pack(true)` where the pack reads inside the operand, else `pack(false)`.
        auto byInside = [&](Value inside, llvm::function_ref<void(bool)> pack) {
          auto choice = scf::IfOp::create(b, TypeRange{}, inside, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(choice.thenBlock()->getTerminator());
          pack(true);
          b.setInsertionPoint(choice.elseBlock()->getTerminator());
          pack(false);
        };
        if (dot) {
          packPairs();
        } else {
          e.ifThen(packLhs, [&] { byInside(depthInside, packLhsValues); });
          byInside(columnsInside, packRhs);
        }
        for (int64_t sub = 0; sub < kSubBlocks; ++sub) {
          // A sub-block wholly past N (narrow outputs) has nothing to store.
          int64_t base = sub * tileColumns;
          e.ifThen(e.lt(e.add(n0, e.index(base)), cWidth), [&] {
            e.forLoop(zero, liveTiles, [&](Value t) {
              Value t0 = e.mul(t, e.index(kDepthTile));
              // Depth values past D are zero in the panel: computed, never stored.
              // The chunk's first: zeros; a later one: the earlier chunks' sums.
              SmallVector<Type> accTypes(kDepthTile * kVectors, vecType);
              auto start = scf::IfOp::create(b, accTypes, firstChunk, /*withElseRegion=*/true);
              {
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(start.thenBlock());
                scf::YieldOp::create(b, SmallVector<Value>(accTypes.size(), zeroVector));
                b.setInsertionPointToStart(start.elseBlock());
                SmallVector<Value> loaded;
                for (int64_t i = 0; i < kDepthTile; ++i)
                  for (int64_t v = 0; v < kVectors; ++v)
                    loaded.push_back(vector::LoadOp::create(
                        b, vecType, block, ValueRange{e.add(t0, e.index(i)), e.index(base + v * kLanes)}));
                scf::YieldOp::create(b, loaded);
              }
              SmallVector<Value> init(start.getResults().begin(), start.getResults().end());
              // A step: a row (a broadcast value times the panel row, FMAs),
              // or a row pair (dot: a broadcast 32-bit pair against the
              // panel's interleaved rows, vdpbf16ps); 24 of them either way.
              auto panelType = dot ? VectorType::get({2 * kLanes}, b.getBF16Type()) : vecType;
              int64_t panelLanes = dot ? 2 * kLanes : kLanes;
              auto pairsType = VectorType::get({kLanes}, b.getI32Type());
              SmallVector<Value> acc = e.forLoop(
                  zero, steps, init, [&](Value r, ValueRange in) -> SmallVector<Value> {
                    SmallVector<Value> w;
                    for (int64_t v = 0; v < kVectors; ++v)
                      w.push_back(vector::LoadOp::create(b, panelType, panel,
                                                         ValueRange{e.index(sub), r, e.index(v * panelLanes)}));
                    SmallVector<Value> next(in.begin(), in.end());
                    for (int64_t i = 0; i < kDepthTile; ++i) {
                      Value x = e.load(lhsPanels, {slot, t, r, e.index(i)});
                      Value a = dot ? vector::BitCastOp::create(b, panelType,
                                                                vector::BroadcastOp::create(b, pairsType, x))
                                          .getResult()
                                    : vector::BroadcastOp::create(b, vecType, x).getResult();
                      for (int64_t v = 0; v < kVectors; ++v) {
                        Value &sum = next[i * kVectors + v];
                        sum = dot ? x86vector::DotBF16Op::create(b, vecType, sum, a, w[v]).getResult()
                                  : vector::FMAOp::create(b, a, w[v], sum).getResult();
                      }
                    }
                    return next;
                  });
              // The group's last chunk: the sums are the output's, stored
              // from the registers (file comment: tile); before it, kept in
              // the block for the next chunk.
              auto finish = scf::IfOp::create(b, TypeRange{}, lastChunk, /*withElseRegion=*/true);
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPoint(finish.elseBlock()->getTerminator());
              for (int64_t i = 0; i < kDepthTile; ++i)
                for (int64_t v = 0; v < kVectors; ++v)
                  vector::StoreOp::create(b, acc[i * kVectors + v], block,
                                          ValueRange{e.add(t0, e.index(i)), e.index(base + v * kLanes)});
              b.setInsertionPoint(finish.thenBlock()->getTerminator());
              storeTile(acc, e.add(dBase, t0), sub * kVectors);
            });
          });
        }
        return {};
      });
      // An empty group's gradient is zeros (its tasks run no chunk).
      e.ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rows, zero), [&] {
        byOutStore([&](OutStore how) {
          e.forLoop(zero, e.min(e.index(kDepthBlock), e.sub(cDepth, dBase)), [&](Value i) {
            for (int64_t v = 0; v < blockVectors; ++v)
              storeVector(how, zeroVector, e.add(dBase, i), v);
          });
        });
      });
    });
    // Streaming stores are weakly ordered: fenced before the task ends, so
    // that whoever reads the output after the loop sees them.
    if (outAligned)
      func::CallOp::create(b, e.intrinsic("llvm.x86.sse.sfence", b.getFunctionType({}, {})), ValueRange{});
  });
  amxGuard.reset(); // after the branches
  rewriter.replaceOp(op, e.tensor(out, type));
}
