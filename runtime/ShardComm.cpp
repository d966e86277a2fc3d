//===- ShardComm.cpp - the moert_* C ABI over a bound ShardComm -----------===//

#include "runtime/ShardComm.h"

#include "runtime/Buffer.h"
#include "runtime/MeshShape.h"

#include <cstring>
#include <type_traits>

using namespace moec;

int64_t ShardComm::coordinate(int64_t axis) const {
  return mesh::coordinates(meshShape(), rank())[axis];
}

int64_t ShardComm::groupSize(const std::vector<int64_t> &axes) const {
  return mesh::groupSize(meshShape(), axes);
}

void ThreadMeshComm::allReduceSum(const std::vector<int64_t> &axes, float *data, int64_t count) {
  mesh.allReduceSum(myRank, axes, data, count);
}
void ThreadMeshComm::allReduceSumBf16(const std::vector<int64_t> &axes, uint16_t *data,
                                      int64_t count) {
  mesh.allReduceSumBf16(myRank, axes, data, count);
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
  for (int i = 0;; ++i) {
    int64_t axis = abi::decodeAxis(code, i);
    if (axis == abi::kAxesEnd)
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

/// The elements of an unpacked rank-1 memref (contiguous: the lowering
/// hands over fresh buffers).
template <typename T> struct Flat {
  T *data;
  int64_t size;
};
#define MOERT_FLAT(name) Flat<std::remove_pointer_t<decltype(name)>>{name + name##Offset, name##Size}

/// The f32 values a reduce-scatter reads and writes: the buffer itself for
/// f32, a widened copy for bf16 that `finish` rounds back once. (The
/// all-reduce sums bf16 in place: ShardComm::allReduceSumBf16.)
struct F32Values {
  float *data;
  std::vector<float> wide;
};
F32Values f32Values(Flat<float> f) { return {f.data, {}}; }
F32Values f32Values(Flat<uint16_t> f) {
  F32Values v{nullptr, std::vector<float>(f.size)};
  for (int64_t i = 0; i < f.size; ++i)
    v.wide[i] = bf16ToF32(f.data[i]);
  v.data = v.wide.data();
  return v;
}
/// The same for a buffer the sum only writes.
F32Values f32Output(Flat<float> f) { return {f.data, {}}; }
F32Values f32Output(Flat<uint16_t> f) {
  F32Values v{nullptr, std::vector<float>(f.size)};
  v.data = v.wide.data();
  return v;
}
void finish(const F32Values &, Flat<float>) {}
void finish(const F32Values &v, Flat<uint16_t> f) {
  for (int64_t i = 0; i < f.size; ++i)
    f.data[i] = f32ToBf16(v.data[i]);
}

void allReduceSumIn(ShardComm &comm, const std::vector<int64_t> &axes, Flat<float> data) {
  comm.allReduceSum(axes, data.data, data.size);
}
void allReduceSumIn(ShardComm &comm, const std::vector<int64_t> &axes, Flat<uint16_t> data) {
  comm.allReduceSumBf16(axes, data.data, data.size);
}

template <typename T> void allReduceSum(Flat<T> data, int64_t axesCode, int64_t groupSize) {
  guarded(
      "all_reduce",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "all_reduce");
        allReduceSumIn(comm, axes, data);
        state.counters.bytesSent += 2 * share(data.size * sizeof(T), groupSize);
      },
      [] {});
}

template <typename T>
void reduceScatterSum(Flat<T> in, Flat<T> out, int64_t axesCode, int64_t groupSize) {
  guarded(
      "reduce_scatter",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "reduce_scatter");
        if (in.size != out.size * groupSize)
          throw CollectiveError("reduce_scatter: " + std::to_string(in.size) +
                                " input elements for " + std::to_string(groupSize) +
                                " blocks of " + std::to_string(out.size));
        F32Values from = f32Values(in), to = f32Output(out);
        comm.reduceScatterSum(axes, from.data, out.size, to.data);
        finish(to, out);
        state.counters.bytesSent += share(in.size * sizeof(T), groupSize);
      },
      [&] { std::memset(out.data, 0, out.size * sizeof(T)); });
}

template <typename T> void allGather(Flat<T> in, Flat<T> out, int64_t axesCode, int64_t groupSize) {
  guarded(
      "all_gather",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "all_gather");
        if (out.size != in.size * groupSize)
          throw CollectiveError("all_gather: " + std::to_string(out.size) +
                                " output elements for " + std::to_string(groupSize) +
                                " blocks of " + std::to_string(in.size));
        comm.allGather(axes, in.data, in.size * sizeof(T), out.data);
        state.counters.bytesSent += share(out.size * sizeof(T), groupSize);
      },
      [&] { std::memset(out.data, 0, out.size * sizeof(T)); });
}

