//===- Passes.h - the lowering strategy's passes ----------------*- C++ -*-===//
#ifndef MOEC_STRATEGY_PASSES_H
#define MOEC_STRATEGY_PASSES_H

#include "dialect/MoeDialect.h"
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

} // namespace mlir::moe

#endif // MOEC_STRATEGY_PASSES_H
