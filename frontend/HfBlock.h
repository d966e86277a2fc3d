//===- HfBlock.h - a Hugging Face MoE layer as a moe.block function -*- C++ -*-===//
//
// The front end from a model's config: the layer runtime/HfLayer reads,
// built as `func.func @moe_block(x, weights...) -> y` holding one moe.block
// op with the family's operands and attributes (built with the op's
// builder, not printed text), its arguments in hfBlockArguments' order so
// that loadHfWeights' buffers bind to them.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_FRONTEND_HFBLOCK_H
#define MOEC_FRONTEND_HFBLOCK_H

#include "runtime/HfLayer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::moe {

/// The module holding `layer`'s block function @moe_block, activations and
/// weights in `dtype` (F32 or BF16).
OwningOpRef<ModuleOp> buildHfBlockModule(MLIRContext *context, const moec::HfLayer &layer,
                                         moec::DType dtype);

} // namespace mlir::moe

#endif // MOEC_FRONTEND_HFBLOCK_H
