//===- ThreadCollectives.cpp - collectives between threads of one process -===//

#include "runtime/ThreadCollectives.h"

#include "runtime/Bf16.h"
#include "runtime/MeshShape.h"

#include <algorithm>
#include <cstring>

using namespace moec;

ThreadMesh::ThreadMesh(std::vector<int64_t> shape, std::chrono::milliseconds timeout)
    : meshShape(std::move(shape)), timeout(timeout) {
  for (const std::string &why : {mesh::shapeError(meshShape), mesh::timeoutError(timeout)})
    if (!why.empty())
      throw std::invalid_argument(why);
  ranks = mesh::ranks(meshShape);
  slots.resize(ranks);
  arrivals.assign(ranks, 0);
}

std::vector<int64_t> ThreadMesh::coordinates(int64_t rank) const {
  return mesh::coordinates(meshShape, rank);
}

void ThreadMesh::checkRank(int64_t rank) const {
  if (rank < 0 || rank >= ranks)
    throw std::invalid_argument("rank " + std::to_string(rank) + " is not in a mesh of " +
                                std::to_string(ranks));
}

uint64_t ThreadMesh::axesMask(const std::vector<int64_t> &axes) const {
  if (std::string why = mesh::axesError(meshShape, axes); !why.empty())
    throw std::invalid_argument(why);
  uint64_t mask = 0;
  for (int64_t a : axes)
    mask |= uint64_t(1) << a;
  return mask;
}

std::vector<int64_t> ThreadMesh::group(int64_t rank, const std::vector<int64_t> &axes) const {
  checkRank(rank);
  axesMask(axes);
  return mesh::groupMembers(meshShape, rank, axes);
}

void ThreadMesh::wait(int64_t rank, const char *collective, bool failFast) {
  std::unique_lock<std::mutex> lock(mutex);
  if (failFast && !failure.empty())
    throw CollectiveError(failure);
  uint64_t gen = generation;
  arrivals[rank] = gen + 1;
  if (++waiting == ranks) {
    waiting = 0;
    ++generation;
    arrived.notify_all();
    return;
  }
  arrived.wait_for(lock, timeout, [&] { return generation != gen || (failFast && !failure.empty()); });
  if (generation != gen)
    return;
  if (failFast && !failure.empty())
    throw CollectiveError(failure);
  std::string missing;
  for (int64_t r = 0; r < ranks; ++r)
    if (arrivals[r] != gen + 1)
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  std::string why = "rank " + std::to_string(rank) + " waited " + std::to_string(timeout.count()) +
                    " ms in " + collective + " for rank(s) " + missing +
                    ", which did not arrive (hung, crashed, or called a different collective)";
  if (failure.empty())
    failure = why;
  arrived.notify_all();
  throw CollectiveError(why);
}

void ThreadMesh::abort(int64_t rank, const std::string &why) {
  checkRank(rank);
  std::lock_guard<std::mutex> lock(mutex);
  if (failure.empty())
    failure = "rank " + std::to_string(rank) + " failed: " + why;
  arrived.notify_all();
}

std::string ThreadMesh::failureReason() {
  std::lock_guard<std::mutex> lock(mutex);
  return failure;
}

template <typename Work>
void ThreadMesh::rendezvous(int64_t rank, const Slot &slot, Work work) {
  checkRank(rank);
  {
    // A failed mesh: do not publish over a slot a peer may still read.
    std::lock_guard<std::mutex> lock(mutex);
    if (!failure.empty())
      throw CollectiveError(failure);
    slots[rank] = slot;
  }
  wait(rank, slot.collective, /*failFast=*/true);
  std::string error;
  try {
    for (int64_t r = 0; r < ranks; ++r) {
      const Slot &peer = slots[r];
      if (std::strcmp(peer.collective, slot.collective) != 0 || peer.axesMask != slot.axesMask)
        throw CollectiveError("rank " + std::to_string(rank) + " is in " + slot.collective +
                              " over axes mask " + std::to_string(slot.axesMask) + " but rank " +
                              std::to_string(r) + " in " + peer.collective + " over axes mask " +
                              std::to_string(peer.axesMask) + ": the ranks' programs diverged");
    }
    work();
  } catch (const std::exception &e) {
    error = e.what();
    abort(rank, error);
  }
  // Every rank that passed the first barrier meets here, failed or not.
  wait(rank, slot.collective, /*failFast=*/false);
  if (!error.empty())
    throw CollectiveError(error);
  std::lock_guard<std::mutex> lock(mutex);
  if (!failure.empty())
    throw CollectiveError(failure);
}

