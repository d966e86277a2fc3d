//===- StageTable.cpp - the timed function's stages, timed inside it ------===//

#include "StageTable.h"
#include "StageOrder.h"

#include "compiler/Compiler.h"
#include "runtime/Buffer.h"
#include "tooling/RunReport.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace moebench;
using llvm::format;

namespace {
/// A thread count's kept calls: seconds per stage and of the whole call.
struct Samples {
  std::vector<std::vector<double>> perStage;
  std::vector<double> calls;

  void add(double call, const std::vector<double> &seconds) {
    calls.push_back(call);
    perStage.resize(seconds.size());
    for (size_t k = 0; k < seconds.size(); ++k)
      perStage[k].push_back(seconds[k]);
  }
  /// Medians per stage into `medians`, of the call into `callMedian`.
  void medians(std::vector<double> &medians, double &callMedian) {
    medians.clear();
    for (std::vector<double> &times : perStage)
      medians.push_back(moec::medianOf(times));
    callMedian = moec::medianOf(calls);
  }
};

void row(llvm::raw_ostream &os, const std::string &name, double seconds, double oneThread,
         double total, bool speedUp) {
  os << format("  %-36s %10.2f ms %5.1f%%", name.c_str(), seconds * 1e3, 100 * seconds / total);
  if (speedUp && seconds > 0 && oneThread > 0)
    os << format("  %5.2fx", oneThread / seconds);
  os << "\n";
}
} // namespace

bool moebench::timeStagesInside(Compiled &staged, const std::string &function,
                                std::map<std::string, moec::Buffer> &pool,
                                const std::vector<std::string> &args,
                                const std::vector<std::string> &results, int warmup, int iters,
                                unsigned threads, std::vector<StageTime> &stages,
                                StageTime &call, std::string &error) {
  threads = std::max(1u, threads);
  std::vector<std::string> names = staged.stages(function);
  if (names.empty()) {
    error = "@" + function + " has no stages marked";
    return false;
  }
  // The two thread counts take turns (StageOrder.h): the host's drift
  // enters both columns alike.
  Samples many, one;
  unsigned current = threads;
  bool ok = true;
  for (const StagedCall &c : stagedCallOrder(warmup, iters, threads)) {
    if (c.threads != current) {
      if (!moec::setGeneratedCodeThreads(int(c.threads))) {
        error = "cannot set the generated code's threads: libomp is not loaded";
        ok = false;
        break;
      }
      current = c.threads;
    }
    // Workers that slept through a one-thread call (or the results' release
    // after the last) wake before the call, not in its first stage.
    if (c.threads > 1)
      moec::wakeGeneratedCodeThreads();
    std::vector<double> seconds;
    double s = staged.callStaged(function, pool, args, results, seconds, error);
    if (s < 0) {
      ok = false;
      break;
    }
    if (c.kept)
      (c.threads == threads ? many : one).add(s, seconds);
  }
  if (current != threads)
    moec::setGeneratedCodeThreads(int(threads));
  if (!ok)
    return false;
  std::vector<double> manyMedians, oneMedians;
  call = {"call", 0, 0};
  many.medians(manyMedians, call.seconds);
  if (threads > 1)
    one.medians(oneMedians, call.oneThreadSeconds);
  stages.clear();
  for (size_t s = 0; s < names.size(); ++s)
    stages.push_back({names[s], manyMedians[s], threads > 1 ? oneMedians[s] : 0.0});
  return true;
}

void moebench::printStageTable(llvm::raw_ostream &os, const std::string &function,
                               const std::vector<StageTime> &stages, const StageTime &call,
                               unsigned threads, int iters) {
  double total = 0, totalOne = 0;
  for (const StageTime &s : stages)
    total += s.seconds, totalOne += s.oneThreadSeconds;
  // Shares are of the call; what the marks do not cover is a row of its own.
  double whole = std::max(call.seconds, total);
  if (whole <= 0)
    return;
  bool speedUp = threads > 1;
  if (speedUp)
    os << format("stages inside @%s (medians of %d; speed-up from 1 to %u threads):\n",
                 function.c_str(), iters, threads);
  else
    os << format("stages inside @%s (medians of %d):\n", function.c_str(), iters);
  double small = 0, smallOne = 0;
  int smallCount = 0;
  for (const StageTime &s : stages) {
    if (s.seconds < 0.005 * whole) {
      small += s.seconds, smallOne += s.oneThreadSeconds, ++smallCount;
      continue;
    }
    row(os, s.name, s.seconds, s.oneThreadSeconds, whole, speedUp);
  }
  if (smallCount)
    row(os, std::to_string(smallCount) + " stages under 0.5% each", small, smallOne, whole, speedUp);
  row(os, "all stages", total, totalOne, whole, speedUp);
  row(os, "outside the marks", std::max(0.0, call.seconds - total),
      std::max(0.0, call.oneThreadSeconds - totalOne), whole, speedUp);
  row(os, "the call", call.seconds, call.oneThreadSeconds, whole, speedUp);
  if (!speedUp)
    return;
  // Each stage's time beyond a perfect split over the threads: what idle
  // threads cost it, or threads slowed by what they share (at decode sizes
  // the memory: each thread streams its own weights, and one thread alone
  // reads faster than half of two).
  auto lost = [&](const StageTime &s) {
    return std::max(0.0, s.seconds - s.oneThreadSeconds / threads);
  };
  double lostTotal = 0;
  std::vector<const StageTime *> byLoss;
  for (const StageTime &s : stages)
    lostTotal += lost(s), byLoss.push_back(&s);
  std::sort(byLoss.begin(), byLoss.end(),
            [&](const StageTime *a, const StageTime *b) { return lost(*a) > lost(*b); });
  os << format("threads: %.1f%% of the stages' time is lost to the split over the threads, idle or "
               "slowed by what they share",
               100 * lostTotal / total);
  if (lostTotal > 0) {
    os << " (most in";
    for (size_t i = 0; i < byLoss.size() && i < 3 && lost(*byLoss[i]) > 0; ++i)
      os << (i ? "," : "")
         << format(" %s %.1f%%", byLoss[i]->name.c_str(), 100 * lost(*byLoss[i]) / total);
    os << ")";
  }
  os << "\n";
}
