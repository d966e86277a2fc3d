//===- PassUtils.h - IR-building helpers the moe passes share ------*- C++ -*-===//
#ifndef MOEC_PASSES_PASSUTILS_H
#define MOEC_PASSES_PASSUTILS_H

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

/// Size `i` of a ranked tensor as an index value (a constant when static).
Value dimValue(OpBuilder &b, Location loc, Value tensor, int64_t i);

} // namespace mlir::moe

#endif // MOEC_PASSES_PASSUTILS_H
