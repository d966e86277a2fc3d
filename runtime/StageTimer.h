//===- StageTimer.h - wall time per stage of a generated function -*- C++ -*-===//
//
// moe-mark-stages (passes/MarkStages.cpp) puts a call
// moert_stage_mark(i) before the first op of each stage i of a function
// and moert_stage_mark(-1) before its return: the time from one mark to the
// next is stage i's. The marks sit between the ops, outside the parallel
// loops, so a stage's time is its wall time on the calling thread whatever
// the threads inside it do.
//
// Times add up on the calling thread between beginStageTiming and
// takeStageTimes (thread-local: the shards of an in-process mesh each time
// their own). Without a beginStageTiming on the thread, a mark does nothing
// but read the clock.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_STAGETIMER_H
#define MOEC_RUNTIME_STAGETIMER_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace moec {

/// Starts adding the marks' times on this thread into `stages` slots (all
/// zero).
void beginStageTiming(size_t stages);

/// The seconds each stage took on this thread since beginStageTiming, and
/// stops adding. Empty when timing was not begun. `error` is set when a
/// mark named a stage past the slots (a function marked for more stages
/// than it was timed for), or a function did not reach its end mark.
std::vector<double> takeStageTimes(std::string &error);

/// Name -> address of moert_stage_mark for the JIT's symbol map.
std::vector<std::pair<const char *, void *>> stageTimerSymbols();

} // namespace moec

#endif // MOEC_RUNTIME_STAGETIMER_H
