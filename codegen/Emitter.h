//===- Emitter.h - loop-nest building helpers for the moe lowerings -*- C++ -*-===//
//
// The moe ops lower to loops over memrefs, between a bufferization.to_buffer
// of each tensor operand and a bufferization.to_tensor of each freshly
// allocated result, so that one-shot bufferization handles everything
// around them. Values are computed in f32 whatever the storage type (bf16
// loads are extended, stores truncated). Scratch buffers are not freed
// here: the buffer-deallocation pipeline frees every allocation, and it
// rejects IR that already holds memref.dealloc ops.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_EMITTER_H
#define MOEC_CODEGEN_EMITTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::moe::codegen {

class Emitter {
public:
  Emitter(OpBuilder &builder, Location loc) : b(loc, builder) {}

  ImplicitLocOpBuilder b;

  // Constants.
  Value index(int64_t v);
  Value f32(double v);
  Value i32(int64_t v);
  /// The zero of any integer or float type.
  Value zero(Type type);

  // Index arithmetic (signed where it matters).
  Value add(Value a, Value c);
  Value sub(Value a, Value c);
  Value mul(Value a, Value c);
  Value divs(Value a, Value c);
  Value rems(Value a, Value c);
  Value min(Value a, Value c);
  Value max(Value a, Value c);
  Value lt(Value a, Value c);  // signed a < c
  Value ge(Value a, Value c);  // signed a >= c
  Value andI(Value a, Value c);
  Value select(Value cond, Value a, Value c);
  /// 0 <= v < bound.
  Value inRange(Value v, Value bound);

  // f32 arithmetic.
  Value fadd(Value a, Value c);
  Value fmul(Value a, Value c);
  Value fdiv(Value a, Value c);
  Value exp(Value a);
  Value sigmoid(Value z); // 1 / (1 + exp(-z)), z an f32 or a vector of f32

  /// i32 to index (sign-extending) and back.
  Value toIndex(Value i32Value);
  Value toI32(Value indexValue);

  // Memory.
  /// The buffer of a tensor operand, read only, with a fully dynamic layout
  /// so that any buffer one-shot bufferization picks fits.
  Value buffer(Value tensor);
  /// The same with an innermost stride of 1 (what vector loads need); the
  /// other strides and the offset are whatever bufferization picks.
  Value unitStrideBuffer(Value tensor);
  /// A new identity-layout buffer of `type`'s shape; dynamic sizes in order.
  Value alloc(RankedTensorType type, ValueRange dynamicSizes);
  Value alloc(ArrayRef<int64_t> shape, Type element, ValueRange dynamicSizes);
  /// The block of `memref` at `offsets` (one per dimension) of sizes
  /// `sizes` for every dimension but the first, which is dropped (one index
  /// of it): e.g. one expert's tiles of packed weights.
  Value innerBlock(Value memref, ValueRange offsets, ArrayRef<int64_t> sizes);
  /// The tensor a result buffer becomes (restrict: nothing else aliases it).
  Value tensor(Value buffer, Type tensorType);
  Value dim(Value memref, int64_t i);
  Value load(Value memref, ValueRange indices);
  void store(Value v, Value memref, ValueRange indices);
  /// Loads as f32 (extending bf16).
  Value loadF32(Value memref, ValueRange indices);
  /// Stores an f32 into a memref of its element type (truncating to bf16).
  void storeF32(Value v, Value memref, ValueRange indices);
  /// Fills a memref with a scalar of its element type.
  void fill(Value memref, Value scalar);

  /// Aborts at run time with `message` unless sizes `a` and `b` agree: the
  /// dynamic sizes the verifier could not compare (two arguments' token
  /// counts) must match before any loop indexes one by the other.
  void checkSameSize(Value a, Value c, StringRef message);

  // Control flow.
  void forLoop(Value lb, Value ub, function_ref<void(Value)> body);
  /// A loop carrying values; returns the final values.
  SmallVector<Value> forLoop(Value lb, Value ub, ValueRange init,
                             function_ref<SmallVector<Value>(Value, ValueRange)> body);
  SmallVector<Value> forLoop(Value lb, Value ub, Value step, ValueRange init,
                             function_ref<SmallVector<Value>(Value, ValueRange)> body);
  void ifThen(Value cond, function_ref<void()> then);
  /// A loop whose iterations are independent: scf.parallel, which the
  /// pipeline hands to OpenMP. The body runs in an alloca scope, so stack
  /// scratch (allocaScratch) is per iteration and released after it.
  void parallelFor(Value lb, Value ub, function_ref<void(Value)> body);
  /// Stack scratch; only inside parallelFor bodies (or the alloca scope of
  /// the function).
  Value allocaScratch(ArrayRef<int64_t> shape, Type element);
  /// The module's private declaration of the LLVM intrinsic `name` (e.g.
  /// "llvm.x86.sse.sfence"), made on first use: the LLVM lowering turns a
  /// func.call of it into the intrinsic. Why not llvm.call_intrinsic: it
  /// has no memory effects declared, which the buffer deallocation pipeline
  /// refuses; a call to a declaration it handles.
  func::FuncOp intrinsic(StringRef name, FunctionType type);
};

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_EMITTER_H
