//===- Sweep.h - moe-bench over a grid of configurations --------*- C++ -*-===//
//
// `moe-bench --sweep "topk=2,4,8; null=0,0.5; dtype=f32,bf16" ...` runs one
// moe-bench child process per point of the grid (the other flags passed on
// as they are), prints a progress line after each, and collects every
// child's results into one JSON and one CSV file, and a plot on request.
// A process per point: each configuration allocates and frees its own
// weights, and one that fails (or runs out of memory) does not take the
// others with it.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLS_MOEBENCH_SWEEP_H
#define MOEC_TOOLS_MOEBENCH_SWEEP_H

#include <string>
#include <utility>
#include <vector>

namespace moebench {

/// One swept axis: its name in the spec and its values, in order.
struct SweepAxis {
  std::string name, flag;
  std::vector<std::string> values;
};

/// Parses "axis=v1,v2; axis=v3" (';' or whitespace between axes). The axes
/// and the moe-bench flag each sets: tokens, hidden, mlp_dim, experts, topk,
/// null (--null-route-frac), dtype, parallel (--parallel-mode), ep_dispatch,
/// pass (--bench-pass), impl. `args`, the points' other flags, may not set
/// what an axis sets. Empty string, or why not.
std::string parseSweep(const std::string &spec, const std::vector<std::string> &args,
                       std::vector<SweepAxis> &axes);

/// The command line as given (argv[1..]) without the sweep's own flags
/// (--sweep, --csv, --plot, --json) and their values: what each point gets.
std::vector<std::string> sweepPointArgs(const std::vector<std::string> &args);

struct SweepRequest {
  std::vector<SweepAxis> axes;
  /// Every point's flags (sweepPointArgs), the axes' added per point.
  std::vector<std::string> args;
  std::string jsonFile, csvFile, plotFile;
};

/// The matplotlib format `plotFile`'s extension names (svg, svgz, png, pdf,
/// ps, eps), or "" for any other: checked before the sweep runs.
std::string plotFormat(const std::string &plotFile);

/// Runs the sweep; returns the exit code (0 when every point ran).
int runSweep(const SweepRequest &request);

} // namespace moebench

#endif
