//===- ShardComm.cpp - the moert_* C ABI over a bound ShardComm -----------===//

#include "runtime/ShardComm.h"

#include "runtime/Buffer.h"

#include <cstring>

using namespace moec;

int64_t ShardComm::coordinate(int64_t axis) const {
  const std::vector<int64_t> &shape = meshShape();
  int64_t r = rank();
  for (size_t a = shape.size(); a-- > size_t(axis) + 1;)
    r /= shape[a];
  return r % shape[axis];
}

int64_t ShardComm::groupSize(const std::vector<int64_t> &axes) const {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= meshShape()[a];
  return n;
}

void ThreadMeshComm::allReduceSum(const std::vector<int64_t> &axes, float *data, int64_t count) {
  mesh.allReduceSum(myRank, axes, data, count);
}
void ThreadMeshComm::allGather(const std::vector<int64_t> &axes, const void *in, int64_t bytes,
                               void *out) {
  mesh.allGather(myRank, axes, in, bytes, out);
}
void ThreadMeshComm::reduceScatterSum(const std::vector<int64_t> &axes, const float *in,
                                      int64_t count, float *out) {
  mesh.reduceScatterSum(myRank, axes, in, count, out);
}
void ThreadMeshComm::allToAllV(const std::vector<int64_t> &axes, const void *rows,
                               const int32_t *sendCounts, int64_t rowBytes, void *received,
                               int32_t *recvCounts, int64_t capacityRows) {
  mesh.allToAllV(myRank, axes, rows, sendCounts, rowBytes, received, recvCounts, capacityRows);
}
void ThreadMeshComm::abort(const std::string &why) { mesh.abort(myRank, why); }

namespace {
struct ThreadState {
  ShardComm *comm = nullptr;
  std::string failure;
  CommCounters counters;
};
thread_local ThreadState state;

/// The axes of an axesCode, checked against the bound mesh and the group
/// size the program expects.
std::vector<int64_t> decodeAxes(ShardComm &comm, int64_t code, int64_t groupSize,
                                const char *collective) {
  std::vector<int64_t> axes;
  const std::vector<int64_t> &shape = comm.meshShape();
  for (int shift = 0; shift < 64; shift += 4) {
    int64_t axis = (uint64_t(code) >> shift) & 0xF;
    if (axis == 0xF)
      break;
    if (axis >= int64_t(shape.size()))
      throw CollectiveError(std::string(collective) + ": the program uses mesh axis " +
                            std::to_string(axis) + " but the mesh has " +
                            std::to_string(shape.size()) + " axes (" + shapeString(shape) + ")");
    axes.push_back(axis);
  }
  if (comm.groupSize(axes) != groupSize)
    throw CollectiveError(std::string(collective) + ": the program was compiled for groups of " +
                          std::to_string(groupSize) + " shards but the " + comm.backend() +
                          " mesh " + shapeString(shape) + " gives groups of " +
                          std::to_string(comm.groupSize(axes)));
  return axes;
}

/// Runs one collective for the generated code: nothing once the run has
/// failed (outputs stay as `onFailure` leaves them); otherwise `body`, with
/// every error recorded and the peers stopped.
template <typename Body, typename OnFailure>
void guarded(const char *collective, Body body, OnFailure onFailure, bool counted = true) {
  if (!state.comm) {
    if (state.failure.empty())
      state.failure = std::string(collective) +
                      ": the program calls a collective but runs without a mesh (run it "
                      "with --mesh, or compile the single-device block)";
    onFailure();
    return;
  }
  if (!state.failure.empty()) {
    onFailure();
    return;
  }
  try {
    body(*state.comm);
    state.counters.calls += counted;
  } catch (const std::exception &e) {
    state.failure = e.what();
    try {
      state.comm->abort(e.what());
    } catch (...) {
    }
    onFailure();
  }
}

/// Bytes that cross between ranks when `n` ranks reduce or gather N bytes:
/// the ring schedules' volumes (semantics doc section 2), which the
/// in-process backend matches (each rank reads its slice from n-1 peers
/// and, for the all-reduce, writes it back to them).
int64_t share(int64_t bytes, int64_t n) { return n ? bytes * (n - 1) / n : 0; }

std::vector<float> widen(const uint16_t *p, int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = bf16ToF32(p[i]);
  return out;
}
} // namespace

void moec::bindShardComm(ShardComm *comm) {
  state.comm = comm;
  state.failure.clear();
  state.counters = {};
}

std::string moec::takeShardFailure() {
  std::string f = std::move(state.failure);
  state.failure.clear();
  return f;
}

CommCounters moec::shardCommCounters() { return state.counters; }

extern "C" {

void moert_all_reduce_sum_f32(MOERT_MEMREF(float, data), int64_t axesCode, int64_t groupSize) {
  (void)dataAllocated, (void)dataStride;
  float *p = data + dataOffset;
  guarded(
      "all_reduce",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "all_reduce");
        comm.allReduceSum(axes, p, dataSize);
        state.counters.bytesSent += 2 * share(dataSize * 4, groupSize);
      },
      [] {});
}

