//===- GmmMicrokernel.h - the fast grouped matmul --------------------------===//

#ifndef MOEC_CODEGEN_GMMMICROKERNEL_H
#define MOEC_CODEGEN_GMMMICROKERNEL_H

#include "codegen/Emitter.h"
#include "codegen/GmmTiling.h"
#include "dialect/MoeOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::moe::codegen {

/// What one microkernel computes, on buffers.
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
  GmmTiling tiling;
};

/// The plan for `gate` (and, for a two-input SwiGLU, `up`), reading rows
/// through `gather` if given; `out` is left for the caller.
GmmKernelPlan planFromTensors(Emitter &e, GmmOp gate, GmmOp up, SwigluOp swiglu,
                              GatherRowsOp gather, const GmmTiling &tiling);

/// Emits the kernel at the emitter's insertion point. `anchor` is an op of
/// the module (for the omp_get_max_threads declaration).
void emitGmmMicrokernel(Emitter &e, Operation *anchor, const GmmKernelPlan &plan);

/// Replaces `gate` (or, with `swiglu`, the swiglu and its gmms `gate` and
/// `up`, `up` null for the fused [R, 2M] form) by the kernel. A gate lhs made
/// by moe.gather_rows is read through its permutation; the gather is erased
/// once nothing else uses it.
void lowerGmmMicrokernel(RewriterBase &rewriter, GmmOp gate, GmmOp up, SwigluOp swiglu,
                         const GmmTiling &tiling);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_GMMMICROKERNEL_H