namespace {
// A sum's values as f32, and back: bf16 is summed in f32 and rounded once.
float widen(float v) { return v; }
float widen(uint16_t v) { return bf16ToF32(v); }
void narrow(const float *sum, int64_t n, float *out) { std::memcpy(out, sum, n * sizeof(float)); }
void narrow(const float *sum, int64_t n, uint16_t *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = f32ToBf16(sum[i]);
}
} // namespace

void ThreadMesh::allReduceSum(int64_t rank, const std::vector<int64_t> &axes, float *data,
                              int64_t count) {
  allReduceSumOf(rank, axes, data, count, "all_reduce");
}

// bf16 in place too: widened into an f32 copy of the whole buffer first, a
// data-parallel bf16 training step's gradient all-reduce allocated, zeroed
// and faulted in 2 GB a rank each call (T 512 top-8), and spent most of
// the step there.
void ThreadMesh::allReduceSumBf16(int64_t rank, const std::vector<int64_t> &axes, uint16_t *data,
                                  int64_t count) {
  allReduceSumOf(rank, axes, data, count, "all_reduce (bf16)");
}

template <typename T>
void ThreadMesh::allReduceSumOf(int64_t rank, const std::vector<int64_t> &axes, T *data,
                                int64_t count, const char *collective) {
  std::vector<int64_t> members = group(rank, axes);
  int64_t n = members.size(), me = mesh::groupIndex(meshShape, rank, axes);
  // Each member sums its slice of the group's buffers into its own buffer
  // (no other member reads or writes that slice of it), then, once every
  // member has summed, copies it into the other members' buffers. In place:
  // a training step's gradient all-reduce is the size of the weights, and a
  // temporary of its slice per shard would cost that much memory again.
  int64_t begin = count * me / n, end = count * (me + 1) / n;
  std::vector<T *> buffers; // the members', kept: a slot may be republished
  rendezvous(rank, Slot{collective, data, data, nullptr, count, axesMask(axes)}, [&] {
    for (int64_t p : members) {
      if (slots[p].size != count)
        throw CollectiveError(std::string(collective) + ": rank " + std::to_string(rank) +
                              " has " + std::to_string(count) + " values but rank " +
                              std::to_string(p) + " has " + std::to_string(slots[p].size));
      buffers.push_back(static_cast<T *>(slots[p].out));
    }
    // By chunks that stay in L1: every member's values are read before the
    // sum overwrites this member's (a peer may share its buffer), and the
    // sum runs in member order from zero on every slice, as on every rank.
    constexpr int64_t kChunk = 1024;
    float sum[kChunk];
    for (int64_t at = begin; at < end; at += kChunk) {
      int64_t size = std::min(kChunk, end - at);
      std::fill(sum, sum + size, 0.0f);
      for (const T *peer : buffers)
        for (int64_t i = 0; i < size; ++i)
          sum[i] += widen(peer[at + i]);
      narrow(sum, size, data + at);
    }
  });
  // Every member has summed its slice (rendezvous returns on all ranks or
  // throws on all): copy this one's into the others' buffers, and wait
  // until all have written.
  if (end > begin)
    for (T *buffer : buffers)
      if (buffer != data)
        std::memcpy(buffer + begin, data + begin, (end - begin) * sizeof(T));
  wait(rank, collective, /*failFast=*/false);
}