template <typename T>
void allToAll(Flat<T> rows, Flat<int32_t> send, Flat<T> received, Flat<int32_t> recv,
              int64_t rowElements, int64_t axesCode, int64_t groupSize) {
  int64_t capacity = rowElements > 0 ? received.size / rowElements : 0;
  guarded(
      "all_to_all",
      [&](ShardComm &comm) {
        auto axes = decodeAxes(comm, axesCode, groupSize, "all_to_all");
        if (send.size != groupSize || recv.size != groupSize)
          throw CollectiveError("all_to_all: " + std::to_string(send.size) +
                                " send counts for a group of " + std::to_string(groupSize));
        // What a rank sends must be rows it holds.
        int64_t held = rowElements > 0 ? rows.size / rowElements : 0, sent = 0, away = 0;
        int64_t me = mesh::groupIndex(comm.meshShape(), comm.rank(), axes);
        for (int64_t p = 0; p < groupSize; ++p) {
          if (send.data[p] < 0)
            throw CollectiveError("all_to_all: rank " + std::to_string(comm.rank()) +
                                  " sends a negative row count (" +
                                  std::to_string(send.data[p]) + ")");
          sent += send.data[p];
          if (p != me)
            away += send.data[p];
        }
        if (sent > held)
          throw CollectiveError("all_to_all: rank " + std::to_string(comm.rank()) + " sends " +
                                std::to_string(sent) + " rows but holds " +
                                std::to_string(held));
        int64_t rowBytes = rowElements * sizeof(T);
        comm.allToAllV(axes, rows.data, send.data, rowBytes, received.data, recv.data, capacity);
        state.counters.bytesSent += away * rowBytes;
      },
      [&] {
        std::memset(recv.data, 0, recv.size * sizeof(int32_t));
        std::memset(received.data, 0, received.size * sizeof(T));
      });
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

// The generated code's entries: unpack each memref, run the typed
// collective. Allocated pointers and strides are not needed (contiguous).
#define MOERT_DEFINE_SUMS(T, suffix)                                                        \
  void moert_all_reduce_sum_##suffix(MOERT_MEMREF(T, data), int64_t axesCode,               \
                                     int64_t groupSize) {                                   \
    allReduceSum(MOERT_FLAT(data), axesCode, groupSize);                                    \
  }                                                                                         \
  void moert_reduce_scatter_sum_##suffix(MOERT_MEMREF(T, in), MOERT_MEMREF(T, out),         \
                                         int64_t axesCode, int64_t groupSize) {             \
    reduceScatterSum(MOERT_FLAT(in), MOERT_FLAT(out), axesCode, groupSize);                 \
  }
#define MOERT_DEFINE_COPIES(T, suffix)                                                      \
  void moert_all_gather_##suffix(MOERT_MEMREF(T, in), MOERT_MEMREF(T, out), int64_t axesCode, \
                                 int64_t groupSize) {                                       \
    allGather(MOERT_FLAT(in), MOERT_FLAT(out), axesCode, groupSize);                        \
  }                                                                                         \
  void moert_all_to_all_##suffix(MOERT_MEMREF(T, rows), MOERT_MEMREF(int32_t, sendCounts),  \
                                 MOERT_MEMREF(T, received),                                 \
                                 MOERT_MEMREF(int32_t, recvCounts), int64_t rowElements,    \
                                 int64_t axesCode, int64_t groupSize) {                     \
    allToAll(MOERT_FLAT(rows), MOERT_FLAT(sendCounts), MOERT_FLAT(received),                \
             MOERT_FLAT(recvCounts), rowElements, axesCode, groupSize);                     \
  }
MOERT_DEFINE_SUMS(float, f32)
MOERT_DEFINE_SUMS(uint16_t, bf16)
MOERT_DEFINE_COPIES(float, f32)
MOERT_DEFINE_COPIES(uint16_t, bf16)
MOERT_DEFINE_COPIES(int32_t, i32)
#undef MOERT_DEFINE_SUMS
#undef MOERT_DEFINE_COPIES

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

void moert_count_dropped_rows(int64_t localRows, int64_t droppedRows) {
  state.counters.localRows += localRows;
  state.counters.droppedRows += droppedRows;
}

} // extern "C"

std::vector<std::pair<const char *, void *>> moec::shardRuntimeSymbols() {
#define MOERT_SYMBOL(function) {#function, reinterpret_cast<void *>(&function)},
  return {MOERT_ENTRY_POINTS(MOERT_SYMBOL)};
#undef MOERT_SYMBOL
}