void moert_all_reduce_sum_bf16(MOERT_MEMREF(uint16_t, data), int64_t axesCode,
                               int64_t groupSize) {
  (void)dataAllocated, (void)dataStride;
  uint16_t *p = data + dataOffset;
  guarded(
      "all_reduce",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "all_reduce");
        // Summed in f32, rounded once (as the single-device combine does).
        std::vector<float> wide = widen(p, dataSize);
        comm.allReduceSum(axes, wide.data(), dataSize);
        for (int64_t i = 0; i < dataSize; ++i)
          p[i] = f32ToBf16(wide[i]);
        state.counters.bytesSent += 2 * share(dataSize * 2, groupSize);
      },
      [] {});
}

} // extern "C"

namespace {
void allGatherBytes(MOERT_MEMREF(char, in), MOERT_MEMREF(char, out), int64_t elementBytes,
                    int64_t axesCode, int64_t groupSize) {
  (void)inAllocated, (void)inStride, (void)outAllocated, (void)outStride;
  const char *src = in + inOffset * elementBytes;
  char *dst = out + outOffset * elementBytes;
  guarded(
      "all_gather",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "all_gather");
        if (outSize != inSize * groupSize)
          throw CollectiveError("all_gather: " + std::to_string(outSize) +
                                " output elements for " + std::to_string(groupSize) +
                                " blocks of " + std::to_string(inSize));
        comm.allGather(axes, src, inSize * elementBytes, dst);
        state.counters.bytesSent += share(outSize * elementBytes, groupSize);
      },
      [&] { std::memset(dst, 0, outSize * elementBytes); });
}

void reduceScatter(const float *in, int64_t inSize, float *out, int64_t outSize,
                   int64_t axesCode, int64_t groupSize, int64_t elementBytes) {
  ShardComm &comm = *state.comm;
  auto axes = decodeAxes(comm, axesCode, groupSize, "reduce_scatter");
  if (inSize != outSize * groupSize)
    throw CollectiveError("reduce_scatter: " + std::to_string(inSize) + " input elements for " +
                          std::to_string(groupSize) + " blocks of " + std::to_string(outSize));
  comm.reduceScatterSum(axes, in, outSize, out);
  state.counters.bytesSent += share(inSize * elementBytes, groupSize);
}

} // namespace

extern "C" {

void moert_reduce_scatter_sum_f32(MOERT_MEMREF(float, in), MOERT_MEMREF(float, out),
                                  int64_t axesCode, int64_t groupSize) {
  (void)inAllocated, (void)inStride, (void)outAllocated, (void)outStride;
  float *dst = out + outOffset;
  guarded(
      "reduce_scatter",
      [&](ShardComm &) {
        reduceScatter(in + inOffset, inSize, dst, outSize, axesCode, groupSize, 4);
      },
      [&] { std::memset(dst, 0, outSize * 4); });
}

void moert_reduce_scatter_sum_bf16(MOERT_MEMREF(uint16_t, in), MOERT_MEMREF(uint16_t, out),
                                   int64_t axesCode, int64_t groupSize) {
  (void)inAllocated, (void)inStride, (void)outAllocated, (void)outStride;
  uint16_t *dst = out + outOffset;
  guarded(
      "reduce_scatter",
      [&](ShardComm &) {
        std::vector<float> wide = widen(in + inOffset, inSize), sum(outSize);
        reduceScatter(wide.data(), inSize, sum.data(), outSize, axesCode, groupSize, 2);
        for (int64_t i = 0; i < outSize; ++i)
          dst[i] = f32ToBf16(sum[i]);
      },
      [&] { std::memset(dst, 0, outSize * 2); });
}

} // extern "C"

namespace {
void allToAllBytes(MOERT_MEMREF(char, rows), MOERT_MEMREF(int32_t, sendCounts),
                   MOERT_MEMREF(char, received), MOERT_MEMREF(int32_t, recvCounts),
                   int64_t rowElements, int64_t elementBytes, int64_t axesCode,
                   int64_t groupSize) {
  (void)rowsAllocated, (void)rowsStride, (void)sendCountsAllocated, (void)sendCountsStride;
  (void)receivedAllocated, (void)receivedStride, (void)recvCountsAllocated;
  (void)recvCountsStride;
  const char *src = rows + rowsOffset * elementBytes;
  char *dst = received + receivedOffset * elementBytes;
  const int32_t *send = sendCounts + sendCountsOffset;
  int32_t *recv = recvCounts + recvCountsOffset;
  int64_t capacity = rowElements > 0 ? receivedSize / rowElements : 0;
  guarded(
      "all_to_all",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "all_to_all");
        if (sendCountsSize != groupSize || recvCountsSize != groupSize)
          throw CollectiveError("all_to_all: " + std::to_string(sendCountsSize) +
                                " send counts for a group of " + std::to_string(groupSize));
        // What a rank sends must be rows it holds.
        int64_t held = rowElements > 0 ? rowsSize / rowElements : 0, sent = 0, away = 0;
        int64_t me = 0;
        for (size_t i = 0; i < axes.size(); ++i)
          me = me * comm.meshShape()[axes[i]] + comm.coordinate(axes[i]);
        for (int64_t p = 0; p < groupSize; ++p) {
          if (send[p] < 0)
            throw CollectiveError("all_to_all: rank " + std::to_string(comm.rank()) +
                                  " sends a negative row count (" + std::to_string(send[p]) +
                                  ")");
          sent += send[p];
          if (p != me)
            away += send[p];
        }
        if (sent > held)
          throw CollectiveError("all_to_all: rank " + std::to_string(comm.rank()) + " sends " +
                                std::to_string(sent) + " rows but holds " +
                                std::to_string(held));
        comm.allToAllV(axes, src, send, rowElements * elementBytes, dst, recv, capacity);
        state.counters.bytesSent += away * rowElements * elementBytes;
      },
      [&] {
        std::memset(recv, 0, groupSize * sizeof(int32_t));
        std::memset(dst, 0, receivedSize * elementBytes);
      });
}

} // namespace

