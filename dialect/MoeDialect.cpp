//===- MoeDialect.cpp - moe dialect registration ------------------------===//

#include "dialect/MoeDialect.h"
#include "dialect/MoeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::moe;

#include "dialect/MoeDialect.cpp.inc"
#include "dialect/MoeEnums.cpp.inc"

void MoeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/MoeOps.cpp.inc"
      >();
  registerAttributes();
}

// `moe.axes` names the axes of a shard.grid, one unique name per axis, so that
// collectives can say `over @mesh ["expert"]` instead of an axis index.
LogicalResult MoeDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == kGradientArgsAttrName) {
    auto fn = dyn_cast<FunctionOpInterface>(op);
    auto args = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!fn || !args)
      return op->emitError() << "'" << kGradientArgsAttrName
                             << "' must be an i64 array on a function";
    // Argument numbers of the tensor signature: lowering changes the
    // function's own arguments (memref descriptors), so only the order is
    // checked here.
    int64_t previous = -1;
    for (int64_t a : args.asArrayRef()) {
      if (a <= previous)
        return op->emitError() << "'" << kGradientArgsAttrName
                               << "' must list argument numbers in increasing order";
      previous = a;
    }
    return success();
  }
  if (attr.getName() == kWeightArgumentsAttrName || attr.getName() == kKeptArgumentsAttrName) {
    auto args = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !args)
      return op->emitError() << "'" << attr.getName() << "' must be an i64 array on a function";
    int64_t previous = -1;
    for (int64_t a : args.asArrayRef()) {
      if (a <= previous)
        return op->emitError() << "'" << attr.getName()
                               << "' must list argument numbers of the unprepared function in "
                                  "increasing order";
      previous = a;
    }
    return success();
  }
  if (attr.getName() == kStagesAttrName) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!names || !isa<FunctionOpInterface>(op) ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "'" << kStagesAttrName
                             << "' must be an array of stage names, on a function";
    return success();
  }
  if (attr.getName() == kAdjointAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kAdjointAttrName << "' must be a unit attribute";
    return success();
  }
  if (attr.getName() == kSharedGroupsAttrName) {
    auto groups = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<GmmOp>(op) || !groups || groups.getInt() < 1)
      return op->emitError() << "'" << kSharedGroupsAttrName
                             << "' must be a positive integer on a moe.gmm";
    return success();
  }
  if (attr.getName() == kRematAttrName) {
    auto remat = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!remat || !remat.getAs<StringAttr>("policy") || !remat.getAs<IntegerAttr>("kept_bytes") ||
        !remat.getAs<IntegerAttr>("recomputed_flops"))
      return op->emitError() << "'" << kRematAttrName
                             << "' must be a dictionary of policy, kept_bytes and recomputed_flops";
    return success();
  }
  if (attr.getName() == kMemoryPlanAttrName) {
    auto plan = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!plan || !llvm::all_of(plan, [](NamedAttribute e) { return isa<IntegerAttr>(e.getValue()); }))
      return op->emitError() << "'" << kMemoryPlanAttrName
                             << "' must be a dictionary of integers (bytes and counts)";
    return success();
  }
  if (attr.getName() == kMeshAttrName) {
    auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
    if (!ref || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << kMeshAttrName << "' must name a shard.grid, on a function";
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, ref);
    if (!grid)
      return op->emitError() << "'" << kMeshAttrName << "': " << ref
                             << " does not name a shard.grid";
    // What a per-shard function's host and backward read of its grid.
    if (!grid->hasAttr(kAxesAttrName))
      return op->emitError() << "'" << kMeshAttrName << "': " << ref << " has no '"
                             << kAxesAttrName << "' naming its axes";
    if (llvm::any_of(grid.getShape(), ShapedType::isDynamic))
      return op->emitError() << "'" << kMeshAttrName << "': " << ref
                             << " has an axis of dynamic size; a per-shard function runs on "
                                "a mesh of static sizes";
    return success();
  }
  if (attr.getName() == kParallelAttrName) {
    if (!isa<StringAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << kParallelAttrName << "' must be a string on a function";
    return success();
  }
  if (attr.getName() == kTargetAttrName) {
    if (!isa<TargetAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError() << "'" << kTargetAttrName << "' must be a #moe.target on a module";
    return success();
  }
  if (attr.getName() == kLoweringAttrName) {
    if (!isa<GmmLoweringAttr>(attr.getValue()) || !isa<GmmOp, TgmmOp>(op))
      return op->emitError() << "'" << kLoweringAttrName
                             << "' must be a #moe.gmm_lowering on a moe.gmm or moe.tgmm";
    auto lowering = cast<GmmLoweringAttr>(attr.getValue());
    if (auto tgmm = dyn_cast<TgmmOp>(op); tgmm && !lowering.isReference()) {
      size_t kinds = lowering.getKernels().size();
      bool dot = lowering.hasKernel("avx512bf16_dot") && tgmm.hasBf16Operands();
      bool valid = (kinds == 1 && (lowering.hasKernel("fma") || dot)) ||
                   (kinds == 2 && dot && lowering.hasKernel("amx_bf16"));
      if (!valid || lowering.getMr() || (lowering.getFuse() && !lowering.getFuse().empty()))
        return op->emitError() << "a moe.tgmm runs on the reference loops, or the fma kernel alone "
                                  "(avx512bf16_dot for bf16 operands, amx_bf16 beside it), "
                                  "without tiles or fusions";
    }
    if (isa<GmmOp>(op) && !lowering.isReference() && !lowering.getMr())
      return op->emitError() << "a moe.gmm's kernels need tiles (mr, nv, kc, nc, mc)";
    if (auto gmm = dyn_cast<GmmOp>(op); gmm && !lowering.isReference()) {
      // The kinds must be ones that compute this gmm's operand types: each
      // kernel reads its own operand layout.
      SmallVector<StringRef> allowed;
      StringRef form;
      if (gmm.isQuantized()) {
        allowed = {"int8_vector", "int8_avx2", "int8_vnni", "amx_int8"};
        form = "an int8 gmm takes int8_vector, int8_avx2 or int8_vnni, and amx_int8 beside it";
      } else if (gmm.isPackableBf16()) {
        // (On transposed weights too: the packed block is the same pair
        // layout, PackedOperands::packTransposedWeights.)
        allowed = {"fma", "avx512bf16_dot", "amx_bf16"};
        form = "a bf16 gmm takes fma or avx512bf16_dot, and amx_bf16 beside it";
      } else {
        allowed = {"fma"};
        form = "an f32 gmm takes fma alone";
      }
      int base = 0;
      for (Attribute k : lowering.getKernels()) {
        StringRef kind = cast<StringAttr>(k).getValue();
        if (!llvm::is_contained(allowed, kind))
          return op->emitError() << "kernel kind '" << kind << "' does not compute this gmm: " << form;
        base += !kind.starts_with("amx");
      }
      if (base != 1)
        return op->emitError() << "one non-AMX kernel kind runs every group AMX does not: " << form;
    }
    return success();
  }
  if (attr.getName() != kAxesAttrName)
    return op->emitError() << "unknown moe dialect attribute '"
                           << attr.getName().getValue() << "'";
  auto grid = dyn_cast<shard::GridOp>(op);
  if (!grid)
    return op->emitError() << "'" << kAxesAttrName
                           << "' may only be placed on a shard.grid";
  auto names = dyn_cast<ArrayAttr>(attr.getValue());
  if (!names || !llvm::all_of(names, [](Attribute a) {
        return isa<StringAttr>(a);
      }))
    return op->emitError() << "'" << kAxesAttrName
                           << "' must be an array of strings";
  if (static_cast<int64_t>(names.size()) != grid.getRank())
    return op->emitError() << "'" << kAxesAttrName << "' names "
                           << names.size() << " axes but the grid has "
                           << grid.getRank();
  llvm::StringSet<> seen;
  for (auto [a, size] : llvm::zip(names, grid.getShape())) {
    StringRef name = cast<StringAttr>(a).getValue();
    if (name.empty())
      return op->emitError() << "'" << kAxesAttrName
                             << "' has an empty axis name";
    // Blocks split over an axis of no shards, and collectives over it,
    // would divide by its size.
    if (!ShapedType::isDynamic(size) && size < 1)
      return op->emitError() << "'" << kAxesAttrName << "': axis '" << name << "' has size "
                             << size << "; a mesh axis needs at least one shard";
    if (!seen.insert(name).second)
      return op->emitError() << "'" << kAxesAttrName << "' names axis '"
                             << name << "' twice";
  }
  return success();
}

/// `moe.split` on an argument or result of type `type`: one list of axis
/// names per dimension, each axis once, every name an axis of the
/// function's grid (`moe.mesh`) when it has one.
static LogicalResult verifySplit(Operation *op, Type type, NamedAttribute attr,
                                 StringRef what) {
  if (attr.getName() != mlir::moe::kSplitAttrName)
    return op->emitError() << "unknown moe dialect attribute '" << attr.getName().getValue()
                           << "' on " << what;
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto dims = dyn_cast<ArrayAttr>(attr.getValue());
  if (!tensor || !dims || int64_t(dims.size()) != tensor.getRank())
    return op->emitError() << "'" << mlir::moe::kSplitAttrName << "' on " << what
                           << " must list, for each dimension of its ranked tensor, the mesh "
                              "axes splitting it";
  ArrayAttr names;
  if (auto ref = op->getAttrOfType<FlatSymbolRefAttr>(mlir::moe::kMeshAttrName))
    if (auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, ref))
      names = grid->getAttrOfType<ArrayAttr>(mlir::moe::kAxesAttrName);
  llvm::StringSet<> seen;
  for (Attribute dim : dims) {
    auto axes = dyn_cast<ArrayAttr>(dim);
    if (!axes)
      return op->emitError() << "'" << mlir::moe::kSplitAttrName << "' on " << what
                             << ": each dimension's entry must be an array of axis names";
    for (Attribute a : axes) {
      auto name = dyn_cast<StringAttr>(a);
      if (!name)
        return op->emitError() << "'" << mlir::moe::kSplitAttrName << "' on " << what
                               << ": axis names must be strings";
      if (!seen.insert(name.getValue()).second)
        return op->emitError() << "'" << mlir::moe::kSplitAttrName << "' on " << what
                               << " splits over axis '" << name.getValue() << "' twice";
      if (names && !llvm::is_contained(names, a))
        return op->emitError() << "'" << mlir::moe::kSplitAttrName << "' on " << what
                               << ": the grid has no axis '" << name.getValue() << "'";
    }
  }
  return success();
}

