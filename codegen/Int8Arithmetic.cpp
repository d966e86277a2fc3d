//===- Int8Arithmetic.cpp - symmetric int8 quantization's arithmetic ------===//

#include "codegen/Int8Arithmetic.h"
#include "codegen/Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
/// `v` as a constant of `type`: a scalar, or a splat for a vector type.
Value constantLike(Emitter &e, Type type, double v) {
  if (auto vec = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        e.b, DenseElementsAttr::get(vec, e.b.getFloatAttr(vec.getElementType(), v)));
  return arith::ConstantOp::create(e.b, e.b.getFloatAttr(type, v));
}
} // namespace

Value mlir::moe::codegen::int8Reciprocal(Emitter &e, Value maxAbs) {
  Type type = maxAbs.getType();
  Value zero = constantLike(e, type, 0.0);
  Value positive = arith::CmpFOp::create(e.b, arith::CmpFPredicate::OGT, maxAbs, zero);
  Value reciprocal = e.fdiv(constantLike(e, type, 127.0), maxAbs);
  return arith::SelectOp::create(e.b, positive, reciprocal, zero);
}

Value mlir::moe::codegen::int8Scale(Emitter &e, Value maxAbs) {
  return e.fdiv(maxAbs, constantLike(e, maxAbs.getType(), 127.0));
}

Value mlir::moe::codegen::quantizeInt8(Emitter &e, Value x, Value reciprocal) {
  Type type = x.getType();
  Value q = math::RoundEvenOp::create(e.b, e.fmul(x, reciprocal));
  q = arith::MaxNumFOp::create(e.b, q, constantLike(e, type, -127.0));
  return arith::MinNumFOp::create(e.b, q, constantLike(e, type, 127.0));
}

Value mlir::moe::codegen::absMax(Emitter &e, Value runningMax, Value x) {
  // maximumf, not maxnumf: a NaN makes the maximum NaN, so the scale it
  // gives is NaN and every product it scales is NaN, as a float product
  // with a NaN operand is (a NaN must not quantize to a number silently).
  return arith::MaximumFOp::create(e.b, runningMax, math::AbsFOp::create(e.b, x));
}
