//===- VectorPieces.cpp - loads masks and epilogue math of the gmm kinds ---===//
//
// The vector pieces every gmm kind's loads and epilogues use
// (GmmKernelPlan.h): the mask of a row's existing lanes, the deinterleave
// of GPT-OSS's gate/up columns, the bias, columns read as f32 up to a
// limit and stored rounded below one (the activation's arithmetic is
// codegen/ActivationMath.cpp's); and a
// SwiGLU's gate and up columns as vectors, which the swiglu and
// swiglu_grad loops read and write (lowerings/ActivationLowering.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

Value mlir::moe::codegen::lanesBelow(Emitter &e, Value col, Value limit, int64_t lanes) {
  Value n = e.max(e.min(e.sub(limit, col), e.index(lanes)), e.index(0));
  return vector::CreateMaskOp::create(e.b, VectorType::get({lanes}, e.b.getI1Type()), ValueRange{n});
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

std::pair<Value, Value> mlir::moe::codegen::interleave(Emitter &e, Value gate, Value up) {
  int64_t lanes = cast<VectorType>(gate.getType()).getNumElements();
  SmallVector<int64_t> low, high;
  for (int64_t l = 0; l < lanes; ++l) {
    (2 * l < lanes ? low : high).append({l, lanes + l});
  }
  return {vector::ShuffleOp::create(e.b, gate, up, low).getResult(),
          vector::ShuffleOp::create(e.b, gate, up, high).getResult()};
}

void mlir::moe::codegen::storeColumns(Emitter &e, Value v, Value dst, Value r, Value col, Value limit) {
  auto type = cast<VectorType>(v.getType());
  Type element = cast<MemRefType>(dst.getType()).getElementType();
  if (!element.isF32())
    v = arith::TruncFOp::create(e.b, VectorType::get(type.getShape(), element), v);
  vector::MaskedStoreOp::create(e.b, dst, ValueRange{r, col}, lanesBelow(e, col, limit, type.getNumElements()), v);
}

std::pair<Value, Value> GateUpColumns::load(Emitter &e, Value r, Value col, int64_t lanes) const {
  if (interleaved) {
    // Output m's gate and up are columns 2m and 2m + 1 of the one buffer.
    Value first = e.mul(col, e.index(2)), limit = e.mul(width, e.index(2));
    return deinterleave(e, loadColumnsAsF32(e, gate, ValueRange{r}, first, limit, lanes),
                        loadColumnsAsF32(e, gate, ValueRange{r}, e.add(first, e.index(lanes)), limit, lanes));
  }
  auto [upCol, upLimit] = upColumns(e, col);
  return {loadColumnsAsF32(e, gate, ValueRange{r}, col, width, lanes),
          loadColumnsAsF32(e, up, ValueRange{r}, upCol, upLimit, lanes)};
}

void GateUpColumns::store(Emitter &e, Value r, Value col, Value gateValues, Value upValues) const {
  if (interleaved) {
    int64_t lanes = cast<VectorType>(gateValues.getType()).getNumElements();
    Value first = e.mul(col, e.index(2)), limit = e.mul(width, e.index(2));
    auto [low, high] = interleave(e, gateValues, upValues);
    storeColumns(e, low, gate, r, first, limit);
    storeColumns(e, high, gate, r, e.add(first, e.index(lanes)), limit);
    return;
  }
  auto [upCol, upLimit] = upColumns(e, col);
  storeColumns(e, gateValues, gate, r, col, width);
  storeColumns(e, upValues, up, r, upCol, upLimit);
}

std::pair<Value, Value> GateUpColumns::upColumns(Emitter &e, Value col) const {
  // Halves of one buffer (up M columns on), or gate and up apart.
  if (gate == up)
    return {e.add(col, width), e.mul(width, e.index(2))};
  return {col, width};
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
