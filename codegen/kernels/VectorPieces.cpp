//===- VectorPieces.cpp - loads masks and epilogue math of the gmm kinds ---===//
//
// The vector pieces every gmm kind's loads and epilogues use
// (GmmKernelPlan.h): the mask of a row's existing lanes, the activations on
// f32 vectors as moe.swiglu computes them, the deinterleave of GPT-OSS's
// gate/up columns, the bias, and columns read as f32 up to a limit.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

Value mlir::moe::codegen::fetchStride(Emitter &e, Value memref, Value values, Value steps) {
  int64_t lineValues = 512 / cast<MemRefType>(memref.getType()).getElementTypeBitWidth();
  Value one = e.index(1);
  steps = e.max(steps, one);
  Value share = e.divs(e.add(values, e.sub(steps, one)), steps);
  return e.min(e.max(share, one), e.index(lineValues));
}

Value mlir::moe::codegen::loadColumnsAsF32(Emitter &e, Value src, ValueRange outer, Value col,
                                           Value limit, int64_t lanes) {
  // Columns inside the source (all but a block's last run) are a plain load;
  // the last run's lanes at or past `limit` are zeros. Each branch widens
  // what it yields: without AVX512_BF16, LLVM legalizes a bf16 vector that
  // crosses a branch a lane at a time, and AVX2 has no 16-bit masked load
  // (both became 16 scalar loads behind branches), so the last run of a
  // bf16 source is read a lane at a time from clamped columns.
  auto &b = e.b;
  Type element = cast<MemRefType>(src.getType()).getElementType();
  auto loadType = VectorType::get({lanes}, element);
  auto wideType = VectorType::get({lanes}, b.getF32Type());
  auto at = [&](Value c) {
    SmallVector<Value> indices(outer.begin(), outer.end());
    indices.push_back(c);
    return indices;
  };
  Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::sle, e.add(col, e.index(lanes)), limit);
  auto load = scf::IfOp::create(b, TypeRange{wideType}, inside, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(load.thenBlock());
  Value whole = vector::LoadOp::create(b, loadType, src, at(col));
  if (!element.isF32())
    whole = arith::ExtFOp::create(b, wideType, whole);
  scf::YieldOp::create(b, ValueRange{whole});
  b.setInsertionPointToStart(load.elseBlock());
  Value mask = lanesBelow(e, col, limit, lanes);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(wideType, 0.0f));
  Value part;
  if (element.isF32()) {
    part = vector::MaskedLoadOp::create(b, wideType, src, at(col), mask, zeros);
  } else {
    part = zeros;
    Value last = e.sub(limit, e.index(1));
    for (int64_t l = 0; l < lanes; ++l)
      part = vector::InsertOp::create(b, e.loadF32(src, at(e.min(e.add(col, e.index(l)), last))), part, l);
    part = arith::SelectOp::create(b, mask, part, zeros);
  }
  scf::YieldOp::create(b, ValueRange{part});
  return load.getResult(0);
}

Value mlir::moe::codegen::plusBias(Emitter &e, Value v, Value bias, Value g, Value col,
                                   Value limit) {
  if (!bias)
    return v;
  int64_t lanes = cast<VectorType>(v.getType()).getNumElements();
  return arith::AddFOp::create(e.b, v, loadColumnsAsF32(e, bias, ValueRange{g}, col, limit, lanes));
}
