//===- CoreSpeed.cpp - the cores' own speed between timed calls ----------===//

#include "tooling/CoreSpeed.h"
#include "compiler/Compiler.h"
#include "tooling/RunReport.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <atomic>

using namespace moec;

std::optional<CoreSpeed> moec::coreSpeedOf(const std::vector<double> &rates, double peak) {
  if (rates.empty() || !(peak > 0) || llvm::any_of(rates, [](double r) { return !(r > 0); }))
    return std::nullopt;
  auto [lowest, highest] = std::minmax_element(rates.begin(), rates.end());
  CoreSpeed speed;
  speed.medianRate = medianOf(rates);
  speed.medianPct = 100 * speed.medianRate / peak;
  speed.minPct = 100 * *lowest / peak;
  speed.maxPct = 100 * *highest / peak;
  for (double rate : rates)
    speed.pcts.push_back(100 * rate / peak);
  return speed;
}

namespace {
/// One attempt's work: each thread runs the loop's rounds; the sums go to
/// an atomic, stores the compiler must keep.
struct Attempt {
  const PeakLoop *loop;
  long rounds;
  std::atomic<float> sink{0};
};
void runAttempt(void *arg, int) {
  auto *attempt = static_cast<Attempt *>(arg);
  attempt->sink.store(attempt->loop->run(attempt->rounds));
}
} // namespace

double moec::probeCores(const PeakLoop &loop, double seconds) {
  if (!loop.run)
    return 0;
  Attempt attempt{&loop, loop.roundsFor(seconds)};
  return bestOfFive(attempt.rounds, loop.opsPerRound,
                    [&] { return unsigned(runOnGeneratedCodeThreads(runAttempt, &attempt)); });
}
