//===- BenchChoices.h - moe-bench's own choice options, spelled once -*- C++ -*-===//
//
// The choices only moe-bench takes (passes/Choices.h and tooling/
// ToolChoices.h have the shared ones, the dialect's pack strategy and null
// policy among them), as tables of passes/Choice.h: the cl::values of each
// option, the name its reports print and the list its message shows.
// --quant-mode is moe-quantize's mode (its names, from its table) or none;
// test/unit/ChoiceTablesTest.cpp checks they agree.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLS_MOEBENCH_BENCHCHOICES_H
#define MOEC_TOOLS_MOEBENCH_BENCHCHOICES_H

#include "passes/Choices.h"

namespace moebench {

/// How the benchmark's block is written (the seeds' implementations).
enum class Impl { baseline, fusedW13, preweight, scatter };
inline constexpr mlir::moe::ChoiceTable<Impl, 4> kImplChoices{{
    {Impl::baseline, "baseline", "separate gate and up weights"},
    {Impl::fusedW13, "fused_w13", "gate and up as one [E, H, 2M] weight"},
    {Impl::preweight, "preweight", "fused, the routing weight applied before the down projection"},
    {Impl::scatter, "scatter", "fused, combined by a scatter-add"},
}};

/// The routing distributions (semantics doc, section 5).
enum class Distribution { random, runs, both };
inline constexpr mlir::moe::ChoiceTable<Distribution, 3> kDistributionChoices{{
    {Distribution::random, "random", "logits N(0, 1)"},
    {Distribution::runs, "runs", "runs of tokens on one expert (geometric lengths)"},
    {Distribution::both, "both", "each in turn"},
}};

/// Whether the timed call packs the rows itself.
enum class QueueMode { full, prequeue, both };
inline constexpr mlir::moe::ChoiceTable<QueueMode, 3> kQueueModeChoices{{
    {QueueMode::full, "full", "the whole block"},
    {QueueMode::prequeue, "prequeue", "the rows packed and gathered before the timed call"},
    {QueueMode::both, "both", "each in turn"},
}};

/// What a timed call computes.
enum class BenchPass { forward, forwardBackward };
inline constexpr mlir::moe::ChoiceTable<BenchPass, 2> kBenchPassChoices{{
    {BenchPass::forward, "forward", "the block"},
    {BenchPass::forwardBackward, "forward_backward", "a training step: loss and every gradient"},
}};

/// --quant-mode: none, or moe-quantize's mode (its names).
enum class QuantRun { none, int8, int8Routed, fakeInt8 };
inline constexpr mlir::moe::ChoiceTable<QuantRun, 4> kQuantRunChoices{{
    {QuantRun::none, "none", "the float block"},
    {QuantRun::int8, mlir::moe::kQuantModeChoices.spellings[0].name,
     mlir::moe::kQuantModeChoices.spellings[0].description},
    {QuantRun::int8Routed, mlir::moe::kQuantModeChoices.spellings[1].name,
     mlir::moe::kQuantModeChoices.spellings[1].description},
    {QuantRun::fakeInt8, mlir::moe::kQuantModeChoices.spellings[2].name,
     mlir::moe::kQuantModeChoices.spellings[2].description},
}};

} // namespace moebench

MOE_CHOICE_PARSER(moebench::Impl, moebench::kImplChoices)
MOE_CHOICE_PARSER(moebench::Distribution, moebench::kDistributionChoices)
MOE_CHOICE_PARSER(moebench::QueueMode, moebench::kQueueModeChoices)
MOE_CHOICE_PARSER(moebench::BenchPass, moebench::kBenchPassChoices)
MOE_CHOICE_PARSER(moebench::QuantRun, moebench::kQuantRunChoices)

#endif // MOEC_TOOLS_MOEBENCH_BENCHCHOICES_H
