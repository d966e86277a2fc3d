//===- StageTable.h - the timed function's stages, timed inside it -*- C++ -*-===//
//
// --stage-timing for the forward and forward_backward alike: a copy of the
// timed function compiled with stage timers (moe-mark-stages) is called as
// the block is, at the run's threads and at one; each stage's median time,
// its share of the call and its speed-up from one thread to the run's,
// which shows the stages that leave threads idle (serial phases).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLS_MOEBENCH_STAGETABLE_H
#define MOEC_TOOLS_MOEBENCH_STAGETABLE_H

#include "Report.h"
#include "Session.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace moebench {

/// Calls `function` of `staged` (compiled with stage timers) `warmup` +
/// `iters` times at `threads` threads and, when `threads` > 1, as many at
/// one thread, the two taking turns (stagedCallOrder, StageOrder.h), on the
/// pool's buffers `args`; each stage's medians into
/// `stages` (one-thread times 0 at one thread), and the call's own medians
/// (its entry and exit, the arena's allocation and the frees are outside
/// the marks) into `call`. Its results go to the pool as `results` (the
/// caller erases them). False with `error`.
bool timeStagesInside(Compiled &staged, const std::string &function,
                      std::map<std::string, moec::Buffer> &pool,
                      const std::vector<std::string> &args,
                      const std::vector<std::string> &results, int warmup, int iters,
                      unsigned threads, std::vector<StageTime> &stages, StageTime &call,
                      std::string &error);

/// The table of `stages` of `function`: time, share of the call and, with
/// more than one thread, speed-up per stage (stages under 0.5% of the call
/// folded into one line), the call's time outside the marks, and the share
/// of the call lost to threads left idle (each stage's time beyond its
/// one-thread time over `threads`), with the stages losing most.
void printStageTable(llvm::raw_ostream &os, const std::string &function,
                     const std::vector<StageTime> &stages, const StageTime &call,
                     unsigned threads, int iters);

} // namespace moebench

#endif // MOEC_TOOLS_MOEBENCH_STAGETABLE_H
