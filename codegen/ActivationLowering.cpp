//===- ActivationLowering.cpp - swiglu, swiglu_grad, scale_rows to loops --===//

#include "codegen/Emitter.h"
#include "codegen/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
/// Gate and up element (r, m) of swiglu's inputs, fused [R, 2M] or two [R, M].
struct GateUp {
  SmallVector<Value> buffers;
  Value width; // M
  std::pair<Value, Value> at(Emitter &e, Value r, Value m) const {
    if (buffers.size() == 1)
      return {e.loadF32(buffers[0], {r, m}), e.loadF32(buffers[0], {r, e.add(m, width)})};
    return {e.loadF32(buffers[0], {r, m}), e.loadF32(buffers[1], {r, m})};
  }
};

GateUp gateUpOf(Emitter &e, ValueRange inputs) {
  GateUp gu;
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
  GateUp gu = gateUpOf(e, op.getInputs());
  auto type = cast<RankedTensorType>(op.getType());
  Value rowCount = e.dim(gu.buffers[0], 0), zero = e.index(0);
  Value out = e.alloc(type, dynamicRows(e, type, gu.buffers[0]));
  e.parallelFor(zero, rowCount, [&](Value r) {
    e.forLoop(zero, gu.width, [&](Value m) {
      auto [gate, up] = gu.at(e, r, m);
      e.storeF32(e.fmul(e.fmul(gate, e.sigmoid(gate)), up), out, {r, m});
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}

void mlir::moe::codegen::lowerSwigluGrad(RewriterBase &rewriter,
                                         SwigluGradOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  GateUp gu = gateUpOf(e, op.getInputs());
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
      Value s = e.sigmoid(gate);
      // silu'(z) = s * (1 + z * (1 - s))
      Value oneMinusS = arith::SubFOp::create(e.b, e.f32(1), s);
      Value dsilu = e.fmul(s, e.fadd(e.f32(1), e.fmul(gate, oneMinusS)));
      Value dGate = e.fmul(e.fmul(g, up), dsilu);
      Value dUp = e.fmul(g, e.fmul(gate, s));
      if (outs.size() == 1) {
        e.storeF32(dGate, outs[0], {r, m});
        e.storeF32(dUp, outs[0], {r, e.add(m, gu.width)});
      } else {
        e.storeF32(dGate, outs[0], {r, m});
        e.storeF32(dUp, outs[1], {r, m});
      }
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
