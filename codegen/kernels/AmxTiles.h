//===- AmxTiles.h - what the AMX tile code of every op shares ---*- C++ -*-===//
//
// The gmm's AMX kinds (AmxKernel.cpp) and the tgmm's AMX tasks
// (lowerings/TgmmAmx.cpp) both ask Linux for the tile state at run time and
// keep their tile code in functions of their own; the vector pieces the
// packs of both share sit here too.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_KERNELS_AMXTILES_H
#define MOEC_CODEGEN_KERNELS_AMXTILES_H

#include "mlir/IR/Value.h"
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

/// The 16 x 16 transpose of sixteen vector<16xi32> rows, in place (plain
/// vector.shuffles, which LLVM selects for any AVX-512 target; upstream's
/// vector.transpose lowering is a pattern set this pipeline does not run).
void transpose16x16(ImplicitLocOpBuilder &b, SmallVectorImpl<Value> &rows);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_KERNELS_AMXTILES_H
