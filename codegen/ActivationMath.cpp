//===- ActivationMath.cpp - SwiGLU and its gradient on f32 values ---------===//

#include "codegen/ActivationMath.h"
#include "codegen/Emitter.h"
#include "dialect/MoeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::moe::codegen;

template <typename SwigluLikeOp>
ActivationSpec ActivationSpec::of(SwigluLikeOp op) {
  return {op.getActivation() == Activation::gpt_oss, op.getAlpha().convertToDouble(),
          op.getLimit().convertToDouble()};
}
template ActivationSpec ActivationSpec::of(SwigluOp);
template ActivationSpec ActivationSpec::of(SwigluGradOp);

namespace {
/// `v` as a constant of `like`'s type (an f32 or a vector of f32).
Value constantLike(Emitter &e, Value like, double v) {
  if (auto vec = dyn_cast<VectorType>(like.getType()))
    return arith::ConstantOp::create(e.b, DenseElementsAttr::get(vec, static_cast<float>(v)));
  return e.f32(v);
}
} // namespace

Value mlir::moe::codegen::activation(Emitter &e, const ActivationSpec &a, Value gate, Value up) {
  if (!a.gptOss)
    return e.fmul(e.fmul(gate, e.sigmoid(gate)), up);
  auto &b = e.b;
  Value limit = constantLike(e, gate, a.limit);
  Value g = arith::MinimumFOp::create(b, gate, limit);
  Value u = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, limit), constantLike(e, up, -a.limit));
  Value glu = e.fmul(g, e.sigmoid(e.fmul(g, constantLike(e, g, a.alpha))));
  return e.fmul(e.fadd(u, constantLike(e, u, 1.0)), glu);
}

std::pair<Value, Value> mlir::moe::codegen::activationGrad(Emitter &e, const ActivationSpec &a, Value gate,
                                                           Value up, Value grad) {
  auto &b = e.b;
  Value one = constantLike(e, gate, 1.0);
  if (!a.gptOss) {
    Value s = e.sigmoid(gate);
    // silu'(z) = s * (1 + z * (1 - s))
    Value dsilu = e.fmul(s, e.fadd(one, e.fmul(gate, arith::SubFOp::create(b, one, s))));
    return {e.fmul(e.fmul(grad, up), dsilu), e.fmul(grad, e.fmul(gate, s))};
  }
  // Clamped values pass no gradient (torch.clamp's rule: the bounds
  // themselves still do).
  Value limit = constantLike(e, gate, a.limit), alpha = constantLike(e, gate, a.alpha);
  Value zero = constantLike(e, gate, 0.0);
  Value gc = arith::MinimumFOp::create(b, gate, limit);
  Value uc = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, limit), constantLike(e, up, -a.limit));
  Value s = e.sigmoid(e.fmul(gc, alpha));
  // d/dg [g sigmoid(alpha g)] = s (1 + alpha g (1 - s))
  Value dglu = e.fmul(s, e.fadd(one, e.fmul(e.fmul(alpha, gc), arith::SubFOp::create(b, one, s))));
  Value gateInside = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, gate, limit);
  Value upInside = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, math::AbsFOp::create(b, up), limit);
  return {e.select(gateInside, e.fmul(e.fmul(grad, e.fadd(uc, one)), dglu), zero),
          e.select(upInside, e.fmul(grad, e.fmul(gc, s)), zero)};
}
