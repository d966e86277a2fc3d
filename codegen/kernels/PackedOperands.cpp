//===- PackedOperands.cpp - what the packed-weight kinds share ------------===//
//
// The weight block the bf16 and int8 products read (tdpbf16ps on AMX tiles
// and vdpbf16ps on zmm registers take the same operand layout: for each of
// 16 columns, two consecutive depth elements side by side; tdpbsud takes
// four int8 depth elements side by side), its per-worker cache, and the
// epilogue store of a column pair.
//
//   weights  the block [D, nc] is packed once per (group, column block) per
//            worker into tiles of 16 columns x 64 bytes of depth in the pair
//            (quad) layout, zero past D and past the last column; consecutive row blocks of
//            the same weight block skip the packing (the task order puts
//            them next to each other). The weights stream from memory once
//            per forward either way; the pack costs one L2 write per weight
//            byte and gives tiles with a 64-byte row stride (contiguous, no
//            cache-set conflicts). A transposed weight [E, N, D] (the
//            backward's bf16 row gradient) is packed 16 depth pairs of 16
//            weight rows at a time, turned in registers
//            (packTransposedWeights). With weights packed at load time
//            (moe.gmm ... packed(%p), moe-prepare-weights), the task's block
//            is a view of %p and nothing is packed per call, and each
//            task of a group of a full tile of rows or more fetches the
//            block its worker likely takes next (nextBlock), and a
//            decode task its own tiles a few depth steps ahead
//            (fetchTilesAhead).
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/PackedOperands.h"
#include "codegen/Emitter.h"
#include "codegen/kernels/AmxTiles.h"

#include <tuple>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTileCols = PackedOperands::kTileCols;
constexpr int64_t kTileBytes = 64; // bytes of a tile row
constexpr int64_t kLanes = PackedOperands::kLanes;
constexpr int64_t kPrefetchRows = 16; // int8 weight rows fetched ahead of the packing

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
} // namespace

PackedOperands::PackedOperands(Emitter &e, const GmmKernelPlan &plan)
    : depthPerLane(plan.int8 ? 4 : 2), tileDepth(kTileBytes / (4 / depthPerLane)),
      paddedDepth(roundUp(plan.depth, tileDepth)),
      // moe-select-lowering's choice (strategy::packedColumnsFor: half of L2).
      physicalColumns(plan.packedColumns), e(e), p(plan) {}

void PackedOperands::allocWeightCache() {
  if (p.packedRhs)
    return; // a block of the packed weights per task (ensureWeights)
  if (weights) {
    // The kinds of one gmm share the worker's cache: one worker body.
    assert(weights.getDefiningOp()->getBlock() == e.b.getInsertionBlock() &&
           "the weight cache belongs to another worker body");
    return;
  }
  auto &b = e.b;
  Type element = p.int8 ? Type(b.getI8Type()) : Type(b.getBF16Type());
  weights = e.alloc({physicalColumns / kTileCols, paddedDepth / depthPerLane, depthPerLane * kTileCols},
                    element, {});
  weightKey = e.alloc({2}, b.getIndexType(), {});
  e.store(e.index(-1), weightKey, {e.index(0)});
  e.store(e.index(-1), weightKey, {e.index(1)});
}

