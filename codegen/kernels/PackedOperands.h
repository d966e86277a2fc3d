//===- PackedOperands.h - what the packed-weight kinds share ----*- C++ -*-===//

#ifndef MOEC_CODEGEN_KERNELS_PACKEDOPERANDS_H
#define MOEC_CODEGEN_KERNELS_PACKEDOPERANDS_H

#include "codegen/kernels/GmmKernel.h"
#include "codegen/kernels/GmmKernelPlan.h"

#include <optional>

namespace mlir::moe::codegen {

class Emitter;

/// The operands of the kinds that read a packed weight block (bf16 x bf16 ->
/// f32 without widening the operands first, int8 x int8 -> i32): AMX
/// (AmxKernel.cpp), AVX512_BF16 (Bf16DotKernel.cpp), AVX512-VNNI
/// (Int8VnniKernel.cpp), AVX2's vpmaddwd (Int8Avx2Kernel.cpp) and the int8
/// vector kind (Int8VectorKernel.cpp, which reads the weights in place).
/// One object per lowered gmm, shared by the kinds compiled in side by side.
///
/// The weight block (PackedOperands.cpp) is 16 columns x depth pairs (bf16)
/// or quads (int8), interleaved as tdpbf16ps/vdpbf16ps and tdpbsud/vpdpbusd
/// take them, cached per worker across consecutive tasks of one (group,
/// column block). A task is rows [r0, r1) of one group times
/// `columnBlock()` output columns, over the whole depth.
///
/// int8 rows are quantized once, before any task (Int8Rows.cpp): every task
/// reads the quantized rows, their scales and their sums. The packed int8
/// weights are offset by 128 (w + 128, 1..255: the unsigned operand tdpbsud
/// and vpdpbusd take beside the signed rows), so the products subtract 128
/// times the row's sum (withoutWeightOffset).
class PackedOperands {
public:
  /// int8 rows per task off AMX: the rows are quantized before the tasks, so
  /// a task is as large as a group allows (each worker packs each weight
  /// block it multiplies: one task per block packs it once), split so that
  /// a hot expert still spreads over the workers.
  static constexpr int64_t kMaxInt8Rows = 768;
  static constexpr int64_t kInt8RowGranule = 6; // a VNNI register tile
  static constexpr int64_t kTileCols = 16;      // columns of a weight tile
  static constexpr int64_t kLanes = 16;

  PackedOperands(Emitter &e, const GmmKernelPlan &plan);

  int64_t columnBlock() const { return p.swiglu ? physicalColumns / 2 : physicalColumns; }
  /// The worker's packed weight block and which (group, column block) it
  /// holds, allocated at the first call inside the worker (the kinds of one
  /// gmm share it). Nothing with weights packed at load time.
  void allocWeightCache();
  Value packedWeights() const { return weights; }
  /// Packs the task's weight block unless the worker holds it already
  /// (with weights packed at load time: the task's block of them).
  /// Returns the column pairs of the block: two 16-column tiles each, gate
  /// and up with SwiGLU.
  Value ensureWeights(Value g, Value cb);
  /// Weights packed at load time: block `cb` of group `g`'s, [tiles,
  /// lanes, lane values].
  Value weightBlock(Value g, Value cb);
  Value firstColumn(Value cb);
  Value columnPairs(Value cb);

  /// Weights packed at load time: the block the task's worker likely
  /// multiplies next (GmmTask's next group and column block) as one run of
  /// values, fetched while the task runs: its `steps` depth steps (over all
  /// its register tiles) each fetch values[min(step * stride, last)], a
  /// stride that spreads the block over the whole task at up to a line a
  /// step. A task's first tile of rows reads its block from DRAM (the
  /// others find it in L2); fetched ahead by the task before (when that
  /// one fetched), it is in L2 already. Nothing without prepared weights
  /// (the worker packs its block, from the weights' rows). Only a task of
  /// a group of `fullTileRows` rows or more (the kind's full register
  /// tile) fetches: a smaller group is decode-sized, each of its blocks
  /// read once, from DRAM, and that stream bounds its tasks.
  struct NextBlock {
    Value values, last, stride, fetches;
  };
  std::optional<NextBlock> nextBlock(const GmmTask &task, Value steps, int64_t fullTileRows);
  /// Depth step `step` of the task's: its part of the next block.
  void fetchNextBlock(const NextBlock &next, Value step);
  /// Weights packed at load time, when `streams` (i1) holds: the task's
  /// only pass over its block, read from DRAM (a task of fewer rows than
  /// the kind's full tile, at decode sizes): fetches the lines of `tiles`
  /// (tiles of the task's block) `aheadSteps` depth steps past `step` (a
  /// step reads a 64-byte line of each tile), clamped to `lastStep`, ahead
  /// of the hardware prefetchers, which start afresh on every task's block.
  /// Nothing without prepared weights or `streams`. The kinds' distances
  /// are measured: kVnniStreamAheadSteps (Int8VnniKernel.cpp) and
  /// kDotStreamAheadSteps (Bf16DotKernel.cpp).
  void fetchTilesAhead(Value streams, ArrayRef<Value> tiles, Value step, Value lastStep,
                       int64_t aheadSteps);

