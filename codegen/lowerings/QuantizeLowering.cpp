//===- QuantizeLowering.cpp - int8 quantization ops to loops --------------===//
//
// moe.quantize, moe.dequantize and moe.fake_quant as loops, on the
// symmetric int8 arithmetic (Int8Arithmetic.h) they share with both
// lowerings of the int8 moe.gmm (shared/docs/moe-semantics.md, section 7):
//
//   scale = max|x| / 127,  q = clamp(roundeven(x * (127 / max|x|)), -127, 127)
//
// with q = 0 where max|x| is 0. A NaN among the x makes max|x| and so the
// scale NaN: every value that scale dequantizes (a row's products, an
// expert's weights) is NaN, as in float arithmetic. The reciprocal is computed once per row (or
// expert, or channel) and multiplied, not divided per element: the fast
// kernel quantizes every gathered row it multiplies, and the C++ reference
// (test/reference/Reference.cpp) computes the same expression.
//
// The weights' quantization runs once per load (moe-quantize hoists it into
// <f>_prepare_weights), so plain loops are enough here.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/Int8Arithmetic.h"
#include "codegen/lowerings/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

void mlir::moe::codegen::lowerQuantize(RewriterBase &rewriter, QuantizeOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value in = e.buffer(op.getInput());
  auto valuesType = cast<RankedTensorType>(op.getValues().getType());
  auto scalesType = cast<RankedTensorType>(op.getScales().getType());
  int64_t experts = valuesType.getDimSize(0), depth = valuesType.getDimSize(1),
          width = valuesType.getDimSize(2);
  Value values = e.alloc(valuesType, {});
  Value scales = e.alloc(scalesType, {});
  Value zero = e.index(0), cDepth = e.index(depth), cWidth = e.index(width);
  Type i8 = b.getI8Type();
  auto toI8 = [&](Value q) { return arith::FPToSIOp::create(b, i8, q); };
  bool perChannel = op.getGranularity() == QuantGranularity::per_channel;

  e.parallelFor(zero, e.index(experts), [&](Value g) {
    if (!perChannel) {
      Value maxAbs = e.forLoop(zero, cDepth, ValueRange{e.f32(0)},
                               [&](Value d, ValueRange m) -> SmallVector<Value> {
                                 return e.forLoop(zero, cWidth, m,
                                                  [&](Value n, ValueRange m2) -> SmallVector<Value> {
                                                    return {absMax(e, m2[0], e.loadF32(in, {g, d, n}))};
                                                  });
                               })[0];
      Value reciprocal = int8Reciprocal(e, maxAbs);
      e.store(int8Scale(e, maxAbs), scales, {g});
      e.forLoop(zero, cDepth, [&](Value d) {
        e.forLoop(zero, cWidth, [&](Value n) {
          e.store(toI8(quantizeInt8(e, e.loadF32(in, {g, d, n}), reciprocal)), values, {g, d, n});
        });
      });
      return;
    }
    // One scale per output column: the running maxima of a row of columns,
    // then their reciprocals, on the heap (N floats may not fit a stack).
    Value colMax = e.alloc({width}, b.getF32Type(), {});
    e.fill(colMax, e.f32(0));
    e.forLoop(zero, cDepth, [&](Value d) {
      e.forLoop(zero, cWidth, [&](Value n) {
        e.store(absMax(e, e.load(colMax, {n}), e.loadF32(in, {g, d, n})), colMax, {n});
      });
    });
    e.forLoop(zero, cWidth, [&](Value n) {
      Value maxAbs = e.load(colMax, {n});
      e.store(int8Scale(e, maxAbs), scales, {g, n});
      e.store(int8Reciprocal(e, maxAbs), colMax, {n});
    });
    e.forLoop(zero, cDepth, [&](Value d) {
      e.forLoop(zero, cWidth, [&](Value n) {
        e.store(toI8(quantizeInt8(e, e.loadF32(in, {g, d, n}), e.load(colMax, {n}))), values,
                {g, d, n});
      });
    });
  });
  rewriter.replaceOp(op, {e.tensor(values, valuesType), e.tensor(scales, scalesType)});
}

Value mlir::moe::codegen::weightScale(Emitter &e, Value scales, Value g, Value n) {
  if (cast<MemRefType>(scales.getType()).getRank() == 2)
    return e.load(scales, {g, n});
  return e.load(scales, {g});
}

void mlir::moe::codegen::lowerDequantize(RewriterBase &rewriter, DequantizeOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value values = e.buffer(op.getValues());
  Value scales = e.buffer(op.getScales());
  auto type = cast<RankedTensorType>(op.getOut().getType());
  Value out = e.alloc(type, {});
  Value zero = e.index(0);
  e.parallelFor(zero, e.index(type.getDimSize(0)), [&](Value g) {
    e.forLoop(zero, e.index(type.getDimSize(1)), [&](Value d) {
      e.forLoop(zero, e.index(type.getDimSize(2)), [&](Value n) {
        Value q = arith::SIToFPOp::create(b, b.getF32Type(), e.load(values, {g, d, n}));
        e.store(e.fmul(q, weightScale(e, scales, g, n)), out, {g, d, n});
      });
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}

Value mlir::moe::codegen::rowAbsMax(Emitter &e, Value rows, Value r, Value depth) {
  return e.forLoop(e.index(0), depth, ValueRange{e.f32(0)},
                   [&](Value d, ValueRange m) -> SmallVector<Value> {
                     return {absMax(e, m[0], e.loadF32(rows, {r, d}))};
                   })[0];
}

void mlir::moe::codegen::lowerFakeQuant(RewriterBase &rewriter, FakeQuantOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value in = e.buffer(op.getInput());
  auto type = cast<RankedTensorType>(op.getOut().getType());
  Value rows = e.dim(in, 0), depth = e.dim(in, 1);
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(rows);
  Value out = e.alloc(type, dyn);
  e.parallelFor(e.index(0), rows, [&](Value r) {
    Value maxAbs = rowAbsMax(e, in, r, depth);
    Value reciprocal = int8Reciprocal(e, maxAbs), scale = int8Scale(e, maxAbs);
    e.forLoop(e.index(0), depth, [&](Value d) {
      e.storeF32(e.fmul(quantizeInt8(e, e.loadF32(in, {r, d}), reciprocal), scale), out, {r, d});
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}
