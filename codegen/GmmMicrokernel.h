//===- GmmMicrokernel.h - the fast grouped matmul --------------------------===//

#ifndef MOEC_CODEGEN_GMMMICROKERNEL_H
#define MOEC_CODEGEN_GMMMICROKERNEL_H

#include "codegen/GmmTiling.h"
#include "dialect/MoeOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::moe::codegen {

/// Replaces `gate` (or, with `swiglu`, the swiglu and its gmms `gate` and
/// `up`, `up` null for the fused [R, 2M] form) by the kernel. A gate lhs made
/// by moe.gather_rows is read through its permutation; the gather is erased
/// once nothing else uses it. With bf16 operands, `packedKinds` says which
/// bf16 task kinds are compiled in: groups of enough rows run on AMX tiles
/// where the process may use them (checked at run time), the others on
/// AVX512_BF16 dot products, else on the FMA register tiles.
struct PackedKinds {
  bool amx = false;        // bf16 on AMX tiles
  bool avx512Bf16 = false; // bf16 dot products
  bool amxInt8 = false;    // int8 on AMX tiles
  bool avx512Vnni = false; // int8 dot products (else the exact i32 vector task)
};
/// The bf16 kinds gmm-strategy `strategy` compiles in for `host` (none for
/// microkernel-fma and reference); nullopt with `error` set for an unknown
/// strategy or one this host cannot run. moec compiles for the host, so the
/// host's features are the target's.
std::optional<PackedKinds> packedKindsFor(llvm::StringRef strategy, const MachineModel &host,
                                      std::string &error);
void lowerGmmMicrokernel(RewriterBase &rewriter, GmmOp gate, GmmOp up, SwigluOp swiglu,
                         const GmmTiling &tiling, PackedKinds packedKinds);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_GMMMICROKERNEL_H