void PackedOperands::packTransposedWeights(Value g, Value c0, Value colPairs, Value packed) {
  // rhs [E, N, D]: a tile's 16 columns are 16 rows of the weight, and the
  // tile's row for depth pair kp holds, per column, that row's kp-th pair:
  // a 32-bit value. So 16 depth pairs of 16 rows (a 64-byte load each) are
  // a 16 x 16 block of 32-bit values, turned in registers and stored as the
  // tile's 16 rows for those pairs.
  auto &b = e.b;
  Type element = cast<MemRefType>(packed.getType()).getElementType();
  auto rowType = VectorType::get({2 * kLanes}, element);
  auto pairsType = VectorType::get({kLanes}, b.getI32Type());
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(rowType, b.getZeroAttr(element)));
  Value noLanes = lanesBelow(e, e.index(0), e.index(0), 2 * kLanes);
  Value depth = e.index(p.depth);
  e.forLoop(e.index(0), colPairs, [&](Value pair) {
    for (int64_t half = 0; half < 2; ++half) {
      TileColumns tc = tileColumns(c0, pair, half);
      Value tile = e.add(e.mul(pair, e.index(2)), e.index(half));
      Value lastRow = e.sub(tc.limit, e.index(1));
      e.forLoop(e.index(0), e.index(paddedDepth / (2 * kLanes)), [&](Value kb) {
        Value d0 = e.mul(kb, e.index(2 * kLanes));
        // Depth past D (the padding) and weight rows past N: zeros.
        Value depthLanes = lanesBelow(e, d0, depth, 2 * kLanes);
        // The next tile's 16 weight rows (clamped to the weight), fetched at
        // this step's depth: on their way while this tile's are turned, as
        // the f32 kind's transposed pack does (FmaKernel.cpp). Each tile
        // starts 16 new streams, one a weight row, which the hardware
        // prefetcher takes up only after their first misses. Measured (AMD EPYC znver5, 2
        // threads, T 512 top-8 bf16 forward_backward, --stage-timing, 6
        // alternating pairs): gmm^T 4096x2048 89.9 -> 81.4 ms, 4096x1408
        // 43.8 -> 40.8 ms.
        for (int64_t c = 0; c < kLanes; ++c)
          memref::PrefetchOp::create(b, tc.weight,
                                     ValueRange{g, e.min(e.add(tc.column, e.index(kLanes + c)), lastRow), d0},
                                     /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
        SmallVector<Value> rows;
        for (int64_t c = 0; c < kLanes; ++c) {
          Value n = e.add(tc.column, e.index(c));
          Value mask = arith::SelectOp::create(b, e.lt(n, tc.limit), depthLanes, noLanes);
          // Clamped so that even a fully masked load addresses a real row.
          Value v = vector::MaskedLoadOp::create(b, rowType, tc.weight,
                                                 ValueRange{g, e.min(n, lastRow), d0}, mask, zeros);
          rows.push_back(vector::BitCastOp::create(b, pairsType, v));
        }
        transpose16x16(b, rows);
        Value kp0 = e.mul(kb, e.index(kLanes));
        for (int64_t j = 0; j < kLanes; ++j)
          vector::StoreOp::create(b, vector::BitCastOp::create(b, rowType, rows[j]), packed,
                                  ValueRange{tile, e.add(kp0, e.index(j)), e.index(0)});
      });
    }
  });
}

