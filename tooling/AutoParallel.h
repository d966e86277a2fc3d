//===- AutoParallel.h - a module's block through the parallel plans -*- C++ -*-===//
//
// What moec needs to choose a parallel plan for a program (moe-bench builds
// its workload from its flags): the cost model's view of the module's
// moe.block, this host's rates as the model sees them, and the model's
// prediction of every candidate, printed the same way by both tools.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_AUTOPARALLEL_H
#define MOEC_TOOLING_AUTOPARALLEL_H

#include "tooling/GmmPeakUnit.h"
#include "tooling/ParallelPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace moec {

/// The cost model's workload of the module's one moe.block (`training`:
/// its forward_backward is what runs; `tokens` > 0: the token count of a
/// block whose x has a dynamic one, the run's; `capacityFactor`: one will be
/// given to moe-partition); nullopt and `error` when the module has no block
/// or several, or a size is still dynamic.
std::optional<Workload> blockWorkload(mlir::ModuleOp module, bool training, int64_t tokens,
                                      bool capacityFactor, std::string &error);

/// The shards' device count a plan is chosen for when none is given: the
/// module's #moe.target thread hint, else `threads` (0: every core).
int64_t defaultDevices(mlir::ModuleOp module, unsigned threads);

/// The model line's word for a core rate of kGmmShareOfPeak of the peak of
/// the unit named `unitKind` ("0.88 of the FP32 FMA peak").
std::string shareOfPeak(const char *unitKind);

/// This host as the model sees it, measured now: `threads` threads over
/// `devices` shards run by `launcher`, a core's gmm rate kGmmShareOfPeak
/// of the peak of `unit` (gmmPeakUnit: the unit the block's gmms run on,
/// as moe-bench rates it; the FP32 FMA peak where this host lacks it), the
/// link a large memcpy, 5 us a step.
Machine measureHostMachine(unsigned threads, int64_t devices, Launcher launcher,
                           const PeakUnit &unit);

/// The model's lines: the machine, then every candidate plan for `devices`
/// with its predicted time, `chosen` marked.
void describePredictions(llvm::raw_ostream &os, const Workload &w, const Machine &m,
                         int64_t devices, const Plan &chosen);

} // namespace moec

#endif // MOEC_TOOLING_AUTOPARALLEL_H
