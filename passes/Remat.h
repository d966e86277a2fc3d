//===- Remat.h - what the backward keeps and what it recomputes -*- C++ -*-===//
//
// The analysis behind the moe-remat pass and the moe-remat-report: in a
// forward_backward function (moe-generate-backward, ops of the backward
// tagged moe.adjoint), which forward values the backward reads (kept across
// the forward/backward boundary: the activations a training step holds) and
// what recomputing some of them in the backward instead costs.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_PASSES_REMAT_H
#define MOEC_PASSES_REMAT_H

#include "passes/Choices.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::moe {


/// What one choice of recomputed values costs.
struct RematCost {
  int64_t keptBytes = 0;       // forward values the backward reads
  int64_t recomputedFlops = 0; // of the forward ops the backward repeats
  bool dynamic = false;        // a kept value has a dynamic shape (not in keptBytes)
  llvm::SmallVector<Value> kept;
};

/// The forward/backward split of a forward_backward function.
class RematAnalysis {
public:
  explicit RematAnalysis(func::FuncOp fn);

  /// The forward values (results of forward ops) the policy recomputes in
  /// the backward: for expert_mlp the up gmm(s), the activation, the
  /// preweight scaling, the down gmm and casts between them; for combine
  /// the combine and the casts of its output. Not for auto (see `choose`).
  llvm::DenseSet<Value> recomputedBy(RematPolicy policy) const;

  /// The cost of recomputing `values` where the backward reads them, each
  /// once (their operands, unless recomputed too, are kept instead).
  RematCost cost(const llvm::DenseSet<Value> &values) const;

  /// auto: the values to recompute that keep at most `budget` bytes with
  /// the fewest recomputed FLOPs (ties: fewer bytes), searched over every
  /// subset of the expert MLP and combine values; nullopt when no choice
  /// fits, `best` then holds the smallest keep reachable.
  std::optional<llvm::DenseSet<Value>> choose(int64_t budget, RematCost &best) const;

  /// Rewrites the function: the backward reads clones of `values`,
  /// recomputed right before their first backward use, so the forward's
  /// copies die in the forward.
  void apply(const llvm::DenseSet<Value> &values);

  /// Has the function the moe.adjoint boundary at all.
  bool hasBoundary() const { return boundary; }

private:
  bool isForwardValue(Value v) const;
  mutable func::FuncOp fn; // op handles are not const-correct
  bool boundary = false;
  llvm::SmallVector<Value> candidates; // the expert MLP and combine values, in order
  llvm::DenseSet<Value> mlpValues, combineValues;
};

/// Bytes of a static tensor value (nullopt when dynamic), FLOPs of one op
/// in the model the report and auto use: matmuls 2 m n k, combine 2 per
/// row element, swiglu 5 per output element, scale_rows and addf 1, casts 0.
std::optional<int64_t> tensorBytes(Value v);
int64_t opFlops(Operation *op);

} // namespace mlir::moe

#endif // MOEC_PASSES_REMAT_H
