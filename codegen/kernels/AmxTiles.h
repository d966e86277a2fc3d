//===- AmxTiles.h - what the AMX tile code of every op shares ---*- C++ -*-===//
//
// The gmm's AMX kinds (AmxKernel.cpp) and the tgmm's AMX tasks
// (lowerings/TgmmAmx.cpp) both ask Linux for the tile state at run time,
// keep their tile code in functions of their own, and run the same loop of
// 2 x 2 accumulator blocks with its epilogue spread over the steps of the
// next block; the 16 x 16 transpose their packs use sits here too.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_KERNELS_AMXTILES_H
#define MOEC_CODEGEN_KERNELS_AMXTILES_H

#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
class ImplicitLocOpBuilder;
class Operation;
class Region;
} // namespace mlir

namespace mlir::moe::codegen {

class Emitter;

/// i1: whether this process may execute tile instructions. Asks the kernel
/// for the AMX tile state (arch_prctl(ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA), which Linux requires before the first tile
/// instruction); it fails on a CPU or kernel without AMX, which is the
/// run-time fallback to another kind.
Value requestAmxTileState(Emitter &e);

/// Moves tile code (`region`, one block) into a private function of its
/// own, called from the region, never inlined. LLVM configures the tile
/// registers (ldtilecfg) and releases them (tilerelease) in the prologue and
/// epilogue of every function that uses tiles: left in the caller, those
/// run on every call, and a CPU without AMX stops with SIGILL before the
/// run-time check that would have chosen another kind. `anchor` is an op of
/// the module.
void outlineTileCode(Region &region, Operation *anchor);

/// The scratch of the blocks loop below, per worker: `sums` [2, 32, 32]
/// (two blocks' accumulators, f32 or i32) and `zeros` [64, 16], four zero
/// accumulator tiles.
struct AmxBlockScratch {
  Value sums, zeros;
};
AmxBlockScratch allocAmxBlockScratch(Emitter &e, Type sum);
/// Four accumulator tiles, each loaded from a zero tile of its own. One
/// amx.tile_zero shared by all four became copies through the stack (AMX
/// has no tile move): a tile store and a load of it, which waits for the
/// store to reach L1 (tiles forward nothing) - a quarter of the gmm's down
/// projection's time on a Sapphire Rapids. Four amx.tile_zero (MLIR 22's
/// op has a write effect, so CSE keeps all four) measured no faster than
/// these loads.
SmallVector<Value> amxZeroAccumulators(Emitter &e, const AmxBlockScratch &scratch);

/// The loop the AMX gmm and tgmm share: `count` blocks of 2 x 2 accumulator
/// tiles (32 x 32 sums), each from `initial(block)` (emitted before the
/// block's steps: also the place for what they share, such as the block's
/// coordinates, which LLVM would not hoist out of them: a division may
/// trap), updated by `step(block, s, sums)` for s in [0, steps) (four products; the operand tiles loaded
/// before them, so that all four are live at once and take four tile
/// registers), and stored to scratch.sums[block % 2]. From there
/// `storeRow(block, half, row)` takes each of the block's 32 rows out, a
/// row per step of the next block (when there are fewer than 32 steps:
/// ceil(32 / steps) a step if their count is a compile-time constant, else
/// the rest after the steps), and the last block's after the loop: done right after
/// the block, its vector loads waited for the tile stores to reach L1 while
/// the tile unit stood idle (a third of the gmm's down projection's time).
void emitAmxBlocks(Emitter &e, const AmxBlockScratch &scratch, Value count, Value steps,
                   function_ref<SmallVector<Value>(Value block)> initial,
                   function_ref<SmallVector<Value>(Value block, Value s, ValueRange sums)> step,
                   function_ref<void(Value block, Value half, Value row)> storeRow);

/// The 16 x 16 transpose of sixteen vector<16xi32> rows, in place (plain
/// vector.shuffles, which LLVM selects for any AVX-512 target; upstream's
/// vector.transpose lowering is a pattern set this pipeline does not run).
void transpose16x16(ImplicitLocOpBuilder &b, SmallVectorImpl<Value> &rows);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_KERNELS_AMXTILES_H
