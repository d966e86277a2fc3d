//===- VectorPieces.cpp - loads masks and epilogue math of the gmm kinds ---===//
//
// The vector pieces every gmm kind's loads and epilogues use
// (GmmKernelPlan.h): the mask of a row's existing lanes, the activations on
// f32 vectors as moe.swiglu computes them, the deinterleave of GPT-OSS's
// gate/up columns, and the bias.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

Value mlir::moe::codegen::lanesBelow(Emitter &e, Value col, Value limit, int64_t lanes) {
  Value n = e.max(e.min(e.sub(limit, col), e.index(lanes)), e.index(0));
  return vector::CreateMaskOp::create(e.b, VectorType::get({lanes}, e.b.getI1Type()), ValueRange{n});
}

namespace {
/// 1 / (1 + exp(-z)) on an f32 vector.
Value vectorSigmoid(Emitter &e, Value z) {
  auto &b = e.b;
  Value one = arith::ConstantOp::create(b, DenseElementsAttr::get(cast<VectorType>(z.getType()), 1.0f));
  return arith::DivFOp::create(
      b, one, arith::AddFOp::create(b, one, math::ExpOp::create(b, arith::NegFOp::create(b, z))));
}
} // namespace

Value mlir::moe::codegen::siluTimes(Emitter &e, Value gate, Value up) {
  auto &b = e.b;
  return arith::MulFOp::create(b, arith::MulFOp::create(b, gate, vectorSigmoid(e, gate)), up);
}

Value mlir::moe::codegen::activate(Emitter &e, const GmmKernelPlan &p, Value gate, Value up) {
  if (!p.gptOss)
    return siluTimes(e, gate, up);
  auto &b = e.b;
  auto type = cast<VectorType>(gate.getType());
  auto splat = [&](double v) {
    return arith::ConstantOp::create(b, DenseElementsAttr::get(type, static_cast<float>(v)));
  };
  Value g = arith::MinimumFOp::create(b, gate, splat(p.limit));
  Value u = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, splat(p.limit)),
                                      splat(-p.limit));
  Value sig = vectorSigmoid(e, arith::MulFOp::create(b, g, splat(p.alpha)));
  return arith::MulFOp::create(b, arith::AddFOp::create(b, u, splat(1.0)),
                               arith::MulFOp::create(b, g, sig));
}

std::pair<Value, Value> mlir::moe::codegen::deinterleave(Emitter &e, Value first, Value second) {
  int64_t lanes = cast<VectorType>(first.getType()).getNumElements();
  SmallVector<int64_t> even, odd;
  for (int64_t l = 0; l < lanes; ++l) {
    even.push_back(2 * l);
    odd.push_back(2 * l + 1);
  }
  return {vector::ShuffleOp::create(e.b, first, second, even).getResult(),
          vector::ShuffleOp::create(e.b, first, second, odd).getResult()};
}

Value mlir::moe::codegen::plusBias(Emitter &e, Value v, Value bias, Value g, Value col,
                                   Value limit) {
  if (!bias)
    return v;
  auto &b = e.b;
  auto type = cast<VectorType>(v.getType());
  Type element = cast<MemRefType>(bias.getType()).getElementType();
  auto loadType = VectorType::get(type.getShape(), element);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(element)));
  Value lanes = vector::MaskedLoadOp::create(b, loadType, bias, ValueRange{g, col},
                                             lanesBelow(e, col, limit, type.getNumElements()), zeros);
  if (!element.isF32())
    lanes = arith::ExtFOp::create(b, type, lanes);
  return arith::AddFOp::create(b, v, lanes);
}

