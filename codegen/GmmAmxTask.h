//===- GmmAmxTask.h - AMX tasks of the fast grouped matmul ------*- C++ -*-===//

#ifndef MOEC_CODEGEN_GMMAMXTASK_H
#define MOEC_CODEGEN_GMMAMXTASK_H

#include "codegen/GmmKernelPlan.h"
#include "mlir/IR/Operation.h"

namespace mlir::moe::codegen {

class Emitter;

/// The AMX task kind of the fast gmm (bf16 x bf16 -> f32 in tile registers):
/// a task is `rowBlock()` rows of one group times `columnBlock()` output
/// columns, over the whole depth.
class AmxGmmTasks {
public:
  /// Groups with fewer rows run as FMA tasks: a 16-row tile would mostly
  /// multiply padding, and such groups are bound by weight bandwidth anyway.
  static constexpr int64_t kMinRows = 16;

  AmxGmmTasks(Emitter &e, const GmmKernelPlan &plan, int64_t l2Bytes);

  int64_t columnBlock() const { return swigluColumns ? physicalColumns / 2 : physicalColumns; }
  /// Rows per task for a group of `groupRows` rows: the group split evenly
  /// into blocks of at most kMaxRows, each a multiple of 32.
  Value rowBlockFor(Value groupRows);
  static constexpr int64_t kRowGranule = 32;
  /// The packed rows need not fit in L2: the product walks them one row pair
  /// at a time (a row pair stays in L2 while the weight block's column pairs
  /// stream past it). So tasks are large, and a group of up to kMaxRows rows
  /// packs each weight block once.
  static constexpr int64_t kMaxRows = 256;

  /// Per worker: the packed row block, the packed weight block and which
  /// (group, column block) it holds, the four accumulator tiles' stores.
  struct Scratch {
    Value packedRows, packedWeights, weightKey, tileOut;
  };
  Scratch allocScratch();
  void task(Value r0, Value r1, Value g, Value cb, const Scratch &s);

  /// i1: whether this process may execute tile instructions. Asks the kernel
  /// for the AMX tile state (arch_prctl(ARCH_REQ_XCOMP_PERM,
  /// XFEATURE_XTILEDATA), which Linux requires before the first tile
  /// instruction); it fails on a CPU or kernel without AMX, which is the
  /// run-time fallback to the FMA tasks.
  static Value requestTileState(Emitter &e, Operation *anchor);

private:
  void packWeights(Value g, Value c0, Value tilesUsed, Value packed);
  void packRows(Value r0, Value r1, Value rowsPadded, Value packed);
  void tileProduct(Value rowPair, Value colPair, const Scratch &s);
  void epilogue(Value r0, Value r1, Value rowPair, Value colPair, Value c0, const Scratch &s);

  Emitter &e;
  const GmmKernelPlan &p;
  bool swigluColumns;
  int64_t paddedDepth;     // D rounded up to 32 (zeros past D)
  int64_t physicalColumns; // weight columns per task (gate and up with SwiGLU)
};

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_GMMAMXTASK_H
