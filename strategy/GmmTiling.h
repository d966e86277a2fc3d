//===- GmmTiling.h - tile sizes of the grouped-matmul microkernel --------===//
//
// The knobs of the fast gmm (the seeds' bt/bf/bd and the register tile), where
// they come from (a cost model of the machine, or a tuning table that
// `moe-bench --tune` writes), and how they are spelled on a command line.
//
//===----------------------------------------------------------------------===//

#ifndef MOEC_STRATEGY_GMMTILING_H
#define MOEC_STRATEGY_GMMTILING_H

#include "dialect/MoeDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace mlir::moe::strategy {

/// One tile configuration. A task is `rowBlock` rows of one group times
/// `columnBlock` weight columns (output columns without SwiGLU, half of them
/// with it); inside it the depth is walked `depthBlock` at a
/// time (the packed weight block kc x nc stays in L2) and the register tile is
/// `rows` x (16 * `vectors`) f32 accumulators.
struct GmmTiling {
  int64_t rows = 6;          // mr: rows of the register tile
  int64_t vectors = 4;       // nv: 16-lane vectors per row of the register tile
  int64_t depthBlock = 256;  // kc
  int64_t columnBlock = 256; // nc, in weight columns
  int64_t rowBlock = 192;    // mc

  /// `mr=6,nv=4,kc=256,nc=256,mc=192`; every key optional in parse().
  std::string str() const;
  static llvm::Expected<GmmTiling> parse(llvm::StringRef text);
  /// Why the tiling cannot be used on a register file of `vectorRegisters`
  /// 16-lane vectors, or empty.
  std::string invalidReason(bool swiglu, int64_t vectorRegisters = 32) const;
  /// The tiles a #moe.gmm_lowering names.
  static GmmTiling of(GmmLoweringAttr lowering);
  /// Vector registers a register tile of `rows` x `vectors` holds at once:
  /// its accumulators, a weight row's vectors and the broadcast.
  static int64_t registersFor(int64_t rows, int64_t vectors) { return rows * vectors + vectors + 1; }
  /// The most rows a tile `vectors` wide may have on a register file of
  /// `vectorRegisters` (0 when not even one row fits).
  static int64_t maxRows(int64_t vectors, int64_t vectorRegisters) {
    return std::max<int64_t>(0, (vectorRegisters - vectors - 1) / vectors);
  }
  bool operator==(const GmmTiling &o) const {
    return rows == o.rows && vectors == o.vectors && depthBlock == o.depthBlock &&
           columnBlock == o.columnBlock && rowBlock == o.rowBlock;
  }
};

/// What the cost model knows of the machine. Sizes in bytes.
struct MachineModel {
  int64_t vectorRegisters = 32; // zmm0-31 with AVX-512
  int64_t l1Bytes = 48 << 10;
  int64_t l2Bytes = 2 << 20;
  /// AMX tiles with bf16 products (amx-tile, amx-bf16): bf16 gmms get AMX
  /// tasks. Whether the process may use them is still checked at run time.
  bool amxBf16 = false;
  /// AMX tiles with int8 products (amx-tile, amx-int8).
  bool amxInt8 = false;
  /// vpdpbusd: int8 dot products on zmm registers.
  bool avx512Vnni = false;
  /// AVX2 (vpmaddwd on ymm registers): int8 products without VNNI.
  bool avx2 = false;
  /// vdpbf16ps (avx512bf16): bf16 dot products on zmm registers.
  bool avx512Bf16 = false;
  /// The target's features (the host's unless moec --target-cpu names
  /// another CPU: TargetCpu.h) and, for the host, its caches (from sysconf
  /// where it reports them; a named CPU gets the defaults above).
  static MachineModel target();
  /// The model of a CPU with `features` (LLVM's names), with this host's
  /// caches when `host`.
  static MachineModel forFeatures(const llvm::StringMap<bool> &features, bool host);
  /// What a #moe.target says.
  static MachineModel fromTarget(TargetAttr target);
  /// The defaults with this host's L1 and L2 sizes where sysconf has them.
  static MachineModel hostCaches();
};

/// The shape a tiling is chosen for: depth D, output width N, whether the
/// up-projection's SwiGLU is fused into the epilogue (then the weight has 2N
/// columns), and the storage element size.
struct GmmShape {
  int64_t depth = 0;
  int64_t width = 0;
  bool swiglu = false;
  int64_t elementBytes = 4;
  /// `D=2048,N=1408,swiglu=1,bytes=4`: the key of a tuning-table line.
  std::string key() const;
};

/// The cost model: the largest register tile that leaves registers for the
/// weight vectors and the broadcast, kc so that the register tile's rows of A
/// (mr x kc) fill a quarter of L1 (with AVX-512's four vectors a row, 3/8 of
/// it up to kc 512), nc so that the packed weight block
/// (kc x nc) fits in a quarter of L2 and 256 KiB, mc so that mc rows of the
/// quarter's columns (not the capped nc) fill another quarter.
GmmTiling costModelTiling(const GmmShape &shape, const MachineModel &machine);

/// The weight columns of one packed (bf16 or int8) gmm task: the weight's
/// columns rounded up to 32 (gate and up columns both with SwiGLU) when
/// fewer, else the most whole register tiles (multiples of 64, up to 512)
/// whose block [D padded, columns] fits in half of L2; 32 when not even 64 do.
int64_t packedColumnsFor(const GmmShape &shape, bool int8, const MachineModel &machine);

/// A tuning table: lines `<shape key> <tiling>` (# comments), what
/// `moe-bench --tune` stores. Returns the tiling for `shape`, if listed.
llvm::Expected<std::optional<GmmTiling>> lookupTuningTable(llvm::StringRef path,
                                                           const GmmShape &shape);
/// Whether `path` reads as a tuning table: every line `<shape> <tiling>`.
llvm::Error checkTuningTable(llvm::StringRef path);
/// Adds or replaces the line for `shape` (atomically: a temporary, then a
/// rename), keeping the other lines.
llvm::Error storeTuningTable(llvm::StringRef path, const GmmShape &shape,
                             const GmmTiling &tiling, llvm::StringRef comment);

} // namespace mlir::moe::strategy

#endif // MOEC_STRATEGY_GMMTILING_H