/// `moe.split` on argument or result `index` of a function.
static LogicalResult verifyFunctionSplit(Operation *op, unsigned region, unsigned index,
                                         NamedAttribute attr, bool result) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  StringRef what = result ? "result" : "argument";
  if (!fn || region != 0 || index >= (result ? fn.getNumResults() : fn.getNumArguments()))
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' may only be placed on a function's " << what << "s";
  Type type = result ? fn.getResultTypes()[index] : fn.getArgumentTypes()[index];
  return verifySplit(op, type, attr, (what + " " + Twine(index)).str());
}

LogicalResult MoeDialect::verifyRegionArgAttribute(Operation *op, unsigned region,
                                                   unsigned arg, NamedAttribute attr) {
  return verifyFunctionSplit(op, region, arg, attr, /*result=*/false);
}

LogicalResult MoeDialect::verifyRegionResultAttribute(Operation *op, unsigned region,
                                                      unsigned result, NamedAttribute attr) {
  return verifyFunctionSplit(op, region, result, attr, /*result=*/true);
}

std::optional<mlir::moe::FunctionMesh> mlir::moe::functionMesh(Operation *fn) {
  auto ref = fn->getAttrOfType<FlatSymbolRefAttr>(kMeshAttrName);
  if (!ref)
    return std::nullopt;
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(fn, ref);
  assert(grid && grid->hasAttr(kAxesAttrName) && "moe.mesh is verified");
  FunctionMesh mesh{ref, {}, {}};
  for (auto [name, size] : llvm::zip(grid->getAttrOfType<ArrayAttr>(kAxesAttrName),
                                     grid.getShape())) {
    mesh.axes.push_back(cast<StringAttr>(name).getValue());
    mesh.sizes.push_back(size);
  }
  return mesh;
}

SmallVector<SmallVector<StringRef>> mlir::moe::splitAxes(DictionaryAttr attrs, int64_t rank) {
  SmallVector<SmallVector<StringRef>> split(rank);
  auto dims = attrs ? attrs.getAs<ArrayAttr>(kSplitAttrName) : ArrayAttr();
  if (!dims)
    return split;
  for (auto [d, axes] : llvm::enumerate(dims))
    for (Attribute a : cast<ArrayAttr>(axes))
      split[d].push_back(cast<StringAttr>(a).getValue());
  return split;
}
