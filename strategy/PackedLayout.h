//===- PackedLayout.h - the weight layout a gmm's kernels read --*- C++ -*-===//
//
// Which moe.pack_weights layout the kernel kinds of a #moe.gmm_lowering read
// their weight blocks in: what moe-prepare-weights packs once, and what
// moe-lower-to-loops checks a gmm's packed(...) operand against. The
// kernels (codegen/kernels/PackedOperands.cpp, FmaKernel.cpp) read exactly
// this layout, with a block per task.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_STRATEGY_PACKEDLAYOUT_H
#define MOEC_STRATEGY_PACKEDLAYOUT_H

#include "dialect/MoeOps.h"

#include <optional>
#include <string>

namespace mlir::moe::strategy {

/// moe.pack_weights's attributes.
struct PackedLayout {
  int64_t lanes = 0, tileColumns = 0, blockColumns = 0, gateUpUnit = 0;
};

/// The layout the kinds of `lowering` read the weights of `gate` in (with
/// the up gmm and the SwiGLU the lowering fuses, if any): bf16 pairs for the
/// AVX512_BF16 and AMX kinds (blocks of packed_columns), int8 quads for the
/// VNNI, AVX2 and AMX int8 kinds (blocks of packed_columns), panels of nr = 16 nv
/// columns for the FMA kind (blocks of nc; f32 or bf16, as the weights).
/// nullopt when the weights have no one layout: int8_vector (reads them in
/// place), a transposed weight (the backward), the FMA kind beside a packed
/// one, the reference.
std::optional<PackedLayout> packedLayoutFor(GmmOp gate, SwigluOp swiglu, GmmLoweringAttr lowering);

/// The type moe.pack_weights gives `gate`'s (and `up`'s) weights in
/// `layout`; failure with `why` when it does not fit them.
FailureOr<RankedTensorType> packedWeightsType(GmmOp gate, GmmOp up, const PackedLayout &layout,
                                              std::string &why);

} // namespace mlir::moe::strategy

#endif // MOEC_STRATEGY_PACKEDLAYOUT_H
