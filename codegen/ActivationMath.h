//===- ActivationMath.h - SwiGLU and its gradient on f32 vectors -*- C++ -*-===//
//
// What moe.swiglu and moe.swiglu_grad compute, on f32 vectors: the ops'
// own vector loops (lowerings/ActivationLowering.cpp) and
// the gmm kernels' epilogues that fuse the SwiGLU (kernels/) build the same
// arithmetic from here, so a fused and an unfused block differ only in
// where values are rounded, never in the formula.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_ACTIVATIONMATH_H
#define MOEC_CODEGEN_ACTIVATIONMATH_H

#include "mlir/IR/Value.h"

#include <utility>

namespace mlir::moe::codegen {

class Emitter;

/// The activation's attributes (moe.swiglu's and moe.swiglu_grad's).
struct ActivationSpec {
  bool gptOss = false;
  double alpha = 1.702, limit = 7.0;
  template <typename SwigluLikeOp>
  static ActivationSpec of(SwigluLikeOp op);
};

/// silu(gate) * up, or GPT-OSS's (clamp(up, -limit, limit) + 1) * g *
/// sigmoid(alpha g) with g = min(gate, limit); `gate` and `up` are f32
/// vectors of one type.
Value activation(Emitter &e, const ActivationSpec &a, Value gate, Value up);

/// d gate and d up of activation(gate, up) for the output gradient `grad`
/// (moe.swiglu_grad's formulas: silu'(z) = s (1 + z (1 - s)); GPT-OSS's
/// clamped values pass no gradient).
std::pair<Value, Value> activationGrad(Emitter &e, const ActivationSpec &a, Value gate, Value up,
                                       Value grad);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_ACTIVATIONMATH_H
