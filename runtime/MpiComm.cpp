//===- MpiComm.cpp - one shard's collectives over MPI ---------------------===//

#include "runtime/MpiComm.h"

#include "runtime/Buffer.h"
#include "runtime/MeshShape.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <unistd.h>

using namespace moec;
using Clock = std::chrono::steady_clock;

namespace {

std::string axesString(const std::vector<int64_t> &axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i)
    s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "]";
}

/// Set once this process is ending the run (abort or the watchdog): an
/// MPI_Abort that ran atexit handlers must not finalize (which would wait
/// for the watchdog's lock, held by the aborting watchdog).
std::atomic<bool> aborting{false};

bool mpiLive() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

/// Bounds the waits MPI cannot bound: each collective registers a deadline
/// while it runs; one that passes it ends the run. One thread per process,
/// started on first use and never joined: it sleeps until the earliest
/// deadline (or until something is armed), so a run of collectives that
/// each finish in time costs a mutex and no wake-up per call.
class Watchdog {
public:
  static Watchdog &get() {
    // Never destroyed: the detached thread may still wait on the mutex
    // while static destructors run at exit.
    static Watchdog *instance = new Watchdog();
    return *instance;
  }

  /// `axes` may be null (not a group collective); it must outlive the
  /// entry (the collective's own argument does).
  uint64_t arm(int64_t rank, const char *what, const std::vector<int64_t> *axes,
               std::chrono::milliseconds timeout) {
    std::lock_guard<std::mutex> lock(mutex);
    Entry e{++lastId, Clock::now() + timeout, rank, what, axes, timeout};
    entries.push_back(e);
    // Only an earlier deadline than the one the thread sleeps to needs it.
    if (e.deadline < sleepingUntil)
      wake.notify_one();
    return e.id;
  }

  void disarm(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].id == id) {
        entries.erase(entries.begin() + i);
        return;
      }
  }

private:
  struct Entry {
    uint64_t id;
    Clock::time_point deadline;
    int64_t rank;
    const char *what;
    const std::vector<int64_t> *axes;
    std::chrono::milliseconds timeout;
  };

  Watchdog() { std::thread([this] { loop(); }).detach(); }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (entries.empty()) {
        sleepingUntil = Clock::time_point::max();
        wake.wait(lock);
        continue;
      }
      const Entry *first = &entries[0];
      for (const Entry &e : entries)
        if (e.deadline < first->deadline)
          first = &e;
      if (Clock::now() >= first->deadline)
        fire(*first); // does not return
      sleepingUntil = first->deadline;
      wake.wait_until(lock, sleepingUntil);
    }
  }

  /// Called with the mutex held, so the collective cannot disarm (and free
  /// the axes) while the message is written.
  [[noreturn]] static void fire(const Entry &e) {
    aborting = true;
    std::string what = e.what;
    if (e.axes)
      what += " over axes " + axesString(*e.axes);
    std::fprintf(stderr, "moec: rank %lld: %s waited %lld ms for its peers; aborting the run\n",
                 static_cast<long long>(e.rank), what.c_str(),
                 static_cast<long long>(e.timeout.count()));
    std::fflush(stderr);
    if (mpiLive())
      MPI_Abort(MPI_COMM_WORLD, 3);
    std::_Exit(3);
  }

  std::mutex mutex;
  std::condition_variable wake;
  std::vector<Entry> entries;
  uint64_t lastId = 0;
  Clock::time_point sleepingUntil = Clock::time_point::max();
};

/// Arms the watchdog for the current scope.
class Armed {
public:
  Armed(int64_t rank, const char *what, const std::vector<int64_t> *axes,
        std::chrono::milliseconds timeout)
      : id(Watchdog::get().arm(rank, what, axes, timeout)) {}
  ~Armed() { Watchdog::get().disarm(id); }
  Armed(const Armed &) = delete;
  Armed &operator=(const Armed &) = delete;

private:
  uint64_t id;
};

// What this process did to MPI, for finalize().
std::mutex processMutex;
bool weInitialized = false;
int worldRankAtInit = -1;
// The longest collective timeout asked for: finalize waits for every
// process like a collective does.
std::chrono::milliseconds finalizeTimeout{0};

void finalizeAtExit() { MpiComm::finalize(); }

std::string mpiErrorString(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(rc);
  return std::string(text, length);
}

