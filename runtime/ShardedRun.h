//===- ShardedRun.h - running a per-shard program on a mesh -----*- C++ -*-===//
//
// The host side of a sharded run: where each tensor of a per-shard function
// lies on the mesh (moe-partition's `moe.split`), cutting full inputs into
// each rank's block and assembling full results from the ranks' blocks, and
// running one body per rank as threads of this process, each bound to its
// rank of an in-process mesh.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_SHARDEDRUN_H
#define MOEC_RUNTIME_SHARDEDRUN_H

#include "runtime/Signature.h"
#include "runtime/ShardComm.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace moec {

/// For each dimension of a tensor, the mesh axes (numbers) that split it,
/// the first most significant; none: the dimension is whole on every rank.
using TensorSplit = std::vector<std::vector<int64_t>>;

struct MeshLayout {
  std::vector<std::string> axisNames;
  std::vector<int64_t> shape;
  /// In argument and result order.
  std::vector<TensorSplit> inputs, results;

  int64_t ranks() const;
  /// "data=2,expert=2".
  std::string str() const;
  /// How many blocks dimension `dim` of a tensor split by `split` is cut into.
  int64_t parts(const TensorSplit &split, size_t dim) const;
  /// The full tensors' signature: each split dimension times its parts.
  FunctionSignature fullSignature(const FunctionSignature &perShard) const;
};

/// Rank `rank`'s block of `full`. Fails when a split dimension does not
/// divide evenly. A block that is one run of full's memory (full itself
/// when replicated, a split of the leading dimension, or of a later one
/// when every dimension before it is 1) shares it (Buffer::sharing): read
/// it only; other blocks are copies.
std::optional<Buffer> shardOf(const Buffer &full, const TensorSplit &split,
                              const MeshLayout &mesh, int64_t rank, std::string &error);
/// Whether shardOf's blocks of a tensor of `fullShape` share its memory
/// (no copy to count), the same for every rank.
bool blockSharesMemory(const std::vector<int64_t> &fullShape, const TensorSplit &split,
                       const MeshLayout &mesh);

/// The full tensor from every rank's block (`blocks[rank]`); ranks holding
/// the same block (replicas) give it once, the lowest rank's.
std::optional<Buffer> assemble(const std::vector<const Buffer *> &blocks,
                               const TensorSplit &split, const MeshLayout &mesh,
                               std::string &error);

/// Rank `rank`'s blocks of every full input, in argument order.
std::optional<std::vector<Buffer>> shardInputs(const std::vector<Buffer> &full,
                                               const MeshLayout &mesh, int64_t rank,
                                               std::string &error);

/// The blocks of every full input for the ranks this process runs: all
/// of them in-process (`mpi` null), its own under MPI (`mpi`'s rank).
std::optional<std::vector<std::vector<Buffer>>>
localShardInputs(const std::vector<Buffer> &full, const MeshLayout &mesh, const ShardComm *mpi,
                 std::string &error);

/// The full results from every rank's (`blocks[rank]`), in result order.
std::optional<std::vector<Buffer>> assembleResults(const std::vector<std::vector<Buffer>> &blocks,
                                                   const MeshLayout &mesh, std::string &error);

/// Every rank's `mine` on every rank (`blocks[rank]`, sized to the mesh),
/// through `comm` (an all-gather over all axes): how an MPI run brings the
/// shards' results together. Fails (no exception) with the error.
bool gatherBlocks(ShardComm &comm, const std::vector<Buffer> &mine,
                  std::vector<std::vector<Buffer>> &blocks, std::string &error);

/// What one rank measured of one call: its wall time and its counters.
struct RankStats {
  double seconds = 0;
  CommCounters comm;
};

/// Every rank's `mine` on every rank (`all[rank]`), through `comm`: how an
/// MPI run learns its peers' times and traffic. Fails (no exception).
bool gatherRankStats(ShardComm &comm, const RankStats &mine, std::vector<RankStats> &all,
                     std::string &error);

/// Runs `body(rank)` on one thread per rank of an in-process mesh of
/// `shape`, each thread bound to its rank (bindShardComm) for the generated
/// code's collectives. A body that returns false, or a collective that
/// failed, aborts the mesh so that the other ranks stop too. Returns false
/// with the first failure (the rank that failed first, not the peers it
/// stopped) in `error`.
bool runInProcess(const std::vector<int64_t> &shape, std::chrono::milliseconds timeout,
                  const std::function<bool(int64_t rank, std::string &error)> &body,
                  std::string &error);

} // namespace moec

#endif // MOEC_RUNTIME_SHARDEDRUN_H
