//===- GmmMicrokernel.h - the fast grouped matmul --------------------------===//

#ifndef MOEC_CODEGEN_LOWERINGS_GMMMICROKERNEL_H
#define MOEC_CODEGEN_LOWERINGS_GMMMICROKERNEL_H

#include "dialect/MoeOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::moe::codegen {

/// Replaces `gate` (or, with `swiglu`, the swiglu and its gmms `gate` and
/// `up`, `up` null for the fused [R, 2M] form) by the kernel `lowering`
/// (moe-select-lowering) describes: its kinds compiled in side by side, the
/// kind of each group chosen at run time from its row count and whether
/// Linux grants the AMX tile state. A gate lhs made by moe.gather_rows is
/// read through its permutation when the lowering fuses the gather; the
/// gather is erased once nothing else uses it.
void lowerGmmMicrokernel(RewriterBase &rewriter, GmmOp gate, GmmOp up, SwigluOp swiglu,
                         GmmLoweringAttr lowering);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_LOWERINGS_GMMMICROKERNEL_H
