//===- ActivationLowering.cpp - swiglu, swiglu_grad, scale_rows to loops --===//

#include "codegen/Emitter.h"
#include "codegen/lowerings/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
/// Gate and up element (r, m) of swiglu's inputs, fused [R, 2M] (halves or
/// interleaved columns) or two [R, M].
struct GateUp {
  SmallVector<Value> buffers;
  Value width; // M
  bool interleaved = false;
  /// The columns of gate and up element m in buffers[0] (fused) or each.
  std::pair<Value, Value> columns(Emitter &e, Value m) const {
    if (buffers.size() == 2)
      return {m, m};
    if (interleaved) {
      Value gate = e.mul(m, e.index(2));
      return {gate, e.add(gate, e.index(1))};
    }
    return {m, e.add(m, width)};
  }
  std::pair<Value, Value> at(Emitter &e, Value r, Value m) const {
    auto [g, u] = columns(e, m);
    return {e.loadF32(buffers[0], {r, g}), e.loadF32(buffers.back(), {r, u})};
  }
};

/// The activation's attributes, as the lowering reads them.
struct ActivationSpec {
  bool gptOss;
  double alpha, limit;
  template <typename SwigluLikeOp>
  static ActivationSpec of(SwigluLikeOp op) {
    return {op.getActivation() == Activation::gpt_oss, op.getAlpha().convertToDouble(),
            op.getLimit().convertToDouble()};
  }
};

/// silu(gate) * up, or GPT-OSS's (clamp(up) + 1) * g * sigmoid(alpha g)
/// with g = min(gate, limit).
Value activate(Emitter &e, const ActivationSpec &a, Value gate, Value up) {
  if (!a.gptOss)
    return e.fmul(e.fmul(gate, e.sigmoid(gate)), up);
  auto &b = e.b;
  Value limit = e.f32(a.limit);
  Value g = arith::MinimumFOp::create(b, gate, limit);
  Value u = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, limit), e.f32(-a.limit));
  Value glu = e.fmul(g, e.sigmoid(e.fmul(g, e.f32(a.alpha))));
  return e.fmul(e.fadd(u, e.f32(1)), glu);
}

GateUp gateUpOf(Emitter &e, ValueRange inputs, bool interleaved) {
  GateUp gu;
  gu.interleaved = interleaved;
  for (Value in : inputs)
    gu.buffers.push_back(e.buffer(in));
  if (gu.buffers.size() == 2)
    e.checkSameSize(e.dim(gu.buffers[0], 0), e.dim(gu.buffers[1], 0),
                    "moe.swiglu: gate and up have different row counts");
  int64_t width = cast<RankedTensorType>(inputs[0].getType()).getDimSize(1);
  gu.width = e.index(inputs.size() == 1 ? width / 2 : width);
  return gu;
}

SmallVector<Value> dynamicRows(Emitter &e, RankedTensorType type, Value like) {
  if (type.isDynamicDim(0))
    return {e.dim(like, 0)};
  return {};
}
} // namespace

