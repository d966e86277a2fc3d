//===- TgmmAmx.h - moe.tgmm on AMX tiles ------------------------*- C++ -*-===//
#ifndef MOEC_CODEGEN_LOWERINGS_TGMMAMX_H
#define MOEC_CODEGEN_LOWERINGS_TGMMAMX_H

#include "mlir/IR/Value.h"

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::moe::codegen {

class Emitter;

/// What the AMX weight gradient computes: out[g] = lhs_g^T @ rhs_g over the
/// rows [firstRow[g], endRow[g]) of each group, on bf16 buffers.
struct TgmmAmxOperands {
  Value lhs;               // bf16 [R, D], innermost stride 1
  Value rhs;               // bf16 [R, N], innermost stride 1
  Value firstRow, endRow;  // index [E]
  Value groups;            // E
  Value out;               // [E, D, N], bf16 or f32, identity layout
  int64_t depth = 0;       // D
  int64_t width = 0;       // N
};

/// Emits the tgmm as AMX tasks (TgmmAmx.cpp) at the emitter's insertion
/// point, inside `anchor`'s function: to run only where Linux granted the
/// tile state (requestAmxTileState), the caller's branch.
void emitTgmmAmx(Emitter &e, const TgmmAmxOperands &o, Operation *anchor);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_LOWERINGS_TGMMAMX_H
