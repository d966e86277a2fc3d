//===- Parallel.h - moe-bench's parallel modes: plan, mesh, per-shard work ===//

#ifndef MOEC_TOOLS_MOEBENCH_PARALLEL_H
#define MOEC_TOOLS_MOEBENCH_PARALLEL_H

#include "CostModel.h"

#include "runtime/ShardedRun.h"

#include <string>
#include <vector>

namespace moebench {

/// The mesh --mesh asks for ("data=2,expert=2"; `given` false without one).
struct MeshRequest {
  int64_t data = 1, expert = 1;
  bool given = false;
  int64_t devices() const { return data * expert; }
};
/// Parses --mesh: empty on success, else the reason.
std::string parseMesh(const std::string &text, MeshRequest &mesh);

/// The plan --parallel-mode (none | dp | ep | auto), --ep-dispatch, the
/// mesh and --devices ask for; auto picks the candidate the cost model
/// predicts fastest on `m`. `devices` >= 1. Empty on success, else the
/// reason.
std::string choosePlan(const std::string &mode, const std::string &dispatch,
                       const MeshRequest &mesh, int64_t devices, const Workload &w,
                       const Machine &m, Plan &plan);

/// The plan's mesh as moe-partition's option ("expert=2", "data=2,expert=2":
/// axes of size 1 left out), and the shape of the grid it makes.
std::string meshOption(const Plan &plan);
std::vector<int64_t> meshShape(const Plan &plan);

/// For each rank of `layout`: the real assignment rows of `ids` [T, K]
/// that rank's experts compute (its data shard's tokens, its expert shard's
/// experts), and the tokens its shared expert runs on.
struct ShardWork {
  int64_t rows = 0, sharedTokens = 0;
};
std::vector<ShardWork> shardWork(const Plan &plan, const moec::MeshLayout &layout,
                                 const int32_t *ids, const Workload &w);

/// Bytes per second of a large memcpy on this machine, 1e9: the link of
/// in-process shards (their collectives copy through shared memory).
double measureCopyGBps();

} // namespace moebench

#endif
