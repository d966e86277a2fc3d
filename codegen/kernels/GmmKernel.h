//===- GmmKernel.h - one kind of task of the fast grouped matmul -*- C++ -*-===//
//
// The fast moe.gmm is a scheduler (GmmScheduler.cpp: a task table, one
// worker per thread taking tasks from an atomic counter) running tasks of
// the kinds #moe.gmm_lowering lists. A task is rows [firstRow, endRow) of one
// group times one block of output columns (or, for a kind of whole row
// blocks, a range of them), over the whole depth. (For a kind that runs a
// weight block's row blocks together the scheduler's task is a range of row
// blocks of one column block, which it runs as the kind's tasks one after
// another on one worker: a kind sees one row block a task.) Each kind is a
// GmmKernel in a file of its own:
//
//   fma              FmaKernel.cpp        AVX-512 FMA register tiles (f32, bf16 widened)
//   avx512bf16_dot   Bf16DotKernel.cpp    vdpbf16ps register tiles
//   amx_bf16         AmxKernel.cpp        tdpbf16ps on AMX tiles
//   amx_int8         AmxKernel.cpp        tdpbsud on AMX tiles
//   int8_vnni        Int8VnniKernel.cpp   vpdpbusd register tiles
//   int8_avx2        Int8Avx2Kernel.cpp   vpmaddwd register tiles (AVX2 without VNNI)
//   int8_vector      Int8VectorKernel.cpp exact i32 multiply-adds
//
// A new kind is one file defining a GmmKernel and its GmmKernelKind (name,
// the features it compiles with, its factory), a line in
// GmmKernelRegistry.cpp, its name in the dialect's gmmKernelKinds() (which
// the attribute's verifier checks), and the strategy's rule for when to pick
// it; test/unit/GmmKernelTest.cpp and bench/kernels (moe-kernel-bench) then
// test and measure it from the registry (with its harness setup).
//
// Why an interface of our own: upstream has ukernel-style dispatch only in
// IREE; MLIR itself has no notion of a run-time choice among kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_KERNELS_GMMKERNEL_H
#define MOEC_CODEGEN_KERNELS_GMMKERNEL_H

#include "codegen/kernels/GmmKernelPlan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace mlir::moe::codegen {

class Emitter;
class PackedOperands;

/// One task, as the scheduler's table holds it (index values), and the
/// weight block its worker will likely multiply next: the task `workers`
/// on in the table (the last task past the table's end), as tasks of about
/// equal size alternate between the workers; its own block when that task
/// is of another kind, and for the row blocks of a range but its last (the
/// worker's next row block is of the same block). A kind reading weights
/// packed at load time fetches that block while the task runs, so its
/// first rows do not wait on DRAM.
struct GmmTask {
  Value firstRow, endRow, group, columnBlock;
  /// The end of the task's column blocks: columnBlock + 1, or for a kind of
  /// whole row blocks the end of its range (GmmKernel::wholeRowBlocks).
  Value columnBlockEnd;
  Value nextGroup, nextColumnBlock;
};

/// Rows per task for a group of `groupRows` (index): the group split evenly
/// into blocks of at most `maxRows`, each a multiple of `granule` (never
/// fewer than blocks of `maxRows` would make).
Value evenRowBlock(Emitter &e, Value groupRows, int64_t maxRows, int64_t granule);

/// The row of the lhs that gmm row `r` reads: `r`, or gathered its token
/// perm[r] / topK. A padding slot (perm < 0) reads token 0: storePair (and
/// the fma kind's epilogue) replace its sums by zeros.
Value lhsRow(Emitter &e, const GmmKernelPlan &p, Value r);

/// A task's rows by count, for the register-tile kinds: `tile(fullRows,
/// ir)` for each ir in [0, rows) step fullRows that a full tile fills, then
/// for the rows left (rows % fullRows) `tile(m, ir)` once, for the smallest
/// m of `tileRows` (ascending, each below `fullRows`) that holds them (a
/// tile's rows past `rows` repeat the last: computed, never stored), or one
/// more full tile where none does. No code runs for 0 rows. So a task of a
/// few rows (decode sizes) is one small tile, and a task of 7 rows one full
/// tile and a 1-row one, not two full tiles (T 64 top-8 gives an expert 3-17
/// rows).
/// Sizes between, not every count: each variant is a register tile's loop
/// and epilogue more to compile (every count 1 to 5 of 6 rows doubled
/// moe-bench's bf16 compile time, 0.5 -> 1.0 s; 1, 2 and 4 take moec's
/// examples/family-mixtral-8x7b.mlir from 0.42 to 0.60 s). Each variant is
/// emitted once.
void emitByRowCount(Emitter &e, Value rows, ArrayRef<int64_t> tileRows, int64_t fullRows,
                    function_ref<void(int64_t m, Value ir)> tile);

