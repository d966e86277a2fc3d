//===- ActivationLowering.cpp - swiglu, swiglu_grad, scale_rows to loops --===//

#include "codegen/ActivationMath.h"
#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernelPlan.h"
#include "codegen/lowerings/Lowerings.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;

/// A SwiGLU's gate and up inputs as the vector loops read them (fused [R,
/// 2M], halves or interleaved columns, or two [R, M]), and their rows.
struct GateUp {
  GateUpColumns columns;
  Value rows;
};

GateUp gateUpOf(Emitter &e, ValueRange inputs, bool interleaved) {
  GateUp gu;
  Value gate = e.unitStrideBuffer(inputs.front());
  Value up = inputs.size() == 2 ? e.unitStrideBuffer(inputs.back()) : gate;
  if (inputs.size() == 2)
    e.checkSameSize(e.dim(gate, 0), e.dim(up, 0), "moe.swiglu: gate and up have different row counts");
  int64_t width = cast<RankedTensorType>(inputs[0].getType()).getDimSize(1);
  gu.columns = {gate, up, e.index(inputs.size() == 1 ? width / 2 : width), interleaved};
  gu.rows = e.dim(gate, 0);
  return gu;
}

SmallVector<Value> dynamicRows(Emitter &e, RankedTensorType type, Value rows) {
  if (type.isDynamicDim(0))
    return {rows};
  return {};
}

/// Runs `body(r, m)` for each row and each 16 outputs of it, rows in
/// parallel.
void forEachOutputVector(Emitter &e, const GateUp &gu, function_ref<void(Value, Value)> body) {
  Value zero = e.index(0);
  Value vectors = e.divs(e.add(gu.columns.width, e.index(kLanes - 1)), e.index(kLanes));
  e.parallelFor(zero, gu.rows, [&](Value r) {
    e.forLoop(zero, vectors, [&](Value v) { body(r, e.mul(v, e.index(kLanes))); });
  });
}
} // namespace

// Both ops as 16-lane vector loops with the arithmetic the gmm kernels'
// epilogues fuse (ActivationMath.h). As loops of one element, the SwiGLU
// and its gradient of a bf16 training step (T 4096 top-8, H 2048, M 1408,
// 2-core Sapphire Rapids) took 71 and 94 ms; as vectors 21.5 and 26 ms.
void mlir::moe::codegen::lowerSwiglu(RewriterBase &rewriter, SwigluOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  GateUp gu = gateUpOf(e, op.getInputs(), op.getInterleaved());
  ActivationSpec spec = ActivationSpec::of(op);
  auto type = cast<RankedTensorType>(op.getType());
  Value out = e.alloc(type, dynamicRows(e, type, gu.rows));
  forEachOutputVector(e, gu, [&](Value r, Value m) {
    auto [gate, up] = gu.columns.load(e, r, m, kLanes);
    storeColumns(e, activation(e, spec, gate, up), out, r, m, gu.columns.width);
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}

void mlir::moe::codegen::lowerSwigluGrad(RewriterBase &rewriter, SwigluGradOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  GateUp gu = gateUpOf(e, op.getInputs(), op.getInterleaved());
  ActivationSpec spec = ActivationSpec::of(op);
  Value grad = e.unitStrideBuffer(op.getGrad());
  e.checkSameSize(gu.rows, e.dim(grad, 0), "moe.swiglu_grad: grad and inputs have different row counts");
  SmallVector<Value> outs;
  for (Value result : op.getInputGrads()) {
    auto type = cast<RankedTensorType>(result.getType());
    outs.push_back(e.alloc(type, dynamicRows(e, type, gu.rows)));
  }
  GateUpColumns grads{outs.front(), outs.back(), gu.columns.width, gu.columns.interleaved};
  forEachOutputVector(e, gu, [&](Value r, Value m) {
    auto [gate, up] = gu.columns.load(e, r, m, kLanes);
    Value g = loadColumnsAsF32(e, grad, ValueRange{r}, m, gu.columns.width, kLanes);
    auto [dGate, dUp] = activationGrad(e, spec, gate, up, g);
    grads.store(e, r, m, dGate, dUp);
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
  Value out = e.alloc(type, dynamicRows(e, type, rowCount));
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
