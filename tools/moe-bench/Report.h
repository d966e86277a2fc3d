//===- Report.h - moe-bench's results and their JSON ----------------*- C++ -*-===//
//
// One measured configuration (a RESULT line) and the JSON file --json
// writes of them all, with the run's settings they share.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLS_MOEBENCH_REPORT_H
#define MOEC_TOOLS_MOEBENCH_REPORT_H

#include "tooling/CoreSpeed.h"
#include "tooling/CpuSteal.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace moebench {

/// A stage of the timed function, timed inside it (StageTable.h): its
/// median at the run's threads and at one (0: not measured).
struct StageTime {
  std::string name;
  double seconds = 0, oneThreadSeconds = 0;
};

struct Result {
  std::string distribution, mode, impl, remat;
  std::string family; // --family, or empty
  int64_t shared = 0; // the shared expert's width run
  int64_t keptBytes = 0, recomputedFlops = 0;
  int64_t k = 0, realAssignments = 0, nullAssignments = 0;
  double nullTarget = 0;
  double seconds = 0, tflops = 0, tokensPerS = 0, peakPct = 0, compileS = 0;
  // The peak peakPct is of: the run's best when this result was taken (a
  // later one may be higher: measured again, or raised by a probe).
  double peak = 0;
  std::vector<std::pair<std::string, double>> stages;
  double upGops = 0, downGops = 0; // --stage-timing: the routed gmms' rates
  std::vector<StageTime> blockStages; // --stage-timing: inside the timed function
  // The forward's weights read per call over its time, and that rate's
  // share of the DRAM read bandwidth (the bound at decode sizes); 0: not
  // reported (training, sharded).
  double weightGBps = 0, readBandwidthPct = 0;
  // The hypervisor's steal over the timed calls (tooling/CpuSteal.h); none
  // where /proc/stat could not be read.
  std::optional<moec::Steal> steal;
  // Each timed call's seconds, in order; and the cores' own speed after
  // each (tooling/CoreSpeed.h); none without the probe.
  std::vector<double> callSeconds;
  std::optional<moec::CoreSpeed> coreSpeed;
  // Each timed call's steal in seconds (/proc/stat's 0.01 s ticks), in
  // order; empty where the steal was not read.
  std::vector<double> callSteals;
  // Sharded runs: the plan, the model's prediction, counted and modelled
  // bytes of the busiest shard, the slowest and fastest shard's TF/s.
  std::string parallel, mesh;
  int64_t shards = 1;
  double predictedS = 0, commCountedBytes = 0, commModelledBytes = 0;
  double shardTflopsMin = 0, shardTflopsMax = 0;
  // --quant-mode: each result's relative error against the f32 block.
  std::vector<std::pair<std::string, double>> relErrors;
};

/// What every result of a run shares: the options' spellings, the sizes,
/// the peak and what it is of ("FP32 FMA", "AVX512_BF16", ...).
struct RunInfo {
  std::string pass, backend, dtype, nullMode, launcher, quant, quantWeightScales;
  std::string peakKind = "FP32 FMA";
  int64_t tokens = 0, hidden = 0, mlp = 0, experts = 0;
  unsigned threads = 0;
  bool renormalize = false;
  double peak = 0;
};

/// The JSON --json writes: the peak, then one object per result.
std::string resultsJson(const RunInfo &run, const std::vector<Result> &results);

} // namespace moebench

#endif // MOEC_TOOLS_MOEBENCH_REPORT_H
