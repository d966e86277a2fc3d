//===- GmmPackedTasks.h - packed-weight tasks of the fast gmm ---*- C++ -*-===//

#ifndef MOEC_CODEGEN_GMMPACKEDTASKS_H
#define MOEC_CODEGEN_GMMPACKEDTASKS_H

#include "codegen/GmmKernelPlan.h"
#include "mlir/IR/Operation.h"

namespace mlir::moe::codegen {

class Emitter;

/// The task kinds of the fast gmm that read a packed weight block: bf16 x
/// bf16 -> f32 without widening the operands first, and int8 x int8 -> i32:
///   - AMX (GmmAmxTask.cpp): tdpbf16ps, or tdpbsud for int8, on tile
///     registers; bf16 groups of at least kMinAmxRows rows, every int8 group
///     (a padded tile still beats every other int8 path): the plan's
///     amxMinRows;
///   - AVX512_BF16 (GmmDotTask.cpp): vdpbf16ps on zmm register tiles, for the
///     small bf16 groups (a 16-row tile would mostly multiply padding) and for
///     every bf16 group where AMX is not allowed or not granted;
///   - AVX512-VNNI (GmmInt8Task.cpp): vpdpbusd on zmm register tiles, for
///     int8 where AMX is not allowed or not granted;
///   - int8 vector (GmmInt8Task.cpp): exact i32 multiply-adds, for int8 on a
///     CPU with neither.
/// AMX and AVX512_BF16 read the same packed weight block (GmmPackedTasks.cpp):
/// 16 columns x depth pairs (bf16) or quads (int8), interleaved as both
/// instructions take them, cached per worker across consecutive tasks of one
/// (group, column block). A task is rows [r0, r1) of one group times
/// `columnBlock()` output columns, over the whole depth.
///
/// int8 rows are quantized once, before any task (quantizeRows): every task
/// reads the quantized rows, their scales and their sums. The packed int8
/// weights are offset by 128 (w + 128, 1..255: the unsigned operand tdpbsud
/// and vpdpbusd take beside the signed rows), so the products subtract 128
/// times the row's sum (withoutWeightOffset).
class PackedGmmTasks {
public:
  /// AMX rows per task for a large group: the group split evenly into blocks
  /// of at most kMaxAmxRows rows, each a multiple of kAmxRowGranule. The
  /// packed rows need not fit in L2: the product walks them one row pair of
  /// tiles at a time while the weight block's column pairs stream past. So
  /// tasks are large, and a group of up to kMaxAmxRows rows packs each weight
  /// block once.
  static constexpr int64_t kAmxRowGranule = 32;
  static constexpr int64_t kMaxAmxRows = 256;
  /// int8 rows per task off AMX: the rows are quantized before the tasks, so
  /// a task is as large as a group allows (each worker packs each weight
  /// block it multiplies: one task per block packs it once), split so that
  /// a hot expert still spreads over the workers.
  static constexpr int64_t kMaxInt8Rows = 768;
  static constexpr int64_t kInt8RowGranule = 6; // a VNNI register tile

  PackedGmmTasks(Emitter &e, const GmmKernelPlan &plan);

  int64_t columnBlock() const { return p.swiglu ? physicalColumns / 2 : physicalColumns; }
  /// Rows per task for a group of `groupRows`: the group split evenly into
  /// blocks of at most `maxRows`, each a multiple of `granule`.
  Value rowBlockFor(Value groupRows, int64_t maxRows, int64_t granule);

  /// Per worker: the packed weight block and which (group, column block) it
  /// holds; the AMX task's packed rows (bf16) and accumulator stores; the
  /// dot task's packed rows.
  struct Scratch {
    Value packedWeights, weightKey;
    Value amxRows, tileOut;
    Value dotRows;
  };
  Scratch allocScratch();
  void amxTask(Value r0, Value r1, Value g, Value cb, const Scratch &s);
  void dotTask(Value r0, Value r1, Value g, Value cb, const Scratch &s);
  void int8VectorTask(Value r0, Value r1, Value g, Value cb);
  void vnniTask(Value r0, Value r1, Value g, Value cb, const Scratch &s);