void PackedOperands::packWeights(Value g, Value c0, Value colPairs, Value packed) {
  if (p.transposeRhs) {
    assert(!p.int8 && "int8 weights are never transposed");
    packTransposedWeights(g, c0, colPairs, packed);
    return;
  }
  auto &b = e.b;
  Type element = cast<MemRefType>(packed.getType()).getElementType();
  auto columnsType = VectorType::get({kLanes}, element);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(columnsType, b.getZeroAttr(element)));
  Value noLanes = lanesBelow(e, e.index(0), e.index(0), kLanes);
  Value depth = e.index(p.depth);
  // Groups of depthPerLane depth rows outside, columns inside: the weight is
  // read row by row.
  e.forLoop(e.index(0), e.index(paddedDepth / depthPerLane), [&](Value kp) {
    Value firstRow = e.mul(kp, e.index(depthPerLane));
    if (p.int8) {
      // The block's part of a weight row is a few cache lines, too short a
      // stream for the hardware prefetcher: fetch the rows kPrefetchRows
      // ahead (measured: the packing's loads were a sixth of the kernel).
      Value ahead = e.min(e.add(firstRow, e.index(kPrefetchRows)), e.index(p.depth - 1));
      Value last = e.sub(e.mul(colPairs, e.index(2 * kTileCols)), e.index(1));
      for (int64_t i = 0; i < depthPerLane; ++i) {
        Value row = e.min(e.add(ahead, e.index(i)), e.index(p.depth - 1));
        // Halves: separate gate and up columns (interleaved ones are one run).
        bool halves = p.swiglu && !p.interleaved;
        for (int64_t half = 0; half < (halves ? 2 : 1); ++half) {
          // Column pairs cover [c0, c0 + 32 pairs): gate (and up) columns.
          TileColumns first = tileColumns(c0, e.index(0), half);
          Value end = e.min(e.add(first.column, halves ? e.divs(last, e.index(2)) : last),
                            e.sub(first.limit, e.index(1)));
          e.forLoop(first.column, e.add(end, e.index(1)), e.index(64), ValueRange{},
                    [&](Value col, ValueRange) -> SmallVector<Value> {
                      memref::PrefetchOp::create(b, first.weight, ValueRange{g, row, col},
                                                 /*isWrite=*/false, /*localityHint=*/3,
                                                 /*isDataCache=*/true);
                      return {};
                    });
        }
      }
    }
    e.forLoop(e.index(0), colPairs, [&](Value pair) {
      for (int64_t half = 0; half < 2; ++half) {
        TileColumns tc = tileColumns(c0, pair, half);
        Value columns = lanesBelow(e, tc.column, tc.limit, kLanes);
        auto rowOf = [&](int64_t i) {
          Value row = e.add(firstRow, e.index(i));
          // A row inside D with its 16 columns inside the weight (all but
          // the edges) is a plain load: AVX2 has no 8- or 16-bit masked
          // load, and LLVM reads one a lane at a time behind branches (the
          // int8_avx2 kind's per-call pack, T 16 top-8, znver3: 104 -> 51 ms
          // a call). AVX-512 hosts have the masked loads; there the branch
          // is a compare a row (not measured).
          Value rowInside = e.lt(row, depth);
          Value inside = e.andI(rowInside, arith::CmpIOp::create(b, arith::CmpIPredicate::sle,
                                                                 e.add(tc.column, e.index(kLanes)), tc.limit));
          auto load = scf::IfOp::create(b, TypeRange{columnsType}, inside, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(load.thenBlock());
          scf::YieldOp::create(
              b, ValueRange{vector::LoadOp::create(b, columnsType, tc.weight, ValueRange{g, row, tc.column})});
          b.setInsertionPointToStart(load.elseBlock());
          // Rows past D (the end of an odd depth, the padding): zeros.
          Value mask = arith::SelectOp::create(b, rowInside, columns, noLanes);
          // Clamped so that even a fully masked load addresses a real row.
          Value at = e.min(row, e.index(p.depth - 1));
          scf::YieldOp::create(b, ValueRange{vector::MaskedLoadOp::create(b, columnsType, tc.weight,
                                                                          ValueRange{g, at, tc.column}, mask, zeros)
                                                 .getResult()});
          return load.getResult(0);
        };
        SmallVector<Value> rows;
        for (int64_t i = 0; i < depthPerLane; ++i)
          rows.push_back(rowOf(i));
        // Pairs: r0 r1 per column. Quads: (r0 r2)(r1 r3) interleaved gives
        // r0 r1 r2 r3 per column.
        Value lanes = depthPerLane == 2
                          ? vector::InterleaveOp::create(b, rows[0], rows[1]).getResult()
                          : vector::InterleaveOp::create(
                                b, vector::InterleaveOp::create(b, rows[0], rows[2]),
                                vector::InterleaveOp::create(b, rows[1], rows[3]))
                                .getResult();
        Value tile = e.add(e.mul(pair, e.index(2)), e.index(half));
        if (p.int8) {
          // w + 128 as an unsigned byte: the top bit flipped.
          auto bytes = cast<VectorType>(lanes.getType());
          Value top = arith::ConstantOp::create(b, DenseElementsAttr::get(bytes, b.getI8IntegerAttr(-128)));
          lanes = arith::XOrIOp::create(b, lanes, top);
        }
        vector::StoreOp::create(b, lanes, packed, ValueRange{tile, kp, e.index(0)});
      }
    });
  });
}

Value PackedOperands::firstColumn(Value cb) { return e.mul(cb, e.index(columnBlock())); }

