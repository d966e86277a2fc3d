//===- ToolChoices.h - the tools' own choice options, spelled once -*- C++ -*-===//
//
// Choices moec, moe-bench and the Python module share that no pass reads
// (passes/Choices.h has the passes'): how a block is parallelised, how a
// sharded program's shards run, and the element type of a block built from
// a model or by moe-bench.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_TOOLCHOICES_H
#define MOEC_TOOLING_TOOLCHOICES_H

#include "passes/Choice.h"
#include "runtime/Buffer.h"

namespace moec {

enum class Launcher { inprocess, mpi };
inline constexpr mlir::moe::ChoiceTable<Launcher, 2> kLauncherChoices{{
    {Launcher::inprocess, "inprocess", "every shard a thread of this process"},
    {Launcher::mpi, "mpi", "this process is one rank under mpirun -np N"},
}};

/// How a block runs: on one device, data-parallel, expert-parallel, or as
/// the cost model (tooling/CostModel.h) predicts fastest.
enum class ParallelMode { none, dp, ep, automatic };
inline constexpr mlir::moe::ChoiceTable<ParallelMode, 4> kParallelModeChoices{{
    {ParallelMode::none, "none", "one device (moec: the --mesh given, if any)"},
    {ParallelMode::dp, "dp", "tokens split over a data axis, experts replicated"},
    {ParallelMode::ep, "ep", "experts split over an expert axis (--ep-dispatch)"},
    {ParallelMode::automatic, "auto", "the plan the cost model predicts fastest"},
}};

/// Activations and weights: f32 or bf16.
enum class FloatType { f32, bf16 };
inline constexpr mlir::moe::ChoiceTable<FloatType, 2> kFloatTypeChoices{{
    {FloatType::f32, "f32", "32-bit floats"},
    {FloatType::bf16, "bf16", "bfloat16 (products accumulate in f32)"},
}};

inline DType dtypeOf(FloatType t) { return t == FloatType::bf16 ? DType::BF16 : DType::F32; }

} // namespace moec

MOE_CHOICE_PARSER(moec::Launcher, moec::kLauncherChoices)
MOE_CHOICE_PARSER(moec::FloatType, moec::kFloatTypeChoices)
MOE_CHOICE_PARSER(moec::ParallelMode, moec::kParallelModeChoices)

#endif // MOEC_TOOLING_TOOLCHOICES_H