/// The small tiles of the 6-row kinds (avx512bf16_dot, int8_vnni): T 16
/// top-8 gives an expert 0-5 rows, 2.1 on average.
inline constexpr int64_t kDecodeTileRows[] = {1, 2, 4};

/// What every kind of the gmm kernel family provides. An object is made per
/// lowered gmm; its methods emit code at the emitter's insertion point, in
/// this order: prepare (once, before the task table), then inside each
/// worker allocScratch, then emitTask (the task's code, once).
class GmmKernel {
public:
  GmmKernel(Emitter &e, const GmmKernelPlan &plan) : e(e), p(plan) {}
  virtual ~GmmKernel() = default;

  /// What the task table is sized by: a group of R rows is at most
  /// R / rowGranule() + 1 tasks of this kind.
  virtual int64_t rowGranule() const = 0;
  /// Rows per task for a group of `groupRows` rows (index), so that the
  /// group is at most groupRows / rowGranule() + 1 tasks.
  virtual Value rowBlock(Value groupRows) = 0;
  /// Output columns per task.
  virtual int64_t columnBlock() const = 0;
  /// Whether a task is a whole row block, every column block of it (the
  /// kind runs the column blocks [columnBlock, columnBlockEnd) itself, its
  /// rows packed once), instead of one column block of it (or a range of
  /// row blocks of one: runsRowBlocksTogether). A whole row block goes into
  /// ranges of column blocks when there are fewer than two such tasks a
  /// worker.
  virtual bool wholeRowBlocks() const { return false; }
  /// Whether the scheduler gives a task a range of row blocks of one weight
  /// block, which its worker runs one after another (GmmScheduler.cpp). A
  /// kind that packs a task's weight block per call into a per-worker cache
  /// (PackedOperands::ensureWeights) packs it once for all of them; the dot
  /// kind reading weights packed at load time reads the block from DRAM
  /// once and then from its L2, where two workers taking the block's row
  /// blocks side by side would each read it from DRAM (Bf16DotKernel.cpp).
  /// A kind that packs per depth block (fma) gains nothing from coarser
  /// tasks, and the int8 kinds' prepared tasks hold a group's rows already
  /// (up to PackedOperands::kMaxInt8Rows).
  virtual bool runsRowBlocksTogether() const { return false; }

  /// Whether the kind loads int8 rows as tiles of consecutive quantized
  /// rows (AMX), which a token quantized once for its K gathered rows
  /// cannot give (PackedOperands::keepRowOrder). Asked of every kind of
  /// the gmm before any prepare().
  virtual bool loadsQuantizedRowTiles() const { return false; }

  /// Code before the task table, once per call (int8 kinds quantize the
  /// rows; tile kinds ask Linux for the tile state).
  virtual void prepare() {}
  /// For a kind listed after the default one (the tile kinds): i1, whether
  /// a group of `groupRows` rows runs as this kind, decided at run time.
  virtual Value takesGroup(Value groupRows) { return {}; }
  /// Per worker, before its first task: the kind's scratch buffers.
  virtual void allocScratch() = 0;
  /// The task's code.
  virtual void emitTask(const GmmTask &task) = 0;

protected:
  Emitter &e;
  const GmmKernelPlan &p;
};

/// A kind as the registry holds it, defined in the kind's file.
struct GmmKernelKind {
  /// As #moe.gmm_lowering lists it.
  llvm::StringLiteral name;
  /// The CPU features (LLVM's names) the compile target must have for its
  /// instructions; moe-lower-to-loops checks them against #moe.target.
  llvm::ArrayRef<llvm::StringLiteral> features;
  /// Whether it runs on AMX tiles, which compile for any x86-64 target: its
  /// code goes into a function of its own (LLVM configures the tiles in the
  /// prologue of every function using them, which must not run on a CPU
  /// without AMX), and a group takes it only when Linux grants the tile
  /// state (GmmKernel::takesGroup).
  bool usesTiles;
  /// The kind for `plan`, sharing `shared` (the packed operands the packed
  /// kinds read) with the plan's other kinds; null when the plan's operands
  /// are not the kind's (the attribute's verifier refuses those).
  std::unique_ptr<GmmKernel> (*make)(Emitter &e, const GmmKernelPlan &plan, PackedOperands &shared);
};

/// The kinds, one per kind file (AmxKernel.cpp defines two).
extern const GmmKernelKind kFmaKernel, kBf16DotKernel, kAmxBf16Kernel, kAmxInt8Kernel,
    kInt8VnniKernel, kInt8Avx2Kernel, kInt8VectorKernel;

/// Every kind the registry knows, in the dialect's order.
llvm::ArrayRef<const GmmKernelKind *> registeredGmmKernels();
/// The kind named `name`; null for a name the registry does not know.
const GmmKernelKind *findGmmKernel(llvm::StringRef name);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_KERNELS_GMMKERNEL_H
