//===- ThreadCollectives.h - collectives between threads of one process -===//
//
// The in-process backend of the sharded runtime: every shard of a mesh is a
// thread of this process, and a collective is a rendezvous in shared
// memory. Each rank publishes its buffer, all ranks meet at a barrier, each
// reads what it needs straight from its peers' buffers, and all meet again
// before anyone may reuse a buffer. No copies through a staging area, no
// launcher.
//
// Groups follow the upstream shard dialect's convention: ranks are the
// row-major linear index over the mesh shape (last axis fastest); a
// collective over a set of axes runs within each group of ranks that agree
// on every other axis, ordered by their index over the group's axes.
//
// SPMD: every rank calls the same collectives in the same order (each with
// its own group), so every rendezvous is mesh-wide; a rank that calls a
// different collective, one that fails, or one that never arrives makes
// the others fail with a CollectiveError within the timeout, never hang.
//
// Why by hand: upstream MLIR lowers only all_reduce to MPI (MLIR 22) and has
// nothing for threads of one process or for ragged all-to-all.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_THREADCOLLECTIVES_H
#define MOEC_RUNTIME_THREADCOLLECTIVES_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace moec {

/// What every rank of a failed collective gets: which collective, which
/// rank, and why (a timeout names the ranks that did not arrive).
class CollectiveError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class ThreadMesh {
public:
  /// A mesh of the given axis sizes (each >= 1); `timeout` bounds every
  /// wait for peers.
  ThreadMesh(std::vector<int64_t> shape, std::chrono::milliseconds timeout);

  int64_t size() const { return ranks; }
  const std::vector<int64_t> &shape() const { return meshShape; }
  /// Rank's coordinate on each axis.
  std::vector<int64_t> coordinates(int64_t rank) const;
  /// The ranks of `rank`'s group over `axes` (axis numbers), in group order.
  std::vector<int64_t> group(int64_t rank, const std::vector<int64_t> &axes) const;

  // Buffers: a collective's input and output must not overlap (each rank
  // reads its peers' inputs while the others write their outputs), except
  // allReduceSum, which works in place.

  /// In place: data[i] = sum over the group of data[i], `count` f32 values.
  /// The members' buffers are each either another member's (the same
  /// pointer) or disjoint from every buffer of the mesh's collective: each
  /// member sums its slice of all of them into its own while the others do
  /// theirs. When the collective fails, `data` holds partial sums.
  void allReduceSum(int64_t rank, const std::vector<int64_t> &axes, float *data, int64_t count);
  /// The same for `count` bf16 values (their bits): summed in f32 and
  /// rounded once, as a sum of their f32 widenings would be, in place.
  void allReduceSumBf16(int64_t rank, const std::vector<int64_t> &axes, uint16_t *data,
                        int64_t count);
  /// out = the group's `in` blocks of `bytes` each, concatenated in group
  /// order (out holds group size * bytes).
  void allGather(int64_t rank, const std::vector<int64_t> &axes, const void *in, int64_t bytes,
                 void *out);
  /// in holds group size blocks of `count` f32 values; out = the sum over
  /// the group of block (this rank's group index).
  void reduceScatterSum(int64_t rank, const std::vector<int64_t> &axes, const float *in,
                        int64_t count, float *out);
  /// Ragged all-to-all: `rows` holds sendCounts[p] rows for each group peer
  /// p in order (rowBytes each); received gets, in peer order, the rows each
  /// peer sent to this rank, then zeros up to `capacityRows`;
  /// recvCounts[p] says how many came from peer p. Throws (on every rank)
  /// if a rank would receive more than its capacity.
  void allToAllV(int64_t rank, const std::vector<int64_t> &axes, const void *rows,
                 const int32_t *sendCounts, int64_t rowBytes, void *received,
                 int32_t *recvCounts, int64_t capacityRows);
  /// Every rank waits for the others.
  void barrier(int64_t rank);

  /// Marks the mesh failed (a rank's program raised): every rank waiting
  /// now or arriving later gets a CollectiveError naming `rank` and `why`.
  void abort(int64_t rank, const std::string &why);
  /// The first failure ("rank 2 failed: ..."), empty while none.
  std::string failureReason();

private:
  /// What a rank publishes at a rendezvous.
  struct Slot {
    const char *collective = nullptr;
    const void *in = nullptr;
    void *out = nullptr;
    const int32_t *counts = nullptr;
    int64_t size = 0;
    uint64_t axesMask = 0; // the group's axes, bit a for axis a
  };
  /// Publishes `slot`, waits for every rank, checks they all called the same
  /// collective over the same axes; then `work` (reading the peers' slots),
  /// then the second barrier, which every rank that passed the first one
  /// reaches even when a rank's work failed: no rank returns (and frees its
  /// buffers) while another may still read them. Throws after it if any
  /// rank failed.
  template <typename Work>
  void rendezvous(int64_t rank, const Slot &slot, Work work);
  /// allReduceSum on f32 or bf16 values, `collective` naming it.
  template <typename T>
  void allReduceSumOf(int64_t rank, const std::vector<int64_t> &axes, T *data, int64_t count,
                      const char *collective);
  /// The barrier. `failFast`: a failed mesh releases (throws) at once;
  /// otherwise only the timeout does.
  void wait(int64_t rank, const char *collective, bool failFast);
  void checkRank(int64_t rank) const;
  uint64_t axesMask(const std::vector<int64_t> &axes) const;

  std::vector<int64_t> meshShape;
  int64_t ranks;
  std::chrono::milliseconds timeout;
  std::vector<Slot> slots;

  std::mutex mutex;
  std::condition_variable arrived;
  int64_t waiting = 0;
  uint64_t generation = 0;
  std::vector<uint64_t> arrivals; // the barrier generation each rank reached
  std::string failure;            // set once the mesh has failed
};

} // namespace moec

#endif // MOEC_RUNTIME_THREADCOLLECTIVES_H