  /// Where the 16 weight columns of tile `half` of column pair `pair` are:
  /// the weight, the first column, the end of the columns that exist, and
  /// for int8 the weight's scales.
  struct TileColumns {
    Value weight, column, limit, scales, bias;
  };
  TileColumns tileColumns(Value c0, Value pair, int64_t half);

  /// The output of row `r` for column pair `pair` of the block at `c0`,
  /// of group `g`, from the f32 sums of its two tiles (zero for a padding
  /// row): their bias, the activation (SwiGLU or GPT-OSS's, columns maybe
  /// interleaved), rounding to the output type, masked to the columns that
  /// exist.
  void storePair(Value r, Value g, Value pair, Value c0, Value v0, Value v1);
  /// Fetches into L2 the output lines storePair writes for row `r` and
  /// column pair `pair` of the block at `c0` (one, or two of f32 without
  /// SwiGLU), ahead of that store.
  void fetchPairOutput(Value r, Value pair, Value c0);

  /// int8: quantizes the rows into [rows + padding, paddedDepth] i8 and
  /// their scales, in parallel, before the tasks that read them; once,
  /// however many int8 kinds ask. Gathered rows: each token once (rows are
  /// then the tokens), which the tasks' rows read through the permutation
  /// (quantizedRow), unless a kind asked for the rows in order
  /// (keepRowOrder) or there are more tokens than rows (decided at run
  /// time: a pack to a capacity leaves fewer).
  void quantizeRows();
  /// int8, gathered rows: quantize every row of the gmm in order, a token
  /// once for each of its K slots (a kind loading tiles of consecutive
  /// rows: AMX; every kind of the gmm then reads them so). Before
  /// quantizeRows.
  void keepRowOrder() {
    assert(!qRows && "the rows' order is chosen before they are quantized");
    rowOrder = true;
  }
  /// int8: the quantized row that task row `r` reads (its token's, when
  /// each token is quantized once; else `r`). After quantizeRows.
  Value quantizedRow(Value r);
  /// int8: a quantized row's bytes (the buffer's row stride): paddedDepth
  /// rounded up to an odd number of 64-byte lines (Int8Rows.cpp).
  int64_t quantizedRowBytes() const;
  Value quantizedRows() const { return qRows; } // i8 [rows or tokens + 32, >= paddedDepth]
  /// int8: the i32 sums of quantized row `qr` (quantizedRow) for the 16
  /// columns of `tile` times the row's and the weight's scales, as f32.
  Value dequantizeSums(Value sums, Value qr, Value g, const TileColumns &tile);
  /// sum_d q (w + 128) - 128 sum_d q: the sums of quantized row `qr`
  /// against the offset packed weights, without the offset.
  Value withoutWeightOffset(Value sums, Value qr);

  const int64_t depthPerLane;    // depth values in one 32-bit lane: 2 bf16, 4 int8
  const int64_t tileDepth;       // depth values in a 64-byte tile row: 32 or 64
  const int64_t paddedDepth;     // D rounded up to tileDepth (zeros past D)
  const int64_t physicalColumns; // weight columns per task (gate and up with SwiGLU)

private:
  /// The output columns of column pair `pair` of the block at `c0`: 16
  /// with SwiGLU (gate and up make one), else 32.
  int64_t pairOutputColumns() const { return p.swiglu ? kTileCols : 2 * kTileCols; }
  Value pairOutputColumn(Value c0, Value pair);
  /// Packs the block (int8: offset by 128).
  void packWeights(Value g, Value c0, Value colPairs, Value packed);
  /// packWeights for a bf16 weight [E, N, D] (the backward's gmm on
  /// transposed weights).
  void packTransposedWeights(Value g, Value c0, Value colPairs, Value packed);

  Emitter &e;
  const GmmKernelPlan &p;
  Value weights, weightKey; // the worker's cache
  // int8: the quantized rows (or tokens, byToken), 32 zero rows past them.
  Value qRows;              // int8: i8 [rows + 32, paddedDepth or a line more]
  Value rowScales;          // int8: f32 [rows + 32]
  Value rowSums;            // int8: i32 [rows + 32], sum_d q[r, d]
  bool rowOrder = false;    // int8, gathered: every row in order (keepRowOrder)
  Value byToken;            // int8, gathered: i1, each token quantized once
};

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_KERNELS_PACKEDOPERANDS_H
