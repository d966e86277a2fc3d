//===- CoreSpeed.h - the cores' own speed between timed calls ---*- C++ -*-===//
//
// On a shared host a timed call can run slow with no steal at all (the
// vCPU kept its time; tooling/CpuSteal.h): a sibling hardware thread's
// load or a lower clock slows the core itself. The guest sees neither, but
// it can time its own core: moe-bench runs the peak loop of the block's unit
// (tooling/Peak.h, registers only: no cache or memory the call used) for a
// few milliseconds after each call, and quotes its rate as a share of the
// run's peak. moe-bench raises the peak to a probe faster than it (the
// same loop on as many threads: the peak was measured in a slow moment),
// so a share is at most 100%; well under it, the cores ran slower between
// the calls than the fastest measured in the run so far, whatever the code
// did.
//
//===----------------------------------------------------------------------===//

#ifndef MOEC_TOOLING_CORESPEED_H
#define MOEC_TOOLING_CORESPEED_H

#include "tooling/Peak.h"

#include <optional>
#include <vector>

namespace moec {

/// The probe's attempts: five of 4 ms, 20 ms a call, outside the calls'
/// time (a run of millisecond calls takes many times as long).
constexpr double kCoreProbeSeconds = 0.004;

/// `loop` on the generated code's threads (compiler/Compiler.h's
/// runOnGeneratedCodeThreads: the threads the calls ran on, at the calls'
/// worker count), the best of five attempts of about `seconds`: the rate
/// (GFLOP/s, or GOP/s) they reach together now. Best of five as the peak
/// is: an interrupt in one attempt is not the cores' speed. 0 where the
/// loop's unit is absent or libomp is not loaded (no program compiled).
double probeCores(const PeakLoop &loop, double seconds = kCoreProbeSeconds);

/// The probes' rates over a run's timed calls as shares of the run's peak,
/// in percent: their median (the mean of the middle two of an even count),
/// lowest and highest, and each probe's in order; and the median rate
/// itself (the peak's unit), which compares across runs where a share, of
/// each run's own peak, does not.
struct CoreSpeed {
  double medianPct = 0, minPct = 0, maxPct = 0;
  std::vector<double> pcts;
  double medianRate = 0;
};

/// None for no probes, a peak that is not positive, or a probe that
/// measured nothing (0: a unit this host lacks).
std::optional<CoreSpeed> coreSpeedOf(const std::vector<double> &rates, double peak);

} // namespace moec

#endif // MOEC_TOOLING_CORESPEED_H
