//===- MoeOps.h - moe dialect operations ------------------------*- C++ -*-===//
#ifndef MOEC_DIALECT_MOEOPS_H
#define MOEC_DIALECT_MOEOPS_H

#include "dialect/MoeDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialect/MoeOps.h.inc"

namespace mlir::moe {

/// The named axes of a collective resolved against its shard.grid.
struct ResolvedGridAxes {
  Operation *grid = nullptr;
  /// Indices of the named axes in the grid, in the order they were named.
  SmallVector<int16_t> indices;
  /// Number of shards along those axes together, or ShapedType::kDynamic when
  /// any of them has a dynamic size.
  int64_t shards = 1;
};

/// Looks up the shard.grid `grid` from `from` and resolves the named `axes`
/// to their indices. Emits an error at `from` and fails when the grid is
/// missing, has no `moe.axes` names, or does not name one of the axes.
FailureOr<ResolvedGridAxes> resolveGridAxes(Operation *from,
                                            SymbolTableCollection &symbols,
                                            FlatSymbolRefAttr grid,
                                            ArrayAttr axes);

/// The probability with which one uniform draw nulls its slot in
/// moe.null_slots, so that a fraction `fraction` of the K slots is null on
/// average: the fraction itself for `independent`, the solution p of
/// 1 - (1/K) sum_{j=1..K} (1 - p)^j = fraction for `take_until_null`.
double nullSlotProbability(double fraction, int64_t k, NullPolicy policy);

} // namespace mlir::moe

#endif // MOEC_DIALECT_MOEOPS_H