  /// int8: quantizes every row (through the permutation when gathered) into
  /// [rows + padding, paddedDepth] i8 and their scales, in parallel, before
  /// the tasks that read them.
  void quantizeRows();

  /// i1: whether this process may execute tile instructions. Asks the kernel
  /// for the AMX tile state (arch_prctl(ARCH_REQ_XCOMP_PERM,
  /// XFEATURE_XTILEDATA), which Linux requires before the first tile
  /// instruction); it fails on a CPU or kernel without AMX, which is the
  /// run-time fallback to the other task kinds.
  static Value requestTileState(Emitter &e, Operation *anchor);

private:
  /// Packs the task's weight block unless the worker holds it already.
  /// Returns the column pairs of the block: two 16-column tiles each, gate
  /// and up with SwiGLU.
  Value ensureWeights(Value g, Value cb, const Scratch &s);
  Value columnPairs(Value cb);
  /// Where the 16 weight columns of tile `half` of column pair `pair` are:
  /// the weight, the first column, the end of the columns that exist, and
  /// for int8 the weight's scales.
  struct TileColumns {
    Value weight, column, limit, scales, bias;
  };
  TileColumns tileColumns(Value c0, Value pair, int64_t half);
  /// Packs the block (int8: offset by 128).
  void packWeights(Value g, Value c0, Value colPairs, Value packed);
  /// The output of row `r` for column pair `pair` of the block at `c0`,
  /// of group `g`, from the f32 sums of its two tiles: their bias, the
  /// activation (SwiGLU or GPT-OSS's, columns maybe interleaved), zero for a padding row,
  /// rounding to the output type, masked to the columns that exist.
  void storePair(Value r, Value g, Value pair, Value c0, Value v0, Value v1);
  /// int8: the i32 sums of row `r` for the 16 columns of `tile` times the
  /// row's and the weight's scales, as f32.
  Value dequantizeSums(Value sums, Value r, Value g, const TileColumns &tile);
  /// sum_d q (w + 128) - 128 sum_d q: the sums of row `r` against the
  /// offset packed weights, without the offset.
  Value withoutWeightOffset(Value sums, Value r);
  void vnniRegisterTile(Value r0, Value rows, Value ir, Value q, Value colPairs, Value c0, Value g,
                        const Scratch &s);
  Value firstColumn(Value cb);

  void packAmxRows(Value r0, Value r1, Value rowsPadded, Value packed);
  /// Rows of pair `rowPair` from `firstRow` of the quantized rows (int8) or
  /// of the task's packed rows (bf16, firstRow 0).
  void amxTileProduct(Value rowPair, Value colPair, Value firstRow, const Scratch &s);
  void amxEpilogue(Value r0, Value r1, Value rowPair, Value colPair, Value c0, Value g,
                   const Scratch &s);

  void packDotRows(Value r0, Value r1, Value packed);
  void dotRegisterTile(Value r0, Value rows, Value ir, Value q, Value g, Value colPairs, Value c0,
                       const Scratch &s);

  Emitter &e;
  const GmmKernelPlan &p;
  int64_t depthPerLane;    // depth values in one 32-bit lane: 2 bf16, 4 int8
  int64_t tileDepth;       // depth values in a 64-byte tile row: 32 or 64
  int64_t paddedDepth;     // D rounded up to tileDepth (zeros past D)
  int64_t physicalColumns; // weight columns per task (gate and up with SwiGLU)
  Value quantizedRows;     // int8: i8 [rows + 32, paddedDepth]
  Value rowScales;         // int8: f32 [rows + 32]
  Value rowSums;           // int8: i32 [rows + 32], sum_d q[r, d]
};

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_GMMPACKEDTASKS_H
