//===- MpiComm.h - one shard's collectives over MPI ------------*- C++ -*-===//
//
// The MPI backend of the sharded runtime: every shard is a process started
// by mpirun, and its rank in MPI_COMM_WORLD is its mesh rank (the row-major
// linear index over the mesh shape, last axis fastest). The collectives have
// ThreadMesh's contracts (ThreadCollectives.h): a group over a list of mesh
// axes is the ranks that agree on every other axis, ordered row-major over
// the listed axes (the first most significant).
//
// Each group is an MPI communicator split once from a private duplicate of
// MPI_COMM_WORLD and cached by its ordered axis list, so a collective costs
// the arrival and one MPI call (two small ones more for the ragged
// all-to-all).
//
// Agreement. Before a collective moves a byte, every rank of its group
// tells the others which collective it is in and of what size (n-1 small
// messages each way, a few microseconds; the "arrival"), and checks theirs:
// ranks in different collectives, or of different sizes (ranks started
// with different --dim), raise the same CollectiveError on every rank
// instead of exchanging mismatched buffers. agreeOnRun() checks once that
// every rank runs the same program with the same options and inputs.
//
// Failure. MPI has no timeouts and no way to tell the peers that a rank
// failed, so:
//   - every collective has a deadline of its start + timeout. Its arrival
//     is polled (non-blocking point-to-point): a rank whose peers have not
//     all arrived by then prints "moec: rank R: <collective> over axes
//     [..] waited N ms for rank(s) P to arrive; aborting the run", naming
//     the missing ranks, and calls MPI_Abort(MPI_COMM_WORLD, 3). The
//     exchange itself is MPI's blocking collective (its non-blocking forms
//     ran an all-reduce of 1 MiB 1.8x slower here), bounded by a watchdog
//     thread that says the rank waited inside the exchange; the mesh's
//     creation and MPI_Finalize are bounded the same way. Time the process
//     itself did not run (SIGSTOP) moves its deadlines: continued, it
//     finishes instead of blaming the peers;
//   - abort(why) prints "moec: rank R failed: why" and calls
//     MPI_Abort(MPI_COMM_WORLD, 2); mpirun then stops every rank. moec and
//     moe-bench route every failure after the mesh exists through it, so a
//     rank that fails alone ends the job at once;
//   - errors every rank of a group sees alike (bad axes, an all-to-all over
//     a rank's capacity, negative counts, byte counts over MPI's int range,
//     disagreeing sizes) throw CollectiveError on every rank of the group
//     and leave the communicators usable.
// A rank that dies is mpirun's business: Open MPI stops the others and
// exits non-zero (tested: moe-mpi-tests --mode=die).
//
// One thread at a time calls an MpiComm's collectives (the shard's thread:
// one shard per process), as MPI requires of collectives on a communicator.
//
// Plain C++17 and MPI's C API; no LLVM. This header does not include
// mpi.h, so that code choosing a backend needs no MPI include path.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_MPICOMM_H
#define MOEC_RUNTIME_MPICOMM_H

#include "runtime/ShardComm.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moec {

class MpiComm : public ShardComm {
public:
  /// This process's shard of a mesh of the given axis sizes. Initializes
  /// MPI (MPI_THREAD_MULTIPLE requested: the watchdog thread may call
  /// MPI_Abort while the shard's thread is inside a collective) unless the
  /// caller already has, and then finalizes it at exit (or at finalize()).
  /// Collective over MPI_COMM_WORLD: every process must call it. Returns
  /// null with `error` set when the mesh is invalid, MPI cannot start, or
  /// the mesh's size is not the number of processes ("the mesh 2x2 needs 4
  /// processes but mpirun started 2"; the caller may add axis names).
  /// `timeout` bounds every collective's wait for its peers.
  static std::unique_ptr<MpiComm> create(std::vector<int64_t> meshShape,
                                         std::chrono::milliseconds timeout, std::string &error);
  /// The number of processes in MPI_COMM_WORLD (initializing MPI as create
  /// does), or -1 with `error` set: for a launcher choosing or checking a
  /// mesh before it makes one.
  static int64_t worldSize(std::string &error);
  /// MPI_Finalize, if create() or worldSize() initialized MPI and it is not
  /// finalized yet; bounded by the watchdog at 1.5x the longest collective
  /// timeout (Open MPI's finalize waits for every process). Also registered
  /// with atexit.
  static void finalize();

