//===- ShardComm.h - one shard's collectives, whatever carries them -*- C++ -*-===//
//
// The per-shard program moec compiles calls its collectives through a small
// C ABI (the moert_* functions of runtime/RuntimeAbi.h). Those calls go to the ShardComm bound
// to the calling thread: a rank of an in-process ThreadMesh (every shard a
// thread of one process) or an MPI process (runtime/MpiComm.h, under
// mpirun). The generated code is the same for both.
//
// Failure: an exception cannot unwind through generated frames, so the C
// entry points catch every error, record the first one for the host
// (takeShardFailure), abort the mesh so that the peers stop too, and
// return zeros. Every later collective of the run returns at once, so the
// rest of the program runs to its end on zeros and the host reports the
// error instead of a result.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_SHARDCOMM_H
#define MOEC_RUNTIME_SHARDCOMM_H

#include "runtime/RuntimeAbi.h"
#include "runtime/ThreadCollectives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moec {

class ShardComm {
public:
  virtual ~ShardComm() = default;

  virtual const std::vector<int64_t> &meshShape() const = 0;
  /// The row-major linear index over the mesh (the shard dialect's).
  virtual int64_t rank() const = 0;
  /// "in-process" or "mpi", for messages and reports.
  virtual const char *backend() const = 0;

  // The collectives, with ThreadMesh's contracts (ThreadCollectives.h):
  // groups over `axes` in row-major order, input and output not
  // overlapping except the all-reduce's. Errors throw CollectiveError.
  virtual void allReduceSum(const std::vector<int64_t> &axes, float *data, int64_t count) = 0;
  /// `count` bf16 values (their bits), summed in f32 and rounded once.
  virtual void allReduceSumBf16(const std::vector<int64_t> &axes, uint16_t *data,
                                int64_t count) = 0;
  virtual void allGather(const std::vector<int64_t> &axes, const void *in, int64_t bytes,
                         void *out) = 0;
  virtual void reduceScatterSum(const std::vector<int64_t> &axes, const float *in,
                                int64_t count, float *out) = 0;
  virtual void allToAllV(const std::vector<int64_t> &axes, const void *rows,
                         const int32_t *sendCounts, int64_t rowBytes, void *received,
                         int32_t *recvCounts, int64_t capacityRows) = 0;
  /// Stops the peers: their current and later collectives fail naming
  /// this rank and `why`.
  virtual void abort(const std::string &why) = 0;

  /// This rank's index along mesh axis `axis`.
  int64_t coordinate(int64_t axis) const;
  /// How many ranks a group over `axes` has.
  int64_t groupSize(const std::vector<int64_t> &axes) const;
};

/// A rank of an in-process mesh.
class ThreadMeshComm : public ShardComm {
public:
  ThreadMeshComm(ThreadMesh &mesh, int64_t rank) : mesh(mesh), myRank(rank) {}
  const std::vector<int64_t> &meshShape() const override { return mesh.shape(); }
  int64_t rank() const override { return myRank; }
  const char *backend() const override { return "in-process"; }
  void allReduceSum(const std::vector<int64_t> &axes, float *data, int64_t count) override;
  void allReduceSumBf16(const std::vector<int64_t> &axes, uint16_t *data, int64_t count) override;
  void allGather(const std::vector<int64_t> &axes, const void *in, int64_t bytes,
                 void *out) override;
  void reduceScatterSum(const std::vector<int64_t> &axes, const float *in, int64_t count,
                        float *out) override;
  void allToAllV(const std::vector<int64_t> &axes, const void *rows, const int32_t *sendCounts,
                 int64_t rowBytes, void *received, int32_t *recvCounts,
                 int64_t capacityRows) override;
  void abort(const std::string &why) override;

private:
  ThreadMesh &mesh;
  int64_t myRank;
};

/// Binds `comm` to the calling thread for the moert_* calls the generated
/// code makes from it (nullptr unbinds), and clears the thread's failure.
void bindShardComm(ShardComm *comm);
/// The first error a moert_* call on this thread caught since the bind
/// (empty when none); clears it.
std::string takeShardFailure();

/// Communication this thread's moert_* calls made since the bind: calls,
/// and bytes that crossed to or from other ranks (all-reduce 2(D-1)/D N,
/// all-gather and reduce-scatter (D-1)/D N with N the gathered or reduced
/// bytes, all-to-all the rows this rank sent to others).
/// With a capacity (compact EP's capacity factor), also the assignment
/// rows routed to this shard's experts and those dropped past the capacity.
struct CommCounters {
  int64_t calls = 0;
  int64_t bytesSent = 0;
  int64_t localRows = 0;
  int64_t droppedRows = 0;
};
CommCounters shardCommCounters();

/// Name -> address of every moert_* entry point, for a JIT that resolves the
/// generated code's external calls (the ExecutionEngine's symbol map).
std::vector<std::pair<const char *, void *>> shardRuntimeSymbols();

} // namespace moec

#endif // MOEC_RUNTIME_SHARDCOMM_H