PackedOperands::TileColumns PackedOperands::tileColumns(Value c0, Value pair, int64_t half) {
  Value width = e.index(p.width);
  if (!p.swiglu)
    return {p.gateRhs, e.add(c0, e.add(e.mul(pair, e.index(2 * kTileCols)), e.index(half * kTileCols))),
            width, p.gateScales, p.gateBias};
  Value col = e.add(c0, e.mul(pair, e.index(kTileCols)));
  if (p.interleaved)
    // The pair's 16 outputs read 32 alternating gate/up weight columns.
    return {p.gateRhs, e.add(e.mul(col, e.index(2)), e.index(half * kTileCols)),
            e.mul(width, e.index(2)), p.gateScales, p.gateBias};
  if (half == 0)
    return {p.gateRhs, col, width, p.gateScales, p.gateBias};
  Value offset = e.index(p.upOffset);
  return {p.upRhs, e.add(col, offset), e.add(width, offset), p.upScales, p.upBias};
}

Value PackedOperands::columnPairs(Value cb) {
  Value c0 = firstColumn(cb);
  Value cEnd = e.min(e.add(c0, e.index(columnBlock())), e.index(p.width));
  int64_t pairColumns = p.swiglu ? kTileCols : 2 * kTileCols;
  return e.divs(e.add(e.sub(cEnd, c0), e.index(pairColumns - 1)), e.index(pairColumns));
}

std::optional<PackedOperands::NextBlock> PackedOperands::nextBlock(const GmmTask &task, Value steps,
                                                                    int64_t fullTileRows) {
  if (!p.packedRhs)
    return std::nullopt;
  Value groupRows = e.toIndex(e.load(p.sizes, {task.group}));
  Value fetches = arith::CmpIOp::create(e.b, arith::CmpIPredicate::sge, groupRows, e.index(fullTileRows));
  int64_t tiles = physicalColumns / kTileCols;
  int64_t lanes = paddedDepth / depthPerLane, laneValues = depthPerLane * kTileCols;
  Value values = memref::CollapseShapeOp::create(e.b, weightBlock(task.nextGroup, task.nextColumnBlock),
                                                 SmallVector<ReassociationIndices>{{0, 1, 2}});
  int64_t blockValues = tiles * lanes * laneValues;
  return NextBlock{values, e.index(blockValues - 1), fetchStride(e, values, e.index(blockValues), steps),
                   fetches};
}