  ~MpiComm() override;
  MpiComm(const MpiComm &) = delete;
  MpiComm &operator=(const MpiComm &) = delete;

  const std::vector<int64_t> &meshShape() const override { return shape; }
  int64_t rank() const override { return myRank; }
  const char *backend() const override { return "mpi"; }
  std::chrono::milliseconds timeout() const { return waitLimit; }
  /// Sends this process's stdout to /dev/null unless it is rank 0: a run
  /// under mpirun prints one report, and every rank keeps stderr for its
  /// errors. The caller flushes its own buffered streams first.
  void quietUnlessRankZero() const;

  void allReduceSum(const std::vector<int64_t> &axes, float *data, int64_t count) override;
  void allReduceSumBf16(const std::vector<int64_t> &axes, uint16_t *data, int64_t count) override;
  void allGather(const std::vector<int64_t> &axes, const void *in, int64_t bytes,
                 void *out) override;
  void reduceScatterSum(const std::vector<int64_t> &axes, const float *in, int64_t count,
                        float *out) override;
  void allToAllV(const std::vector<int64_t> &axes, const void *rows, const int32_t *sendCounts,
                 int64_t rowBytes, void *received, int32_t *recvCounts,
                 int64_t capacityRows) override;
  /// Ends the whole run: MPI cannot tell the peers otherwise.
  [[noreturn]] void abort(const std::string &why) override;

  /// Collective over every rank: "" when every rank passes the same
  /// `lines` (its program, options and inputs, described), else the same
  /// message on every rank naming the lowest rank that differs from rank 0
  /// and the first line where. Bounded by the timeout like a collective.
  std::string agreeOnRun(const std::vector<std::string> &lines);

private:
  struct Impl;
  struct Group;
  using Clock = std::chrono::steady_clock;
  /// What a rank announces it is in (the arrival's kind).
  enum class Kind : int64_t {
    AllReduce = 1, AllGather, ReduceScatter, AllToAll, Split, Agree, AllReduceBf16
  };
  /// Tells every rank of `g` that this rank began its next collective (of
  /// `kind` and `size`) and waits for theirs, until `deadline`: then ends
  /// the run naming the ranks that never arrived. Returns each rank's
  /// announcement {sequence, kind, size, 0}, in group order.
  std::vector<std::array<int64_t, 4>> arrive(Group &g, const char *collective,
                                             const std::vector<int64_t> &axes, Kind kind,
                                             int64_t size, Clock::time_point &deadline);
  /// arrive(), then a CollectiveError on every rank of `g` alike when the
  /// ranks are not in the same collective of the same size.
  void agreeOnSize(Group &g, const char *collective, const std::vector<int64_t> &axes,
                   Kind kind, int64_t size, Clock::time_point &deadline);
  /// "moec: rank R: <what>; aborting the run", and MPI_Abort.
  [[noreturn]] void timedOut(const std::string &what) const;
  MpiComm(std::vector<int64_t> shape, int64_t rank, std::chrono::milliseconds timeout,
          std::unique_ptr<Impl> impl);
  /// The communicator of this rank's group over `axes`, split on first use.
  /// Throws CollectiveError (naming `collective`) for bad axes.
  Group &group(const char *collective, const std::vector<int64_t> &axes);
  /// An all-reduce's group, after every member agreed on `kind` and
  /// `count` (refused when negative); `deadline` its wait's end.
  Group &agreeOnAllReduce(const std::vector<int64_t> &axes, Kind kind, int64_t count,
                          Clock::time_point &deadline);
  [[noreturn]] void fail(const char *collective, const std::string &what) const;
  void checkMpi(int rc, const char *collective, const char *call) const;
  /// MPI counts are ints: `n` of `what` must fit one.
  void checkCount(const char *collective, const char *what, int64_t n) const;

  std::vector<int64_t> shape;
  int64_t myRank;
  std::chrono::milliseconds waitLimit;
  std::unique_ptr<Impl> impl;
};

/// The lines MpiComm::agreeOnRun compares for a command line (argv[1..]),
/// one per argument, an option's value beside its option: "argument 9:
/// --dim 64".
std::vector<std::string> commandLineDescription(const std::vector<std::string> &args);

} // namespace moec

#endif // MOEC_RUNTIME_MPICOMM_H