void mlir::moe::codegen::lowerSwiglu(RewriterBase &rewriter, SwigluOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  GateUp gu = gateUpOf(e, op.getInputs(), op.getInterleaved());
  ActivationSpec spec = ActivationSpec::of(op);
  auto type = cast<RankedTensorType>(op.getType());
  Value rowCount = e.dim(gu.buffers[0], 0), zero = e.index(0);
  Value out = e.alloc(type, dynamicRows(e, type, gu.buffers[0]));
  e.parallelFor(zero, rowCount, [&](Value r) {
    e.forLoop(zero, gu.width, [&](Value m) {
      auto [gate, up] = gu.at(e, r, m);
      e.storeF32(activate(e, spec, gate, up), out, {r, m});
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}

void mlir::moe::codegen::lowerSwigluGrad(RewriterBase &rewriter,
                                         SwigluGradOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  GateUp gu = gateUpOf(e, op.getInputs(), op.getInterleaved());
  ActivationSpec spec = ActivationSpec::of(op);
  Value grad = e.buffer(op.getGrad());
  Value rowCount = e.dim(gu.buffers[0], 0), zero = e.index(0);
  e.checkSameSize(rowCount, e.dim(grad, 0),
                  "moe.swiglu_grad: grad and inputs have different row counts");
  SmallVector<Value> outs;
  for (Value result : op.getInputGrads()) {
    auto type = cast<RankedTensorType>(result.getType());
    outs.push_back(e.alloc(type, dynamicRows(e, type, gu.buffers[0])));
  }
  e.parallelFor(zero, rowCount, [&](Value r) {
    e.forLoop(zero, gu.width, [&](Value m) {
      auto [gate, up] = gu.at(e, r, m);
      Value g = e.loadF32(grad, {r, m});
      Value dGate, dUp;
      if (!spec.gptOss) {
        Value s = e.sigmoid(gate);
        // silu'(z) = s * (1 + z * (1 - s))
        Value oneMinusS = arith::SubFOp::create(e.b, e.f32(1), s);
        Value dsilu = e.fmul(s, e.fadd(e.f32(1), e.fmul(gate, oneMinusS)));
        dGate = e.fmul(e.fmul(g, up), dsilu);
        dUp = e.fmul(g, e.fmul(gate, s));
      } else {
        // Clamped values pass no gradient (torch.clamp's rule: the bounds
        // themselves still do).
        auto &b = e.b;
        Value limit = e.f32(spec.limit), alpha = e.f32(spec.alpha);
        Value gc = arith::MinimumFOp::create(b, gate, limit);
        Value uc = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, limit),
                                             e.f32(-spec.limit));
        Value s = e.sigmoid(e.fmul(gc, alpha));
        Value oneMinusS = arith::SubFOp::create(b, e.f32(1), s);
        // d/dg [g sigmoid(alpha g)] = s (1 + alpha g (1 - s))
        Value dglu = e.fmul(s, e.fadd(e.f32(1), e.fmul(e.fmul(alpha, gc), oneMinusS)));
        Value gateInside = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, gate, limit);
        Value upInside = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE,
                                               math::AbsFOp::create(b, up), limit);
        dGate = e.select(gateInside, e.fmul(e.fmul(g, e.fadd(uc, e.f32(1))), dglu), e.f32(0));
        dUp = e.select(upInside, e.fmul(g, e.fmul(gc, s)), e.f32(0));
      }
      auto [gateCol, upCol] = gu.columns(e, m);
      e.storeF32(dGate, outs[0], {r, gateCol});
      e.storeF32(dUp, outs.back(), {r, upCol});
    });
  });
  SmallVector<Value> results;
  for (auto [buffer, result] : llvm::zip(outs, op.getInputGrads()))
    results.push_back(e.tensor(buffer, result.getType()));
  rewriter.replaceOp(op, results);
}

void mlir::moe::codegen::lowerScaleRows(RewriterBase &rewriter,
                                        ScaleRowsOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value in = e.buffer(op.getInput());
  Value scale = e.buffer(op.getScale());
  auto type = cast<RankedTensorType>(op.getType());
  Value rowCount = e.dim(in, 0), width = e.dim(in, 1), zero = e.index(0);
  e.checkSameSize(rowCount, e.dim(scale, 0),
                  "moe.scale_rows: input rows and scale length differ");
  Value out = e.alloc(type, dynamicRows(e, type, in));
  e.parallelFor(zero, rowCount, [&](Value r) {
    Value s = e.load(scale, {r});
    e.forLoop(zero, width, [&](Value h) {
      e.storeF32(e.fmul(e.loadF32(in, {r, h}), s), out, {r, h});
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}

void mlir::moe::codegen::lowerSigmoid(RewriterBase &rewriter, SigmoidOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value in = e.buffer(op.getInput());
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(e.dim(in, i));
  Value out = e.alloc(type, dyn);
  Value zero = e.index(0);
  e.parallelFor(zero, e.dim(in, 0), [&](Value r) {
    if (type.getRank() == 1) {
      e.store(e.sigmoid(e.load(in, {r})), out, {r});
      return;
    }
    e.forLoop(zero, e.dim(in, 1), [&](Value c) {
      e.store(e.sigmoid(e.load(in, {r, c})), out, {r, c});
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}
