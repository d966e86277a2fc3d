//===- PassUtils.h - IR-building helpers the moe passes share ------*- C++ -*-===//
#ifndef MOEC_PASSES_PASSUTILS_H
#define MOEC_PASSES_PASSUTILS_H

#include "dialect/MoeOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::moe {

/// `a` and `b` concatenated along `dim`: folded into one constant when both
/// are dense constants (weights known at compile time), else a tensor.concat
/// that runs with the function.
Value concatWeights(OpBuilder &b, Location loc, Value a, Value c, int64_t dim);

/// lhs [T, K] @ rhs [K, N] with an f32 accumulator whatever the storage
/// type, as upstream's linalg.matmul (nothing MoE-specific about it).
Value matmulF32(OpBuilder &b, Location loc, Value lhs, Value rhs);

/// The routed experts of `block` with the given routing: pack, the up gmm(s)
/// over `gateUp` (one fused w13 or w1 and w3), swiglu, the routing weight
/// when the block preweights, the down gmm over `down`, combine. Pack and
/// combine strategies come from `block`. Returns [T, H].
Value buildRoutedExperts(OpBuilder &b, Location loc, BlockOp block, Value ids,
                         Value weights, int64_t experts, ValueRange gateUp,
                         Value down);

/// Routes `block`'s tokens with its router (logits, or x @ router weight).
RouteOp buildRoute(OpBuilder &b, Location loc, BlockOp block);


} // namespace mlir::moe

#endif // MOEC_PASSES_PASSUTILS_H
