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

/// The ops one kernel runs together under `gmm`'s `lowering`, as the IR has
/// them: without a fused SwiGLU, `gmm` alone as the gate; with one, the
/// SwiGLU that is gmm's only use (null if none), its first input's gmm as
/// the gate and its second's as the up gmm (null where the input is no
/// gmm). moe-lower-to-loops checks what it finds; moe-prepare-weights packs
/// the gate's and up's weights together.
struct FusedGmms {
  GmmOp gate, up;
  SwigluOp swiglu;
  /// Whether every op the lowering fuses is there.
  bool complete() const {
    return gate && (!swiglu || SwigluOp(swiglu).getInputs().size() == 1 || up);
  }
};
FusedGmms fusedGmms(GmmOp gmm, GmmLoweringAttr lowering);
} // namespace strategy

} // namespace mlir::moe

#endif // MOEC_STRATEGY_PASSES_H
