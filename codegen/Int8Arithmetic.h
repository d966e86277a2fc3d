//===- Int8Arithmetic.h - symmetric int8 quantization's arithmetic -*- C++ -*-===//
//
// Shared by the int8 ops' lowerings (lowerings/QuantizeLowering.cpp) and
// the int8 gmm kinds (kernels/Int8Rows.cpp), so that both round alike
// (shared/docs/moe-semantics.md, section 7).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_INT8ARITHMETIC_H
#define MOEC_CODEGEN_INT8ARITHMETIC_H

#include "mlir/IR/Value.h"

namespace mlir::moe::codegen {

class Emitter;

/// On f32 scalars or vectors: 127 / maxAbs (0 for 0), maxAbs / 127, and
/// q = clamp(roundeven(x * reciprocal), -127, 127) as f32.
Value int8Reciprocal(Emitter &e, Value maxAbs);
Value int8Scale(Emitter &e, Value maxAbs);
Value quantizeInt8(Emitter &e, Value x, Value reciprocal);
/// max(runningMax, |x|).
Value absMax(Emitter &e, Value runningMax, Value x);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_INT8ARITHMETIC_H
