//===- StageTable.cpp - the timed function's stages, timed inside it ------===//

#include "StageTable.h"

#include "compiler/Compiler.h"
#include "runtime/Buffer.h"
#include "tooling/RunReport.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace moebench;
using llvm::format;

namespace {
/// Medians per stage of `iters` calls after `warmup`.
bool timeAt(Compiled &staged, const std::string &function,
            std::map<std::string, moec::Buffer> &pool, const std::vector<std::string> &args,
            const std::vector<std::string> &results, int warmup, int iters,
            std::vector<double> &medians, std::string &error) {
  std::vector<std::vector<double>> perStage;
  for (int i = 0; i < warmup + iters; ++i) {
    std::vector<double> seconds;
    if (staged.callStaged(function, pool, args, results, seconds, error) < 0)
      return false;
    if (i < warmup)
      continue;
    perStage.resize(seconds.size());
    for (size_t s = 0; s < seconds.size(); ++s)
      perStage[s].push_back(seconds[s]);
  }
  medians.clear();
  for (std::vector<double> &times : perStage)
    medians.push_back(moec::medianOf(times));
  return true;
}
} // namespace

bool moebench::timeStagesInside(Compiled &staged, const std::string &function,
                                std::map<std::string, moec::Buffer> &pool,
                                const std::vector<std::string> &args,
                                const std::vector<std::string> &results, int warmup, int iters,
                                unsigned threads, std::vector<StageTime> &stages,
                                std::string &error) {
  std::vector<std::string> names = staged.stages(function);
  if (names.empty()) {
    error = "@" + function + " has no stages marked";
    return false;
  }
  std::vector<double> many, one;
  if (!timeAt(staged, function, pool, args, results, warmup, iters, many, error))
    return false;
  if (threads > 1) {
    if (!moec::setGeneratedCodeThreads(1)) {
      error = "cannot set the generated code's threads: libomp is not loaded";
      return false;
    }
    bool ok = timeAt(staged, function, pool, args, results, warmup, iters, one, error);
    moec::setGeneratedCodeThreads(int(threads));
    if (!ok)
      return false;
  }
  stages.clear();
  for (size_t s = 0; s < names.size(); ++s)
    stages.push_back({names[s], many[s], threads > 1 ? one[s] : many[s]});
  return true;
}

void moebench::printStageTable(llvm::raw_ostream &os, const std::string &function,
                               const std::vector<StageTime> &stages, unsigned threads,
                               int iters) {
  double total = 0, totalOne = 0;
  for (const StageTime &s : stages)
    total += s.seconds, totalOne += s.oneThreadSeconds;
  if (total <= 0)
    return;
  os << format("stages inside @%s (medians of %d; speed-up from 1 to %u threads):\n",
               function.c_str(), iters, threads);
  // Each stage's time beyond a perfect split over the threads: what idle
  // threads cost it.
  auto lost = [&](const StageTime &s) {
    return std::max(0.0, s.seconds - s.oneThreadSeconds / threads);
  };
  double small = 0, smallOne = 0;
  int smallCount = 0;
  for (const StageTime &s : stages) {
    if (s.seconds < 0.005 * total) {
      small += s.seconds, smallOne += s.oneThreadSeconds, ++smallCount;
      continue;
    }
    os << format("  %-36s %10.2f ms %5.1f%%  %5.2fx\n", s.name.c_str(), s.seconds * 1e3,
                 100 * s.seconds / total, s.seconds > 0 ? s.oneThreadSeconds / s.seconds : 0.0);
  }
  if (smallCount)
    os << format("  %-36s %10.2f ms %5.1f%%  %5.2fx\n",
                 (std::to_string(smallCount) + " stages under 0.5% each").c_str(), small * 1e3,
                 100 * small / total, small > 0 ? smallOne / small : 0.0);
  os << format("  %-36s %10.2f ms %5.1f%%  %5.2fx\n", "all stages", total * 1e3, 100.0,
               totalOne / total);
  double lostTotal = 0;
  std::vector<const StageTime *> byLoss;
  for (const StageTime &s : stages)
    lostTotal += lost(s), byLoss.push_back(&s);
  std::sort(byLoss.begin(), byLoss.end(),
            [&](const StageTime *a, const StageTime *b) { return lost(*a) > lost(*b); });
  os << format("threads: %.1f%% of the stages' time is threads left idle", 100 * lostTotal / total);
  if (threads > 1 && lostTotal > 0) {
    os << " (most in";
    for (size_t i = 0; i < byLoss.size() && i < 3 && lost(*byLoss[i]) > 0; ++i)
      os << (i ? "," : "")
         << format(" %s %.1f%%", byLoss[i]->name.c_str(), 100 * lost(*byLoss[i]) / total);
    os << ")";
  }
  os << "\n";
}