void ThreadMesh::allGather(int64_t rank, const std::vector<int64_t> &axes, const void *in,
                           int64_t bytes, void *out) {
  std::vector<int64_t> members = group(rank, axes);
  rendezvous(rank, Slot{"all_gather", in, out, nullptr, bytes, axesMask(axes)}, [&] {
    for (size_t i = 0; i < members.size(); ++i) {
      const Slot &peer = slots[members[i]];
      if (peer.size != bytes)
        throw CollectiveError("all_gather: rank " + std::to_string(rank) + " sends " +
                              std::to_string(bytes) + " bytes but rank " +
                              std::to_string(members[i]) + " " + std::to_string(peer.size));
      if (bytes > 0)
        std::memcpy(static_cast<char *>(out) + i * bytes, peer.in, bytes);
    }
  });
}

void ThreadMesh::reduceScatterSum(int64_t rank, const std::vector<int64_t> &axes, const float *in,
                                  int64_t count, float *out) {
  std::vector<int64_t> members = group(rank, axes);
  int64_t me = mesh::groupIndex(meshShape, rank, axes);
  rendezvous(rank, Slot{"reduce_scatter", in, out, nullptr, count, axesMask(axes)}, [&] {
    std::fill(out, out + count, 0.0f);
    for (int64_t p : members) {
      if (slots[p].size != count)
        throw CollectiveError("reduce_scatter: rank " + std::to_string(rank) + " keeps " +
                              std::to_string(count) + " values but rank " + std::to_string(p) +
                              " " + std::to_string(slots[p].size));
      const float *peer = static_cast<const float *>(slots[p].in) + me * count;
      for (int64_t i = 0; i < count; ++i)
        out[i] += peer[i];
    }
  });
}

void ThreadMesh::allToAllV(int64_t rank, const std::vector<int64_t> &axes, const void *rows,
                           const int32_t *sendCounts, int64_t rowBytes, void *received,
                           int32_t *recvCounts, int64_t capacityRows) {
  std::vector<int64_t> members = group(rank, axes);
  int64_t me = mesh::groupIndex(meshShape, rank, axes);
  rendezvous(rank, Slot{"all_to_all", rows, received, sendCounts, rowBytes, axesMask(axes)}, [&] {
    int64_t total = 0;
    for (int64_t p : members) {
      if (slots[p].size != rowBytes)
        throw CollectiveError("all_to_all: rank " + std::to_string(rank) + " has rows of " +
                              std::to_string(rowBytes) + " bytes but rank " + std::to_string(p) +
                              " of " + std::to_string(slots[p].size));
      // Every count a peer sends, not only the ones to this rank: they
      // place the rows this rank reads.
      for (size_t q = 0; q < members.size(); ++q)
        if (slots[p].counts[q] < 0)
          throw CollectiveError("all_to_all: rank " + std::to_string(p) +
                                " sends a negative row count (" +
                                std::to_string(slots[p].counts[q]) + ")");
      total += slots[p].counts[me];
    }
    if (total > capacityRows)
      throw CollectiveError("all_to_all: rank " + std::to_string(rank) + " receives " +
                            std::to_string(total) + " rows but has room for " +
                            std::to_string(capacityRows));
    char *dst = static_cast<char *>(received);
    for (size_t i = 0; i < members.size(); ++i) {
      const Slot &peer = slots[members[i]];
      int64_t offset = 0; // rows the peer sends to the members before this one
      for (int64_t q = 0; q < me; ++q)
        offset += peer.counts[q];
      int32_t n = peer.counts[me];
      if (n > 0)
        std::memcpy(dst, static_cast<const char *>(peer.in) + offset * rowBytes, n * rowBytes);
      dst += n * rowBytes;
      recvCounts[i] = n;
    }
    std::memset(dst, 0, (capacityRows - total) * rowBytes);
  });
}

void ThreadMesh::barrier(int64_t rank) {
  rendezvous(rank, Slot{"barrier", nullptr, nullptr, nullptr, 0, 0}, [] {});
}