/// Starts MPI unless it runs already; false with `error` set if it cannot.
bool startMpi(std::string &error) {
  std::lock_guard<std::mutex> lock(processMutex);
  int initialized = 0, finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    error = "MPI was already finalized in this process";
    return false;
  }
  MPI_Initialized(&initialized);
  if (!initialized) {
    // MULTIPLE: the watchdog thread calls MPI_Abort while the shard's thread
    // may be inside a collective. Open MPI 4 provides it; with less, that
    // abort is still what Open MPI does on its own errors, so go on.
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) {
      error = "MPI_Init_thread failed: " + mpiErrorString(rc);
      return false;
    }
    weInitialized = true;
    std::atexit(finalizeAtExit);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRankAtInit);
  return true;
}

} // namespace

struct MpiComm::Group {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int64_t> members; // mesh ranks, in group order
  int64_t index = 0;            // this rank's place in members
};

struct MpiComm::Impl {
  /// A private duplicate of MPI_COMM_WORLD: the groups are split from it,
  /// so their traffic never matches a program's own messages on the world,
  /// and its error handler (MPI_ERRORS_RETURN, inherited by the splits)
  /// turns MPI's errors into CollectiveErrors instead of a silent abort.
  MPI_Comm world = MPI_COMM_NULL;
  /// Keyed by the ordered axis list: [0, 1] and [1, 0] are the same ranks
  /// in different orders, so different communicators.
  std::map<std::vector<int64_t>, std::unique_ptr<Group>> groups;
};

int64_t MpiComm::worldSize(std::string &error) {
  if (!startMpi(error))
    return -1;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

std::unique_ptr<MpiComm> MpiComm::create(std::vector<int64_t> meshShape,
                                         std::chrono::milliseconds timeout,
                                         std::string &error) {
  for (const std::string &why : {mesh::shapeError(meshShape), mesh::timeoutError(timeout)})
    if (!why.empty()) {
      error = why;
      return nullptr;
    }
  // MPI numbers its processes with ints.
  int64_t ranks = 1;
  for (int64_t s : meshShape) {
    if (ranks > INT_MAX / s) {
      error = "the mesh " + shapeString(meshShape) + " has more shards than MPI can number";
      return nullptr;
    }
    ranks *= s;
  }
  int64_t size = worldSize(error);
  if (size < 0)
    return nullptr;
  if (ranks != size) {
    error = "the mesh " + shapeString(meshShape) + " needs " + std::to_string(ranks) +
            " processes but mpirun started " + std::to_string(size);
    return nullptr;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    std::lock_guard<std::mutex> lock(processMutex);
    finalizeTimeout = std::max(finalizeTimeout, timeout);
  }
  auto impl = std::make_unique<Impl>();
  {
    // Collective over the world: a process that never creates its mesh
    // must not hang the others.
    Armed armed(rank, "creating the mesh (MPI_Comm_dup)", nullptr, timeout);
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &impl->world);
    if (rc != MPI_SUCCESS) {
      error = "MPI_Comm_dup failed: " + mpiErrorString(rc);
      return nullptr;
    }
  }
  MPI_Comm_set_errhandler(impl->world, MPI_ERRORS_RETURN);
  return std::unique_ptr<MpiComm>(new MpiComm(std::move(meshShape), rank, timeout,
                                              std::move(impl)));
}

MpiComm::MpiComm(std::vector<int64_t> shape, int64_t rank, std::chrono::milliseconds timeout,
                 std::unique_ptr<Impl> impl)
    : shape(std::move(shape)), myRank(rank), waitLimit(timeout), impl(std::move(impl)) {
  Watchdog::get(); // start the thread now, not inside the first collective
}

MpiComm::~MpiComm() {
  // After MPI_Finalize the handles are gone with it. MPI_Comm_free does not
  // wait for the peers in Open MPI, so a rank leaving early cannot hang here.
  if (!mpiLive())
    return;
  for (auto &entry : impl->groups)
    MPI_Comm_free(&entry.second->comm);
  MPI_Comm_free(&impl->world);
}

void MpiComm::finalize() {
  std::lock_guard<std::mutex> lock(processMutex);
  if (!weInitialized || aborting || !mpiLive())
    return;
  std::chrono::milliseconds limit =
      finalizeTimeout.count() > 0 ? finalizeTimeout : std::chrono::milliseconds(60000);
  Armed armed(worldRankAtInit, "MPI_Finalize", nullptr, limit);
  MPI_Finalize();
}

void MpiComm::fail(const char *collective, const std::string &what) const {
  throw CollectiveError(std::string(collective) + ": rank " + std::to_string(myRank) + " " +
                        what);
}

