//===- Passes.h - the lowering strategy's passes ----------------*- C++ -*-===//
#ifndef MOEC_STRATEGY_PASSES_H
#define MOEC_STRATEGY_PASSES_H

#include "dialect/MoeDialect.h"
#include "dialect/MoeOps.h"
#include "strategy/GmmStrategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::moe {

#define GEN_PASS_DECL
#include "strategy/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "strategy/Passes.h.inc"

namespace strategy {
/// The SwiGLU that `gmm` can hand its result to without the result reaching
/// memory: gmm's only use, and for the two-input form a gate and an up gmm
/// over the same rows, groups, weight type and scales, each used only there
/// and neither transposed. Null when there is none.
SwigluOp fusableSwiglu(GmmOp gmm);
} // namespace strategy

} // namespace mlir::moe

#endif // MOEC_STRATEGY_PASSES_H
