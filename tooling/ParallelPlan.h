//===- ParallelPlan.h - how a block runs on a mesh: plan, mesh, per-shard work ===//
//
// The parallel plans moec and moe-bench share: --parallel-mode none, dp,
// ep or auto (the candidate the cost model, tooling/CostModel.h, predicts
// fastest), the mesh it makes for moe-partition, and each shard's share of
// the routed rows (moe-bench's per-shard rates).
//
//===----------------------------------------------------------------------===//

#ifndef MOEC_TOOLING_PARALLELPLAN_H
#define MOEC_TOOLING_PARALLELPLAN_H

#include "tooling/CostModel.h"
#include "tooling/ToolChoices.h"
#include "passes/Choices.h"

#include "runtime/ShardedRun.h"

#include <string>
#include <vector>

namespace moec {

/// The mesh --mesh asks for ("data=2,expert=2"; `given` false without one).
struct MeshRequest {
  int64_t data = 1, expert = 1;
  bool given = false;
  int64_t devices() const { return data * expert; }
};
/// Parses --mesh: empty on success, else the reason.
std::string parseMesh(const std::string &text, MeshRequest &mesh);

/// The plan --parallel-mode, --ep-dispatch, the mesh and --devices ask
/// for; auto picks the candidate the cost model predicts fastest on `m`.
/// `devices` >= 1. Empty on success, else the reason.
std::string choosePlan(ParallelMode mode, mlir::moe::EpDispatch dispatch,
                       const MeshRequest &mesh, int64_t devices, const Workload &w,
                       const Machine &m, Plan &plan);
/// moe-partition's ep-dispatch for the plan (dp runs as compact over a
/// data axis).
mlir::moe::EpDispatch planDispatch(const Plan &plan);
/// The plan's mesh as moe-partition's option ("expert=2", "data=2,expert=2":
/// axes of size 1 left out), and the shape of the grid it makes.
std::string planMesh(const Plan &plan);
std::vector<int64_t> meshShape(const Plan &plan);

/// For each rank of `layout`: the real assignment rows of `ids` [T, K]
/// that rank's experts compute (its data shard's tokens, its expert shard's
/// experts), and the tokens its shared expert runs on.
struct ShardWork {
  int64_t rows = 0, sharedTokens = 0;
};
std::vector<ShardWork> shardWork(const Plan &plan, const moec::MeshLayout &layout,
                                 const int32_t *ids, const Workload &w);

/// The threads each shard's parallel loops get of `threads` (0: every
/// core): in-process shards share them, an MPI rank has them all.
unsigned threadsPerShard(unsigned threads, int64_t shards, Launcher launcher);

/// Bytes per second of a large memcpy on this machine, 1e9: the link of
/// in-process shards (their collectives copy through shared memory).
double measureCopyGBps();

} // namespace moec

#endif