void MpiComm::checkCount(const char *collective, const char *what, int64_t n) const {
  if (n < 0 || n > INT_MAX)
    fail(collective, "has " + std::to_string(n) + " " + what +
                         ", outside what MPI's int counts allow (0 to " +
                         std::to_string(INT_MAX) + ")");
}

void MpiComm::checkMpi(int rc, const char *collective, const char *call) const {
  if (rc != MPI_SUCCESS)
    fail(collective, "got an error from " + std::string(call) + ": " + mpiErrorString(rc));
}

MpiComm::Group &MpiComm::group(const char *collective, const std::vector<int64_t> &axes) {
  if (std::string why = mesh::axesError(shape, axes); !why.empty())
    fail(collective, why);
  auto found = impl->groups.find(axes);
  if (found != impl->groups.end())
    return *found->second;
  // The ranks agreeing on every axis not in the group share a color (their
  // linear index over those axes); the key orders them as the group does.
  // Every rank splits the same axis list at the same collective, so the
  // split is collective as MPI requires (the watchdog is already armed).
  uint64_t inGroup = 0;
  for (int64_t a : axes)
    inGroup |= uint64_t(1) << a;
  int64_t color = 0;
  for (size_t a = 0; a < shape.size(); ++a)
    if (!(inGroup & (uint64_t(1) << a)))
      color = color * shape[a] + coordinate(int64_t(a));
  auto g = std::make_unique<Group>();
  g->members = mesh::groupMembers(shape, myRank, axes);
  g->index = mesh::groupIndex(shape, myRank, axes);
  checkMpi(MPI_Comm_split(impl->world, int(color), int(g->index), &g->comm), collective,
           "MPI_Comm_split");
  int size = 0, rank = 0;
  MPI_Comm_size(g->comm, &size);
  MPI_Comm_rank(g->comm, &rank);
  if (size != int64_t(g->members.size()) || rank != g->index) {
    MPI_Comm_free(&g->comm);
    fail(collective, "split a group of " + std::to_string(size) + " ranks (index " +
                         std::to_string(rank) + ") over axes " + axesString(axes) +
                         " where the mesh gives " + std::to_string(g->members.size()) +
                         " (index " + std::to_string(g->index) + ")");
  }
  Group &result = *g;
  impl->groups.emplace(axes, std::move(g));
  return result;
}

void MpiComm::allReduceSum(const std::vector<int64_t> &axes, float *data, int64_t count) {
  if (count < 0)
    fail("all_reduce", "reduces a negative number of values (" + std::to_string(count) + ")");
  Armed armed(myRank, "all_reduce", &axes, waitLimit);
  Group &g = group("all_reduce", axes);
  // MPI counts are ints: longer buffers go in pieces (the same on every
  // rank, as the counts are).
  constexpr int64_t kPiece = int64_t(1) << 30;
  int64_t done = 0;
  do {
    int n = int(std::min(count - done, kPiece));
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, data + done, n, MPI_FLOAT, MPI_SUM, g.comm),
             "all_reduce", "MPI_Allreduce");
    done += n;
  } while (done < count);
}

void MpiComm::allGather(const std::vector<int64_t> &axes, const void *in, int64_t bytes,
                        void *out) {
  checkCount("all_gather", "bytes sent", bytes);
  Armed armed(myRank, "all_gather", &axes, waitLimit);
  Group &g = group("all_gather", axes);
  checkMpi(MPI_Allgather(in, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE, g.comm),
           "all_gather", "MPI_Allgather");
}

void MpiComm::reduceScatterSum(const std::vector<int64_t> &axes, const float *in, int64_t count,
                               float *out) {
  checkCount("reduce_scatter", "values kept", count);
  Armed armed(myRank, "reduce_scatter", &axes, waitLimit);
  Group &g = group("reduce_scatter", axes);
  checkMpi(MPI_Reduce_scatter_block(in, out, int(count), MPI_FLOAT, MPI_SUM, g.comm),
           "reduce_scatter", "MPI_Reduce_scatter_block");
}

