//===- Choices.h - the passes' choice options, spelled once -----*- C++ -*-===//
//
// The choices moe-opt's pass options, moec, moe-bench and the Python module
// share (passes/Choice.h): moe-partition's ep-dispatch, moe-remat's policy,
// moe-generate-backward's loss, moe-quantize's mode and weight scales, and
// the dialect's pack strategy and null policy (moe-bench's options).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_PASSES_CHOICES_H
#define MOEC_PASSES_CHOICES_H

#include "dialect/MoeDialect.h"
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

/// What moe-quantize makes int8 (semantics doc, section 7).
enum class QuantMode { int8, int8Routed, fakeInt8 };
inline constexpr ChoiceTable<QuantMode, 3> kQuantModeChoices{{
    {QuantMode::int8, "int8", "routed gmms and the shared expert's matmuls on int8 kernels"},
    {QuantMode::int8Routed, "int8_routed", "the routed gmms only (the shared expert in float)"},
    {QuantMode::fakeInt8, "fake_int8", "int8 rounding, float kernels (quantize and dequantize)"},
}};

/// moe-quantize's weight scales: one per expert or per output channel.
enum class QuantWeightScales { expert, channel };
inline constexpr ChoiceTable<QuantWeightScales, 2> kQuantWeightScalesChoices{{
    {QuantWeightScales::expert, "expert", "one scale per expert (per weight matrix)"},
    {QuantWeightScales::channel, "channel", "one scale per expert output channel"},
}};

/// The routing's pack: the dialect's PackStrategy, with its names (a unit
/// test checks them against the dialect's).
inline constexpr ChoiceTable<PackStrategy, 3> kPackStrategyChoices{{
    {PackStrategy::argsort, "argsort", "a stable sort of the expert ids"},
    {PackStrategy::tuple_sort, "tuple_sort", "a sort of (expert, slot) tuples"},
    {PackStrategy::counting, "counting", "a counting sort over the experts"},
}};

/// How null slots are drawn: the dialect's NullPolicy, with its names.
inline constexpr ChoiceTable<NullPolicy, 2> kNullPolicyChoices{{
    {NullPolicy::independent, "independent", "each slot null with the fraction"},
    {NullPolicy::take_until_null, "take_until_null",
     "a token's slots up to its first null draw"},
}};

} // namespace mlir::moe

MOE_CHOICE_PARSER(mlir::moe::EpDispatch, mlir::moe::kEpDispatchChoices)
MOE_CHOICE_PARSER(mlir::moe::RematPolicy, mlir::moe::kRematPolicyChoices)
MOE_CHOICE_PARSER(mlir::moe::BackwardLoss, mlir::moe::kBackwardLossChoices)
MOE_CHOICE_PARSER(mlir::moe::QuantMode, mlir::moe::kQuantModeChoices)
MOE_CHOICE_PARSER(mlir::moe::QuantWeightScales, mlir::moe::kQuantWeightScalesChoices)
MOE_CHOICE_PARSER(mlir::moe::PackStrategy, mlir::moe::kPackStrategyChoices)
MOE_CHOICE_PARSER(mlir::moe::NullPolicy, mlir::moe::kNullPolicyChoices)

#endif // MOEC_PASSES_CHOICES_H
