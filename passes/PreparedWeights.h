//===- PreparedWeights.h - weights prepared once, at load time --*- C++ -*-===//
//
// The split moe-quantize (int8 weights) and moe-prepare-weights (weights in
// a kernel's layout) make of a function @f: what turns its weight arguments
// into the weights its kernels read moves into
// `@f_prepare_weights(weights) -> (prepared weights)`, the rest into
// `@f_prepared(other arguments, prepared weights)`. A host that runs the
// block many times calls the first once when it loads the weights and the
// second per batch.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_PASSES_PREPAREDWEIGHTS_H
#define MOEC_PASSES_PREPAREDWEIGHTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>
#include <string>

namespace mlir::moe {

/// The names of @f's two halves.
std::string prepareWeightsName(StringRef function);
std::string preparedName(StringRef function);

/// Reshapes, concatenations and casts: what may lie between a weight
/// argument and what prepares it.
bool isWeightReshapeOrCast(Operation *op);

/// The chains of `fn` from its arguments to the preparing ops, in body
/// order: top-level ops that `isPreparation` accepts, whose operands are
/// arguments or earlier chain ops, and that lead to or come from an op
/// `isRoot` accepts (which isPreparation must accept too).
SmallVector<Operation *> weightChains(func::FuncOp fn, function_ref<bool(Operation *)> isPreparation,
                                      function_ref<bool(Operation *)> isRoot);

/// The two halves of a split.
struct PreparedSplit {
  func::FuncOp prepare, prepared;
  /// `fn`'s arguments the prepare function takes, and those the prepared
  /// one still takes (a weight some op outside the chains also reads is in
  /// both), in `fn`'s order.
  SmallVector<BlockArgument> weightArgs, keptArgs;
};

/// Creates `@<name>_prepare_weights` and `@<name>_prepared` from `fn`'s body
/// and `chains` (weightChains'), before `fn` in its module, and adds them to
/// `symbols`; `fn` itself is left as it is. The prepare function returns
/// every chain value something outside the chains reads; the prepared one
/// takes them after `fn`'s other arguments (whose attributes it keeps).
/// Each records which of `fn`'s arguments it takes (kWeightArgumentsAttrName,
/// kKeptArgumentsAttrName).
/// Fails, with an error on `fn` naming `pass`, when either name exists.
FailureOr<PreparedSplit> splitPreparedWeights(func::FuncOp fn, ArrayRef<Operation *> chains,
                                              StringRef name, SymbolTable &symbols, StringRef pass);

/// Makes `fn`'s body the two calls: prepare(its weight arguments), then
/// prepared(its kept arguments, the prepared weights), returned. `fn` keeps
/// its signature and result. The split's arguments are taken by position
/// (it may have been made from a copy of `fn`).
void callPreparedHalves(func::FuncOp fn, const PreparedSplit &split);

/// `fn`'s halves when `fn` is the two calls callPreparedHalves made (the
/// form moe-quantize leaves @f in), with the arguments each takes.
std::optional<PreparedSplit> preparedCaller(func::FuncOp fn, SymbolTable &symbols);

/// `fn` with its calls of the two halves inlined: one body from the weight
/// arguments to the result, as before the split. A new private function
/// named `name`, after `fn`, the caller's to insert into a symbol table.
func::FuncOp mergedHalves(func::FuncOp fn, const PreparedSplit &split, StringRef name);

} // namespace mlir::moe

#endif // MOEC_PASSES_PREPAREDWEIGHTS_H
