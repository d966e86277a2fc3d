//===- MoeDialect.h - moe dialect -------------------------------*- C++ -*-===//
#ifndef MOEC_DIALECT_MOEDIALECT_H
#define MOEC_DIALECT_MOEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"

#include "dialect/MoeDialect.h.inc"
#include "dialect/MoeEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/MoeAttrs.h.inc"

namespace mlir::moe {
/// Name of the discardable attribute that names the axes of a shard.grid.
inline constexpr llvm::StringLiteral kAxesAttrName = "moe.axes";
/// On a per-shard function (moe-partition): the shard.grid it runs on.
inline constexpr llvm::StringLiteral kMeshAttrName = "moe.mesh";
/// On each argument and result of a per-shard function: for each dimension,
/// the mesh axes that split it (in order, the first most significant); none
/// means replicated. The host cuts full inputs and assembles results by it.
inline constexpr llvm::StringLiteral kSplitAttrName = "moe.split";
/// On a per-shard function: how it was partitioned ("dp", "ep-compact",
/// "ep-dense", "ep-ring", "ep-a2a"), for reports.
inline constexpr llvm::StringLiteral kParallelAttrName = "moe.parallel";
/// On a `<f>_forward_backward` function (moe-generate-backward): the
/// argument number of each gradient it returns after the loss.
inline constexpr llvm::StringLiteral kGradientArgsAttrName = "moe.gradient_args";
/// Unit attribute moe-generate-backward puts on every op of a
/// forward_backward function that belongs to the backward (after the loss):
/// the remat pass reads the forward/backward boundary from it.
inline constexpr llvm::StringLiteral kAdjointAttrName = "moe.adjoint";
/// Dictionary moe-plan-buffers puts on a function: arena_bytes,
/// lower_bound_bytes, buffers, unplanned_bytes (moec reports it).
inline constexpr llvm::StringLiteral kMemoryPlanAttrName = "moe.memory_plan";
/// Integer n on a moe.gmm that moe-fuse-shared-expert{mode=grouped} made:
/// its last n groups are the shared expert's. moe-quantize's int8_routed,
/// which keeps the shared expert in float, refuses such a gmm.
inline constexpr llvm::StringLiteral kSharedGroupsAttrName = "moe.shared_groups";
/// Dictionary moe-remat puts on a forward_backward function: policy (string),
/// kept_bytes, recomputed_flops and kept_dynamic (whether values of dynamic
/// size, not in kept_bytes, are kept too): what moec and moe-bench report.
inline constexpr llvm::StringLiteral kRematAttrName = "moe.remat";
/// On the module: the #moe.target it is compiled for (moe-attach-target).
inline constexpr llvm::StringLiteral kTargetAttrName = "moe.target";
/// On @f_prepare_weights and @f_prepared (moe-quantize, moe-prepare-weights):
/// the positions, among @f's arguments, of the weights the first takes and
/// of the arguments the second takes before the prepared weights. A host
/// calls prepared(f's args at kept, prepare(f's args at weight)...).
inline constexpr llvm::StringLiteral kWeightArgumentsAttrName = "moe.weight_arguments";
inline constexpr llvm::StringLiteral kKeptArgumentsAttrName = "moe.kept_arguments";
/// Whether `fn` is one of those two halves of a prepared form.
inline bool isPreparedHalf(mlir::Operation *fn) {
  return fn->hasAttr(kWeightArgumentsAttrName) || fn->hasAttr(kKeptArgumentsAttrName);
}
/// On a moe.gmm or moe.tgmm: its #moe.gmm_lowering (moe-select-lowering),
/// which moe-lower-to-loops follows; without it, the reference loops.
inline constexpr llvm::StringLiteral kLoweringAttrName = "moe.lowering";
/// On a function moe-mark-stages marked: the name of each stage, in the
/// order of the numbers its moert_stage_mark calls pass.
inline constexpr llvm::StringLiteral kStagesAttrName = "moe.stages";

/// The gmm kernel kinds a #moe.gmm_lowering may name (docs/codegen.md),
/// and "reference".
ArrayRef<StringLiteral> gmmKernelKinds();

/// The CPU features (LLVM's names) a #moe.target may list: those the
/// lowering decisions and the kernel kinds read.
ArrayRef<StringLiteral> targetFeatureNames();

/// The most vector registers a #moe.target has, hence a register tile's
/// bound; and the largest kc, nc or mc.
constexpr int64_t kMaxTileRegisters = 64;
constexpr int64_t kMaxTileBlock = int64_t(1) << 20;

/// Why the gmm tiles mr x nv (16-lane vectors), kc, nc, mc cannot be used
/// (sizes not positive or past the bounds above, nc not a multiple of 16 nv,
/// mc not of mr, an odd nv with the SwiGLU fused), or "". The target's own
/// register file is its question (strategy::GmmTiling::invalidReason adds it).
std::string gmmTileError(int64_t mr, int64_t nv, int64_t kc, int64_t nc, int64_t mc, bool swiglu);

/// The grid a per-shard function runs on: its `moe.mesh` (verified to name
/// a shard.grid with moe.axes and static axis sizes), the axes' names and
/// sizes in grid order. nullopt for a function without moe.mesh.
struct FunctionMesh {
  FlatSymbolRefAttr grid;
  SmallVector<StringRef> axes;
  SmallVector<int64_t> sizes;
};
std::optional<FunctionMesh> functionMesh(Operation *fn);

/// For each of the `rank` dimensions of a function argument or result with
/// these attributes, the axes its `moe.split` splits it over (all empty:
/// replicated, also without moe.split).
SmallVector<SmallVector<StringRef>> splitAxes(DictionaryAttr attrs, int64_t rank);
} // namespace mlir::moe

#endif // MOEC_DIALECT_MOEDIALECT_H