void PackedOperands::fetchNextBlock(const NextBlock &next, Value step) {
  // Loop-invariant: a branch predicted every step.
  e.ifThen(next.fetches, [&] {
    memref::PrefetchOp::create(e.b, next.values, ValueRange{e.min(e.mul(step, next.stride), next.last)},
                               /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
  });
}

void PackedOperands::fetchTilesAhead(Value streams, ArrayRef<Value> tiles, Value step, Value lastStep,
                                     int64_t aheadSteps) {
  if (!p.packedRhs || !streams)
    return;
  // Loop-invariant: a branch predicted every step.
  e.ifThen(streams, [&] {
    Value ahead = e.min(e.add(step, e.index(aheadSteps)), lastStep);
    for (Value tile : tiles)
      memref::PrefetchOp::create(e.b, weights, ValueRange{tile, ahead, e.index(0)},
                                 /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
  });
}

Value PackedOperands::weightBlock(Value g, Value cb) {
  // Packed at load time: block cb is tiles [cb T, cb T + T) of the group's
  // weights.
  int64_t tiles = physicalColumns / kTileCols;
  return e.innerBlock(p.packedRhs, {g, e.mul(cb, e.index(tiles)), e.index(0), e.index(0)},
                      {tiles, paddedDepth / depthPerLane, depthPerLane * kTileCols});
}

Value PackedOperands::ensureWeights(Value g, Value cb) {
  auto &b = e.b;
  Value zero = e.index(0), one = e.index(1);
  Value c0 = firstColumn(cb);
  Value colPairs = columnPairs(cb);
  if (p.packedRhs) {
    weights = weightBlock(g, cb);
    return colPairs;
  }

  Value heldGroup = e.load(weightKey, {zero}), heldBlock = e.load(weightKey, {one});
  Value held = e.andI(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, heldGroup, g),
                      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, heldBlock, cb));
  // Held already: nothing to do; else pack it.
  auto repack = scf::IfOp::create(b, TypeRange{}, held, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(repack.elseBlock()->getTerminator());
  packWeights(g, c0, colPairs, weights);
  e.store(g, weightKey, {zero});
  e.store(cb, weightKey, {one});
  return colPairs;
}

void PackedOperands::storePair(Value r, Value g, Value pair, Value c0, Value v0, Value v1) {
  auto &b = e.b;
  auto vecType = VectorType::get({kLanes}, b.getF32Type());
  Value width = e.index(p.width);
  Value valid;
  if (p.perm)
    valid = e.ge(e.toIndex(e.load(p.perm, {r})), e.index(0));
  auto store = [&](Value v, Value col) { storeColumns(e, v, p.out, r, col, width); };
  if (valid) {
    // A padding row (moe.gather_rows gives zeros) has zero sums: its output
    // is the bias through the activation, as unfused.
    Value zeroVector = arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, 0.0f));
    v0 = arith::SelectOp::create(b, valid, v0, zeroVector);
    v1 = arith::SelectOp::create(b, valid, v1, zeroVector);
  }
  TileColumns tile0 = tileColumns(c0, pair, 0), tile1 = tileColumns(c0, pair, 1);
  v0 = plusBias(e, v0, tile0.bias, g, tile0.column, tile0.limit);
  v1 = plusBias(e, v1, tile1.bias, g, tile1.column, tile1.limit);
  if (p.swiglu) {
    Value gate = v0, up = v1;
    if (p.interleaved)
      std::tie(gate, up) = deinterleave(e, v0, v1);
    store(activation(e, p.activation, gate, up), pairOutputColumn(c0, pair));
  } else {
    Value col = pairOutputColumn(c0, pair);
    store(v0, col);
    store(v1, e.add(col, e.index(kTileCols)));
  }
}

Value PackedOperands::pairOutputColumn(Value c0, Value pair) {
  return e.add(c0, e.mul(pair, e.index(pairOutputColumns())));
}

void PackedOperands::fetchPairOutput(Value r, Value pair, Value c0) {
  Value column = pairOutputColumn(c0, pair);
  int64_t lineColumns = 64 * 8 / cast<MemRefType>(p.out.getType()).getElementTypeBitWidth();
  for (int64_t c = 0; c < pairOutputColumns(); c += lineColumns) {
    // A later line of a pair past the output's last column: the last.
    Value at = c ? e.min(e.add(column, e.index(c)), e.index(p.width - 1)) : column;
    memref::PrefetchOp::create(e.b, p.out, ValueRange{r, at}, /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
  }
}

Value PackedOperands::dequantizeSums(Value sums, Value qr, Value g, const TileColumns &tile) {
  auto &b = e.b;
  auto vecType = VectorType::get({kLanes}, b.getF32Type());
  Value v = arith::SIToFPOp::create(b, vecType, sums);
  Value rowScale = e.load(rowScales, {qr});
  Value scale;
  if (p.perChannel) {
    // Columns past the end read scale 0 (their sums are 0: zero weights).
    Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, 0.0f));
    Value mask = lanesBelow(e, tile.column, tile.limit, kLanes);
    scale = vector::MaskedLoadOp::create(b, vecType, tile.scales, ValueRange{g, tile.column}, mask, zeros);
    scale = arith::MulFOp::create(b, vector::BroadcastOp::create(b, vecType, rowScale), scale);
  } else {
    scale = vector::BroadcastOp::create(b, vecType, e.fmul(rowScale, e.load(tile.scales, {g})));
  }
  return arith::MulFOp::create(b, v, scale);
}

Value PackedOperands::withoutWeightOffset(Value sums, Value qr) {
  auto &b = e.b;
  Value offset = arith::MulIOp::create(b, e.load(rowSums, {qr}), e.i32(128));
  return arith::SubIOp::create(b, sums, vector::BroadcastOp::create(b, sums.getType(), offset));
}
