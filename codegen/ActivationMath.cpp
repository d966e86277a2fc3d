//===- ActivationMath.cpp - SwiGLU and its gradient on f32 vectors --------===//

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
/// `v` in every lane of a vector of `like`'s type.
Value splatLike(Emitter &e, Value like, double v) {
  return arith::ConstantOp::create(
      e.b, DenseElementsAttr::get(cast<VectorType>(like.getType()), static_cast<float>(v)));
}
} // namespace

Value mlir::moe::codegen::activation(Emitter &e, const ActivationSpec &a, Value gate, Value up) {
  if (!a.gptOss)
    return e.fmul(e.fmul(gate, e.sigmoid(gate)), up);
  auto &b = e.b;
  Value limit = splatLike(e, gate, a.limit);
  Value g = arith::MinimumFOp::create(b, gate, limit);
  Value u = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, limit), splatLike(e, up, -a.limit));
  Value glu = e.fmul(g, e.sigmoid(e.fmul(g, splatLike(e, g, a.alpha))));
  return e.fmul(e.fadd(u, splatLike(e, u, 1.0)), glu);
}

std::pair<Value, Value> mlir::moe::codegen::activationGrad(Emitter &e, const ActivationSpec &a, Value gate,
                                                           Value up, Value grad) {
  auto &b = e.b;
  Value one = splatLike(e, gate, 1.0);
  if (!a.gptOss) {
    Value s = e.sigmoid(gate);
    // silu'(z) = s * (1 + z * (1 - s))
    Value dsilu = e.fmul(s, e.fadd(one, e.fmul(gate, arith::SubFOp::create(b, one, s))));
    return {e.fmul(e.fmul(grad, up), dsilu), e.fmul(grad, e.fmul(gate, s))};
  }
  // Clamped values pass no gradient (torch.clamp's rule: the bounds
  // themselves still do).
  Value limit = splatLike(e, gate, a.limit), alpha = splatLike(e, gate, a.alpha);
  Value zero = splatLike(e, gate, 0.0);
  Value gc = arith::MinimumFOp::create(b, gate, limit);
  Value uc = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, limit), splatLike(e, up, -a.limit));
  Value s = e.sigmoid(e.fmul(gc, alpha));
  // d/dg [g sigmoid(alpha g)] = s (1 + alpha g (1 - s))
  Value dglu = e.fmul(s, e.fadd(one, e.fmul(e.fmul(alpha, gc), arith::SubFOp::create(b, one, s))));
  Value gateInside = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, gate, limit);
  Value upInside = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, math::AbsFOp::create(b, up), limit);
  return {e.select(gateInside, e.fmul(e.fmul(grad, e.fadd(uc, one)), dglu), zero),
          e.select(upInside, e.fmul(grad, e.fmul(gc, s)), zero)};
}