extern "C" {

#define MOERT_FORWARD(T, suffix)                                                            \
  void moert_all_gather_##suffix(MOERT_MEMREF(T, in), MOERT_MEMREF(T, out),                 \
                                 int64_t elementBytes, int64_t axesCode, int64_t groupSize) { \
    allGatherBytes(reinterpret_cast<char *>(inAllocated), reinterpret_cast<char *>(in),      \
                   inOffset, inSize, inStride, reinterpret_cast<char *>(outAllocated),       \
                   reinterpret_cast<char *>(out), outOffset, outSize, outStride,             \
                   elementBytes, axesCode, groupSize);                                      \
  }                                                                                         \
  void moert_all_to_all_##suffix(MOERT_MEMREF(T, rows), MOERT_MEMREF(int32_t, sendCounts),  \
                                 MOERT_MEMREF(T, received),                                 \
                                 MOERT_MEMREF(int32_t, recvCounts), int64_t rowElements,    \
                                 int64_t elementBytes, int64_t axesCode, int64_t groupSize) { \
    allToAllBytes(reinterpret_cast<char *>(rowsAllocated), reinterpret_cast<char *>(rows),   \
                  rowsOffset, rowsSize, rowsStride, sendCountsAllocated, sendCounts,         \
                  sendCountsOffset, sendCountsSize, sendCountsStride,                        \
                  reinterpret_cast<char *>(receivedAllocated),                               \
                  reinterpret_cast<char *>(received), receivedOffset, receivedSize,          \
                  receivedStride, recvCountsAllocated, recvCounts, recvCountsOffset,         \
                  recvCountsSize, recvCountsStride, rowElements, elementBytes, axesCode,     \
                  groupSize);                                                               \
  }
MOERT_FORWARD(float, f32)
MOERT_FORWARD(uint16_t, bf16)
MOERT_FORWARD(int32_t, i32)
#undef MOERT_FORWARD

int64_t moert_mesh_coordinate(int64_t axis, int64_t axisSize, int64_t meshRank) {
  int64_t result = 0;
  guarded(
      "process_multi_index",
      [&](ShardComm &comm) {
        const std::vector<int64_t> &shape = comm.meshShape();
        if (int64_t(shape.size()) != meshRank || axis < 0 || axis >= meshRank ||
            shape[axis] != axisSize)
          throw CollectiveError("the program was compiled for a mesh of " +
                                std::to_string(meshRank) + " axes with " +
                                std::to_string(axisSize) + " shards on axis " +
                                std::to_string(axis) + " but runs on the " + comm.backend() +
                                " mesh " + shapeString(shape));
        result = comm.coordinate(axis);
      },
      [] {}, /*counted=*/false);
  return result;
}

} // extern "C"

std::vector<std::pair<const char *, void *>> moec::shardRuntimeSymbols() {
  return {
      {"moert_all_reduce_sum_f32", reinterpret_cast<void *>(&moert_all_reduce_sum_f32)},
      {"moert_all_reduce_sum_bf16", reinterpret_cast<void *>(&moert_all_reduce_sum_bf16)},
      {"moert_all_gather_f32", reinterpret_cast<void *>(&moert_all_gather_f32)},
      {"moert_all_gather_bf16", reinterpret_cast<void *>(&moert_all_gather_bf16)},
      {"moert_all_gather_i32", reinterpret_cast<void *>(&moert_all_gather_i32)},
      {"moert_reduce_scatter_sum_f32", reinterpret_cast<void *>(&moert_reduce_scatter_sum_f32)},
      {"moert_reduce_scatter_sum_bf16", reinterpret_cast<void *>(&moert_reduce_scatter_sum_bf16)},
      {"moert_all_to_all_f32", reinterpret_cast<void *>(&moert_all_to_all_f32)},
      {"moert_all_to_all_bf16", reinterpret_cast<void *>(&moert_all_to_all_bf16)},
      {"moert_all_to_all_i32", reinterpret_cast<void *>(&moert_all_to_all_i32)},
      {"moert_mesh_coordinate", reinterpret_cast<void *>(&moert_mesh_coordinate)},
  };
}
