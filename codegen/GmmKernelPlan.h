//===- GmmKernelPlan.h - what one fast gmm kernel computes ------*- C++ -*-===//
//
// Shared by the two task kinds of the fast gmm (GmmMicrokernel.cpp: AVX-512
// FMA register tiles; GmmAmxTask.cpp: AMX tiles), which one scheduler runs
// side by side.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_GMMKERNELPLAN_H
#define MOEC_CODEGEN_GMMKERNELPLAN_H

#include "codegen/GmmTiling.h"
#include "mlir/IR/Value.h"

namespace mlir::moe::codegen {

/// What one kernel computes, on buffers.
struct GmmKernelPlan {
  Value lhs;            // [rows, D], or [tokens, D] when gathered through perm
  Value perm;           // i32 [R]: row r reads lhs[perm[r] / topK], zero if < 0
  int64_t topK = 1;
  Value gateRhs;        // [E, D, Nw], innermost stride 1
  Value upRhs;          // with swiglu: the up columns' weight (may be gateRhs)
  int64_t upOffset = 0; // first up column in upRhs
  bool swiglu = false;
  Value sizes;          // i32 [E]
  Value rowCount;       // R
  int64_t depth = 0;    // D
  int64_t width = 0;    // output columns N
  Value out;            // [R, N], identity layout
  GmmTiling tiling;     // the FMA tasks' tiles
  bool amx = false;     // bf16 operands: large groups run as AMX tasks
};

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_GMMKERNELPLAN_H
