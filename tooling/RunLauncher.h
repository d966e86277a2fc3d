//===- RunLauncher.h - how a tool's run starts, shares threads and fails -*- C++ -*-===//
//
// What moec run and moe-bench share around a run, written once: the tool's
// failure (its message, and under MPI the end of every rank's run), this
// process as one rank of an MPI run (with Open MPI when the build has it,
// a message saying how to get it otherwise) whose ranks agree on what they
// run, and the generated code's thread count (each shard's share:
// tooling/ParallelPlan.h's threadsPerShard).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_RUNLAUNCHER_H
#define MOEC_TOOLING_RUNLAUNCHER_H

#include "runtime/ShardComm.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moec {

/// The tool whose failures failRun reports ("moec") and the exit code it
/// returns for them. Set once, at the start of main.
void setFailingTool(const char *tool, int exitCode);

/// Reports "<tool>: error: <message>" on stderr and returns the tool's exit
/// code. Once this process is a rank of an MPI run (startMpiRank), the
/// rank aborts the whole run with the message instead (MpiComm::abort
/// names the rank), so that no peer waits for it.
int failRun(const std::string &message);

/// This process as its rank of an MPI run on a mesh of `meshShape`
/// (`meshText` names it in messages): from here on failRun fails the whole
/// run, and stdout is quiet unless this is rank 0 (one report per run).
/// Null and `error` when MPI cannot start, the process count is not the
/// mesh's, or the tool was built without MPI.
struct MpiRankDeleter {
  void operator()(ShardComm *rank) const; ///< and failRun no longer aborts through it
};
using MpiRank = std::unique_ptr<ShardComm, MpiRankDeleter>;
MpiRank startMpiRank(const std::vector<int64_t> &meshShape, const std::string &meshText,
                     std::chrono::milliseconds timeout, std::string &error);

/// Checks that every rank of the MPI run `rank` (what startMpiRank
/// returned) runs what this one runs: the command line `args` (argv[1..])
/// and the `extra` lines (what else must match: a program's text, inputs).
/// Different inputs or options per rank (an appfile) would make
/// collectives of different sizes. "" or why not, on every rank.
std::string agreeOnRun(ShardComm &rank, const std::vector<std::string> &args,
                       const std::vector<std::string> &extra = {});

/// Makes `threads` (> 0) the generated code's thread count: libomp reads
/// OMP_NUM_THREADS when a thread's first parallel loop starts, so each
/// in-process shard thread (one of libomp's roots) gets that many.
void setCodeThreads(unsigned threads);

} // namespace moec

#endif // MOEC_TOOLING_RUNLAUNCHER_H
