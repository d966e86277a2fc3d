//===- Emitter.cpp - loop-nest building helpers ---------------------------===//

#include "codegen/Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

Value Emitter::index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
Value Emitter::f32(double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}
Value Emitter::i32(int64_t v) {
  return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
}

Value Emitter::zero(Type type) {
  return arith::ConstantOp::create(b, b.getZeroAttr(type));
}

Value Emitter::add(Value a, Value c) { return arith::AddIOp::create(b, a, c); }
Value Emitter::sub(Value a, Value c) { return arith::SubIOp::create(b, a, c); }
Value Emitter::mul(Value a, Value c) { return arith::MulIOp::create(b, a, c); }
Value Emitter::divs(Value a, Value c) { return arith::DivSIOp::create(b, a, c); }
Value Emitter::rems(Value a, Value c) { return arith::RemSIOp::create(b, a, c); }
Value Emitter::min(Value a, Value c) { return arith::MinSIOp::create(b, a, c); }
Value Emitter::max(Value a, Value c) { return arith::MaxSIOp::create(b, a, c); }
Value Emitter::lt(Value a, Value c) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, a, c);
}
Value Emitter::ge(Value a, Value c) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::sge, a, c);
}
Value Emitter::andI(Value a, Value c) { return arith::AndIOp::create(b, a, c); }
Value Emitter::select(Value cond, Value a, Value c) {
  return arith::SelectOp::create(b, cond, a, c);
}
Value Emitter::inRange(Value v, Value bound) {
  return andI(ge(v, index(0)), lt(v, bound));
}

Value Emitter::fadd(Value a, Value c) { return arith::AddFOp::create(b, a, c); }
Value Emitter::fmul(Value a, Value c) { return arith::MulFOp::create(b, a, c); }
Value Emitter::fdiv(Value a, Value c) { return arith::DivFOp::create(b, a, c); }
Value Emitter::exp(Value a) { return math::ExpOp::create(b, a); }
Value Emitter::sigmoid(Value z) {
  Value negZ = arith::NegFOp::create(b, z);
  Value one = f32(1.0);
  if (auto vec = dyn_cast<VectorType>(z.getType()))
    one = arith::ConstantOp::create(b, DenseElementsAttr::get(vec, 1.0f));
  return fdiv(one, fadd(one, exp(negZ)));
}

Value Emitter::toIndex(Value v) {
  return arith::IndexCastOp::create(b, b.getIndexType(), v);
}
Value Emitter::toI32(Value v) {
  return arith::IndexCastOp::create(b, b.getI32Type(), v);
}

Value Emitter::buffer(Value tensor) {
  auto type = cast<TensorType>(tensor.getType());
  Type memrefType = bufferization::getMemRefTypeWithFullyDynamicLayout(type);
  return bufferization::ToBufferOp::create(b, memrefType, tensor,
                                           /*read_only=*/true);
}

Value Emitter::unitStrideBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  strides.back() = 1;
  auto layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType(), layout);
  return bufferization::ToBufferOp::create(b, memrefType, tensor, /*read_only=*/true);
}

Value Emitter::alloc(ArrayRef<int64_t> shape, Type element,
                     ValueRange dynamicSizes) {
  // 64-byte alignment: one cache line, one AVX-512 register.
  return memref::AllocOp::create(b, MemRefType::get(shape, element),
                                 dynamicSizes, b.getI64IntegerAttr(64));
}
Value Emitter::alloc(RankedTensorType type, ValueRange dynamicSizes) {
  return alloc(type.getShape(), type.getElementType(), dynamicSizes);
}

Value Emitter::tensor(Value buffer, Type tensorType) {
  return bufferization::ToTensorOp::create(b, tensorType, buffer,
                                           /*restrict=*/b.getUnitAttr(),
                                           /*writable=*/b.getUnitAttr());
}

Value Emitter::innerBlock(Value memref, ValueRange offsets, ArrayRef<int64_t> sizes) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<OpFoldResult> at(offsets.begin(), offsets.end());
  SmallVector<OpFoldResult> extent{b.getIndexAttr(1)}, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : sizes)
    extent.push_back(b.getIndexAttr(size));
  auto blockType = memref::SubViewOp::inferRankReducedResultType(sizes, type, at, extent, strides);
  return memref::SubViewOp::create(b, cast<MemRefType>(blockType), memref, at, extent, strides);
}

Value Emitter::dim(Value memref, int64_t i) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(i))
    return index(type.getDimSize(i));
  return memref::DimOp::create(b, memref, i);
}

Value Emitter::load(Value memref, ValueRange indices) {
  return memref::LoadOp::create(b, memref, indices);
}
void Emitter::store(Value v, Value memref, ValueRange indices) {
  memref::StoreOp::create(b, v, memref, indices);
}
Value Emitter::loadF32(Value memref, ValueRange indices) {
  Value v = load(memref, indices);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, b.getF32Type(), v);
  return v;
}
void Emitter::storeF32(Value v, Value memref, ValueRange indices) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  if (element != v.getType())
    v = arith::TruncFOp::create(b, element, v);
  store(v, memref, indices);
}
void Emitter::fill(Value memref, Value scalar) {
  linalg::FillOp::create(b, ValueRange{scalar}, ValueRange{memref});
}

void Emitter::forLoop(Value lb, Value ub, function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

SmallVector<Value> Emitter::forLoop(
    Value lb, Value ub, ValueRange init,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  return forLoop(lb, ub, index(1), init, body);
}

SmallVector<Value> Emitter::forLoop(
    Value lb, Value ub, Value step, ValueRange init,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, step, init);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *block = loop.getBody();
    if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
      block->back().erase();
    b.setInsertionPointToEnd(block);
    SmallVector<Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
    scf::YieldOp::create(b, next);
  }
  return SmallVector<Value>(loop.getResults());
}

void Emitter::ifThen(Value cond, function_ref<void()> then) {
  auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  then();
}

void Emitter::parallelFor(Value lb, Value ub, function_ref<void(Value)> body) {
  auto loop = scf::ParallelOp::create(b, ValueRange{lb}, ValueRange{ub},
                                      ValueRange{index(1)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  auto scope = memref::AllocaScopeOp::create(b, TypeRange{});
  Block *block = b.createBlock(&scope.getBodyRegion());
  b.setInsertionPointToEnd(block);
  memref::AllocaScopeReturnOp::create(b, ValueRange{});
  b.setInsertionPointToStart(block);
  body(loop.getInductionVars()[0]);
}

Value Emitter::allocaScratch(ArrayRef<int64_t> shape, Type element) {
  return memref::AllocaOp::create(b, MemRefType::get(shape, element),
                                  b.getI64IntegerAttr(64));
}

func::FuncOp Emitter::intrinsic(StringRef name, FunctionType type) {
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder mb(module.getBodyRegion());
  auto fn = func::FuncOp::create(mb, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

void Emitter::checkSameSize(Value a, Value c, StringRef message) {
  Value same = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, a, c);
  cf::AssertOp::create(b, same, message);
}
