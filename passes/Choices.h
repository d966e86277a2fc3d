//===- Choices.h - the passes' choice options, spelled once -----*- C++ -*-===//
//
// The choices moe-opt's pass options, moec, moe-bench and the Python module
// share (passes/Choice.h): moe-partition's ep-dispatch, moe-remat's policy,
// moe-generate-backward's loss.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_PASSES_CHOICES_H
#define MOEC_PASSES_CHOICES_H

#include "passes/Choice.h"

namespace mlir::moe {

/// How expert-parallel shards exchange rows (docs/sharding.md).
enum class EpDispatch { dense, compact, ring, a2a };
inline constexpr ChoiceTable<EpDispatch, 4> kEpDispatchChoices{{
    {EpDispatch::dense, "dense", "every shard runs its experts on all tokens' rows, masked"},
    {EpDispatch::compact, "compact", "each shard packs only the rows routed to its experts"},
    {EpDispatch::ring, "ring", "tokens split over the expert axis; rows passed around a ring"},
    {EpDispatch::a2a, "a2a", "tokens split over the expert axis; rows sent by one all-to-all"},
}};

/// What the backward recomputes instead of keeping (semantics doc
/// section 3, plus auto under a byte budget).
enum class RematPolicy { none, expertMlp, combine, automatic };
inline constexpr ChoiceTable<RematPolicy, 4> kRematPolicyChoices{{
    {RematPolicy::none, "none", "keep every forward value the backward reads"},
    {RematPolicy::expertMlp, "expert_mlp", "recompute the experts' gate/up and activation"},
    {RematPolicy::combine, "combine", "recompute the combine's inputs"},
    {RematPolicy::automatic, "auto", "the cheapest recomputation under activation-budget"},
}};

/// The loss moe-generate-backward differentiates.
enum class BackwardLoss { meanSquare, cotangent };
inline constexpr ChoiceTable<BackwardLoss, 2> kBackwardLossChoices{{
    {BackwardLoss::meanSquare, "mean-square", "return mean(y^2) and its gradients"},
    {BackwardLoss::cotangent, "cotangent", "take dL/dy and return the gradients"},
}};

} // namespace mlir::moe

MOE_CHOICE_PARSER(mlir::moe::EpDispatch, mlir::moe::kEpDispatchChoices)
MOE_CHOICE_PARSER(mlir::moe::RematPolicy, mlir::moe::kRematPolicyChoices)
MOE_CHOICE_PARSER(mlir::moe::BackwardLoss, mlir::moe::kBackwardLossChoices)

#endif // MOEC_PASSES_CHOICES_H