void MpiComm::allToAllV(const std::vector<int64_t> &axes, const void *rows,
                        const int32_t *sendCounts, int64_t rowBytes, void *received,
                        int32_t *recvCounts, int64_t capacityRows) {
  Armed armed(myRank, "all_to_all", &axes, waitLimit);
  Group &g = group("all_to_all", axes);
  const int64_t n = int64_t(g.members.size());
  std::vector<int> sendRows(sendCounts, sendCounts + n), recvRows(n);
  checkMpi(MPI_Alltoall(sendRows.data(), 1, MPI_INT, recvRows.data(), 1, MPI_INT, g.comm),
           "all_to_all", "MPI_Alltoall");

  // What this rank alone can see wrong. Counts are checked before any byte
  // moves; the rows' sizes are agreed below.
  std::string problem;
  auto complain = [&](std::string what) {
    if (problem.empty())
      problem = "all_to_all: " + std::move(what);
  };
  const std::string me = "rank " + std::to_string(myRank);
  if (rowBytes < 0)
    complain(me + " has rows of " + std::to_string(rowBytes) + " bytes");
  if (capacityRows < 0)
    complain(me + " has room for " + std::to_string(capacityRows) + " rows");
  for (int64_t p = 0; p < n; ++p)
    if (sendRows[p] < 0)
      complain(me + " sends a negative row count (" + std::to_string(sendRows[p]) + ")");
  int64_t total = 0;
  for (int64_t p = 0; p < n; ++p) {
    if (recvRows[p] < 0)
      complain("rank " + std::to_string(g.members[p]) + " sends a negative row count (" +
               std::to_string(recvRows[p]) + ")");
    total += recvRows[p];
  }
  if (problem.empty() && total > capacityRows)
    complain(me + " receives " + std::to_string(total) + " rows but has room for " +
             std::to_string(capacityRows));
  // MPI_Alltoallv takes int counts and displacements, here in bytes.
  std::vector<int> sendBytes(n), sendAt(n), recvBytes(n), recvAt(n);
  auto toBytes = [&](const std::vector<int> &rowCounts, std::vector<int> &bytes,
                     std::vector<int> &at, const char *verb) {
    int64_t offset = 0;
    for (int64_t p = 0; p < n && problem.empty(); ++p) {
      int64_t b = int64_t(rowCounts[p]) * rowBytes;
      if (b > INT_MAX || offset + b > INT_MAX) {
        complain(me + " " + verb + " " + std::to_string(offset + b) + " bytes (" +
                 std::to_string(rowBytes) + " per row) up to rank " +
                 std::to_string(g.members[p]) + ", more than MPI's int counts allow (" +
                 std::to_string(INT_MAX) + ")");
        return;
      }
      bytes[p] = int(b);
      at[p] = int(offset);
      offset += b;
    }
  };
  if (problem.empty()) {
    toBytes(sendRows, sendBytes, sendAt, "sends");
    toBytes(recvRows, recvBytes, recvAt, "receives");
  }

  // Agree: the lowest failing rank of the group (n when none) and the
  // smallest and largest row size, in one small all-reduce, so that every
  // rank raises the same error and none starts the exchange alone.
  int64_t agreed[3] = {problem.empty() ? n : g.index, rowBytes, -rowBytes};
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, agreed, 3, MPI_INT64_T, MPI_MIN, g.comm), "all_to_all",
           "MPI_Allreduce");
  if (agreed[0] < n) {
    char message[1024] = {};
    if (agreed[0] == g.index)
      std::snprintf(message, sizeof message, "%s", problem.c_str());
    checkMpi(MPI_Bcast(message, int(sizeof message), MPI_CHAR, int(agreed[0]), g.comm),
             "all_to_all", "MPI_Bcast");
    throw CollectiveError(message);
  }
  if (agreed[1] != -agreed[2])
    fail("all_to_all", "has rows of " + std::to_string(rowBytes) +
                           " bytes but its group's rows range from " +
                           std::to_string(agreed[1]) + " to " + std::to_string(-agreed[2]) +
                           " bytes");

  checkMpi(MPI_Alltoallv(rows, sendBytes.data(), sendAt.data(), MPI_BYTE, received,
                         recvBytes.data(), recvAt.data(), MPI_BYTE, g.comm),
           "all_to_all", "MPI_Alltoallv");
  std::memset(static_cast<char *>(received) + total * rowBytes, 0,
              size_t((capacityRows - total) * rowBytes));
  for (int64_t p = 0; p < n; ++p)
    recvCounts[p] = recvRows[p];
}

void MpiComm::abort(const std::string &why) {
  aborting = true;
  std::fprintf(stderr, "moec: rank %lld failed: %s\n", static_cast<long long>(myRank),
               why.c_str());
  std::fflush(stderr);
  if (mpiLive())
    MPI_Abort(MPI_COMM_WORLD, 2);
  std::_Exit(2);
}

void MpiComm::quietUnlessRankZero() const {
  if (myRank == 0)
    return;
  std::fflush(stdout);
  if (FILE *null = std::fopen("/dev/null", "w")) {
    dup2(fileno(null), STDOUT_FILENO);
    std::fclose(null);
  }
}
