//===- MpiComm.cpp - one shard's collectives over MPI ---------------------===//

#include "runtime/MpiComm.h"

#include "runtime/Buffer.h"
#include "runtime/MeshShape.h"

#include <mpi.h>

#include <algorithm>
#include <array>
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

/// Ends the whole run: `line` on stderr, then MPI_Abort (mpirun stops
/// every rank) with `status`, or _Exit where MPI is not running.
[[noreturn]] void endRun(int status, const std::string &line) {
  aborting = true;
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  if (mpiLive())
    MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

/// A gap this long between two looks at the clock by a waiting loop (which
/// looks every millisecond or 100) means the process did not run meanwhile
/// (SIGSTOP, a suspended machine): the time is not the peers' to answer for.
constexpr std::chrono::milliseconds kStoppedGap{250};

/// Where an exchange waits once every rank of its group has arrived.
constexpr const char *kInsideExchange =
    "inside the exchange, after every rank of its group had arrived (a peer stopped or died "
    "in it)";

/// What is left of a collective's time at its exchange (its arrival may
/// have moved the deadline), at least a millisecond.
std::chrono::milliseconds remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}


/// Bounds the blocking MPI calls (the exchanges, which MPI's tuned blocking
/// collectives run faster than their non-blocking forms, and the mesh's
/// creation and MPI_Finalize): each registers a deadline while it runs; one
/// that passes it ends the run. One thread per process, started on first
/// use and never joined: it sleeps until the earliest deadline, waking
/// every 100 ms meanwhile to notice time the process did not run (SIGSTOP:
/// a gap between wakes) and move every deadline by it, so a rank continued
/// after a stop does not blame its peers. A run of collectives that each
/// finish in time costs a mutex and no wake-up per call.
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
               std::chrono::milliseconds timeout, const char *during,
               std::chrono::milliseconds shownTimeout) {
    std::lock_guard<std::mutex> lock(mutex);
    Entry e{++lastId, Clock::now() + timeout, rank, what, axes, shownTimeout, during};
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
    std::chrono::milliseconds shownTimeout; // the collective's, for the message
    const char *during; // where it waits, or null: for its peers
  };

  Watchdog() { std::thread([this] { loop(); }).detach(); }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    Clock::time_point lastWake = Clock::now();
    for (;;) {
      if (entries.empty()) {
        sleepingUntil = Clock::time_point::max();
        wake.wait(lock);
        lastWake = Clock::now();
        continue;
      }
      Clock::time_point now = Clock::now();
      if (now - lastWake > kStoppedGap)
        for (Entry &e : entries)
          e.deadline += now - lastWake; // this process did not run meanwhile
      lastWake = now;
      const Entry *first = &entries[0];
      for (const Entry &e : entries)
        if (e.deadline < first->deadline)
          first = &e;
      if (now >= first->deadline)
        fire(*first); // does not return
      sleepingUntil = std::min(first->deadline, now + std::chrono::milliseconds(100));
      wake.wait_until(lock, sleepingUntil);
    }
  }

  /// Called with the mutex held, so the collective cannot disarm (and free
  /// the axes) while the message is written.
  [[noreturn]] static void fire(const Entry &e) {
    std::string what = e.what;
    if (e.axes)
      what += " over axes " + axesString(*e.axes);
    endRun(3, "moec: rank " + std::to_string(e.rank) + ": " + what + " waited " +
                  std::to_string(e.shownTimeout.count()) + " ms " +
                  (e.during ? e.during : "for its peers") + "; aborting the run");
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
  /// `shownTimeout` (default `timeout`) is the time the message says was
  /// waited: a collective's whole timeout, when what is left of it arms.
  Armed(int64_t rank, const char *what, const std::vector<int64_t> *axes,
        std::chrono::milliseconds timeout, const char *during = nullptr,
        std::chrono::milliseconds shownTimeout = std::chrono::milliseconds(0))
      : id(Watchdog::get().arm(rank, what, axes, timeout, during,
                               shownTimeout.count() ? shownTimeout : timeout)) {}
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
// process like a collective does (half as long again).
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
  int64_t sequence = 0;         // collectives this rank began in the group
};

struct MpiComm::Impl {
  /// A private duplicate of MPI_COMM_WORLD: the groups are split from it,
  /// so their traffic never matches a program's own messages on the world,
  /// and its error handler (MPI_ERRORS_RETURN, inherited by the splits)
  /// turns MPI's errors into CollectiveErrors instead of a silent abort.
  MPI_Comm world = MPI_COMM_NULL;
  /// Every rank, over `world`: the group of the run agreement and of the
  /// arrival before a split.
  Group everyone;
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
  impl->everyone.comm = impl->world;
  for (int64_t r = 0; r < ranks; ++r)
    impl->everyone.members.push_back(r);
  impl->everyone.index = rank;
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
  // Half as long again as a collective: when a rank returns early, a peer
  // still waiting in a collective runs out first and names it. Had both run
  // out together, both would call MPI_Abort at once, and Open MPI 4.1's
  // mpiexec can crash in its own teardown after that (PMIx_server_finalize).
  std::chrono::milliseconds limit = finalizeTimeout.count() > 0
                                        ? finalizeTimeout + finalizeTimeout / 2
                                        : std::chrono::milliseconds(60000);
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
  // Every rank splits the same axis list at the same collective (agreed
  // above), so the split is collective as MPI requires.
  uint64_t inGroup = 0;
  for (int64_t a : axes)
    inGroup |= uint64_t(1) << a;
  int64_t color = 0;
  for (size_t a = 0; a < shape.size(); ++a)
    if (!(inGroup & (uint64_t(1) << a)))
      color = color * shape[a] + coordinate(int64_t(a));
  // Every rank splits at the same point of the program: arrive on the
  // world first, so that a rank that never comes is named, not waited on.
  Clock::time_point deadline = Clock::now() + waitLimit;
  int64_t axesCode = 1; // the ordered list, a hex digit each: the same split everywhere
  for (int64_t a : axes)
    axesCode = axesCode * 16 + a + 1;
  agreeOnSize(impl->everyone, collective, axes, Kind::Split, axesCode, deadline);
  Armed armed(myRank, collective, &axes, remaining(deadline), kInsideExchange, waitLimit);
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

namespace {

constexpr int kArrivalTag = 7701;

const char *kindName(int64_t kind) {
  switch (kind) {
  case 1: return "all_reduce";
  case 2: return "all_gather";
  case 3: return "reduce_scatter";
  case 4: return "all_to_all";
  case 5: return "a split";
  case 6: return "the run agreement";
  case 7: return "all_reduce (bf16)";
  default: return "an unknown collective";
  }
}

/// What a collective's size counts, for messages.
std::string sizeText(int64_t kind, int64_t size) {
  switch (kind) {
  case 1:
  case 7: return std::to_string(size) + " values";
  case 3: return std::to_string(size) + " values kept";
  case 2: return std::to_string(size) + " bytes";
  case 4: return "rows of " + std::to_string(size) + " bytes";
  case 5: {
    std::vector<int64_t> axes;
    for (int64_t code = size; code > 1; code /= 16)
      axes.insert(axes.begin(), code % 16 - 1);
    return "axes " + axesString(axes);
  }
  default: return "";
  }
}

std::string rankList(const std::vector<int64_t> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

/// Polls `requests` (MPI_Test drives MPI's progress, as its blocking calls
/// do) until all have completed, or until `deadline`: then false, with
/// `done` saying which had. Spins for the first millisecond (a collective's
/// usual latency), then sleeps between polls so that a long wait does not
/// take a core from the ranks it waits for. Time this process did not run
/// (SIGSTOP, a suspended VM: a gap between two polls far longer than their
/// sleep) moves the deadline, for the rest of the collective too: a rank
/// continued after a stop polls again instead of blaming its peers for its
/// own absence.
bool pollUntil(std::vector<MPI_Request> &requests, std::vector<char> &done,
               Clock::time_point &deadline) {
  done.assign(requests.size(), 0);
  size_t left = requests.size();
  Clock::time_point start = Clock::now(), last = start;
  while (left > 0) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (done[i])
        continue;
      int flag = 0;
      MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE);
      if (flag)
        done[i] = 1, --left;
    }
    Clock::time_point now = Clock::now();
    if (now - last > kStoppedGap)
      deadline += now - last; // this process did not run meanwhile
    last = now;
    if (left == 0)
      break;
    if (now >= deadline)
      return false;
    if (now - start > std::chrono::milliseconds(1))
      std::this_thread::sleep_for(now - start > std::chrono::milliseconds(100)
                                      ? std::chrono::microseconds(1000)
                                      : std::chrono::microseconds(50));
  }
  return true;
}

} // namespace

std::vector<std::array<int64_t, 4>> MpiComm::arrive(Group &g, const char *collective,
                                                    const std::vector<int64_t> &axes, Kind kind,
                                                    int64_t size,
                                                    Clock::time_point &deadline) {
  const int64_t n = int64_t(g.members.size());
  std::vector<std::array<int64_t, 4>> table(n);
  table[g.index] = {++g.sequence, int64_t(kind), size, 0};
  const std::array<int64_t, 4> mine = table[g.index];
  std::vector<MPI_Request> requests;
  std::vector<int64_t> from; // the group index each receive is from
  // A request that cannot be posted: the posted ones go (their buffers are
  // this frame's) before the error does.
  auto post = [&](int rc, const char *call) {
    if (rc == MPI_SUCCESS)
      return;
    requests.pop_back();
    for (MPI_Request &r : requests) {
      MPI_Cancel(&r);
      MPI_Request_free(&r);
    }
    checkMpi(rc, collective, call);
  };
  for (int64_t p = 0; p < n; ++p)
    if (p != g.index) {
      requests.emplace_back();
      from.push_back(p);
      post(MPI_Irecv(table[p].data(), 4, MPI_INT64_T, int(p), kArrivalTag, g.comm,
                     &requests.back()),
           "MPI_Irecv");
    }
  for (int64_t p = 0; p < n; ++p)
    if (p != g.index) {
      requests.emplace_back();
      post(MPI_Isend(mine.data(), 4, MPI_INT64_T, int(p), kArrivalTag, g.comm,
                     &requests.back()),
           "MPI_Isend");
    }
  std::vector<char> done;
  if (!pollUntil(requests, done, deadline)) {
    std::vector<int64_t> missing;
    for (size_t i = 0; i < from.size(); ++i)
      if (!done[i])
        missing.push_back(g.members[from[i]]);
    std::string what = collective;
    if (!axes.empty() || kind != Kind::Agree)
      what += " over axes " + axesString(axes);
    timedOut(what + " waited " + std::to_string(waitLimit.count()) + " ms for " +
             (missing.empty() ? std::string("its peers to take its arrival")
                              : rankList(missing) + " to arrive"));
  }
  return table;
}

namespace {
/// The message every rank of a group builds alike from the same arrival
/// table when the ranks are not in the same collective (and, with
/// `sizes`, of the same size), else "".
std::string disagreement(const std::vector<std::array<int64_t, 4>> &table,
                         const std::vector<int64_t> &members, const std::string &group,
                         bool sizes) {
  bool same = true;
  for (const auto &e : table)
    same &= e[0] == table[0][0] && e[1] == table[0][1] && (!sizes || e[2] == table[0][2]);
  if (same)
    return "";
  std::string message = "the ranks of " + group + " disagree at its collective #" +
                        std::to_string(table[0][0]) + ":";
  for (size_t p = 0; p < table.size(); ++p) {
    const auto &e = table[p];
    message += std::string(p ? "," : "") + " rank " + std::to_string(members[p]) + " " +
               kindName(e[1]);
    if (std::string what = sizeText(e[1], e[2]); !what.empty())
      message += " of " + what;
    if (e[0] != table[0][0])
      message += " (its collective #" + std::to_string(e[0]) + ")";
  }
  return message + " (do the ranks run the same program, options and inputs?)";
}
} // namespace

void MpiComm::agreeOnSize(Group &g, const char *collective, const std::vector<int64_t> &axes,
                          Kind kind, int64_t size, Clock::time_point &deadline) {
  // Every rank of the group holds the same table, so every rank throws the
  // same error and none goes on into an exchange of mismatched sizes.
  auto table = arrive(g, collective, axes, kind, size, deadline);
  // Named alike on every rank: a split's agreement is every rank's, whatever
  // axes each meant to split.
  std::string group = &g == &impl->everyone ? std::string("the run")
                                            : "the group over axes " + axesString(axes);
  if (std::string why = disagreement(table, g.members, group, /*sizes=*/true); !why.empty())
    throw CollectiveError(why);
}

void MpiComm::timedOut(const std::string &what) const {
  endRun(3, "moec: rank " + std::to_string(myRank) + ": " + what + "; aborting the run");
}

MpiComm::Group &MpiComm::agreeOnAllReduce(const std::vector<int64_t> &axes, Kind kind,
                                          int64_t count, Clock::time_point &deadline) {
  deadline = Clock::now() + waitLimit;
  Group &g = group("all_reduce", axes);
  // Checked after the agreement, which every rank reaches: a rank alone
  // with a bad count fails the agreement with the others.
  agreeOnSize(g, "all_reduce", axes, kind, count, deadline);
  if (count < 0)
    fail("all_reduce", "reduces a negative number of values (" + std::to_string(count) + ")");
  return g;
}

void MpiComm::allReduceSum(const std::vector<int64_t> &axes, float *data, int64_t count) {
  Clock::time_point deadline;
  Group &g = agreeOnAllReduce(axes, Kind::AllReduce, count, deadline);
  Armed armed(myRank, "all_reduce", &axes, remaining(deadline), kInsideExchange, waitLimit);
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

// MPI has no bf16 sum: each piece is widened to f32, summed and rounded
// back once, through a buffer of one piece rather than an f32 copy of the
// whole (a training step's gradients: twice their bf16 size a rank).
void MpiComm::allReduceSumBf16(const std::vector<int64_t> &axes, uint16_t *data, int64_t count) {
  // Its own kind: a rank summing f32 where another sums bf16 is refused.
  Clock::time_point deadline;
  Group &g = agreeOnAllReduce(axes, Kind::AllReduceBf16, count, deadline);
  Armed armed(myRank, "all_reduce", &axes, remaining(deadline), kInsideExchange, waitLimit);
  constexpr int64_t kPiece = int64_t(1) << 22; // 16 MiB of f32
  std::vector<float> wide(std::min(count, kPiece));
  for (int64_t done = 0; done < count; done += kPiece) {
    int n = int(std::min(count - done, kPiece));
    for (int i = 0; i < n; ++i)
      wide[i] = bf16ToF32(data[done + i]);
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, wide.data(), n, MPI_FLOAT, MPI_SUM, g.comm),
             "all_reduce", "MPI_Allreduce");
    for (int i = 0; i < n; ++i)
      data[done + i] = f32ToBf16(wide[i]);
  }
}

void MpiComm::allGather(const std::vector<int64_t> &axes, const void *in, int64_t bytes,
                        void *out) {
  Clock::time_point deadline = Clock::now() + waitLimit;
  Group &g = group("all_gather", axes);
  agreeOnSize(g, "all_gather", axes, Kind::AllGather, bytes, deadline);
  checkCount("all_gather", "bytes sent", bytes);
  Armed armed(myRank, "all_gather", &axes, remaining(deadline), kInsideExchange, waitLimit);
  checkMpi(MPI_Allgather(in, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE, g.comm),
           "all_gather", "MPI_Allgather");
}

void MpiComm::reduceScatterSum(const std::vector<int64_t> &axes, const float *in, int64_t count,
                               float *out) {
  Clock::time_point deadline = Clock::now() + waitLimit;
  Group &g = group("reduce_scatter", axes);
  agreeOnSize(g, "reduce_scatter", axes, Kind::ReduceScatter, count, deadline);
  checkCount("reduce_scatter", "values kept", count);
  Armed armed(myRank, "reduce_scatter", &axes, remaining(deadline), kInsideExchange, waitLimit);
  checkMpi(MPI_Reduce_scatter_block(in, out, int(count), MPI_FLOAT, MPI_SUM, g.comm),
           "reduce_scatter", "MPI_Reduce_scatter_block");
}

void MpiComm::allToAllV(const std::vector<int64_t> &axes, const void *rows,
                        const int32_t *sendCounts, int64_t rowBytes, void *received,
                        int32_t *recvCounts, int64_t capacityRows) {
  Clock::time_point deadline = Clock::now() + waitLimit;
  Group &g = group("all_to_all", axes);
  // The rows' size is agreed with the arrival; the counts each rank sends
  // differ by design and are exchanged next.
  agreeOnSize(g, "all_to_all", axes, Kind::AllToAll, rowBytes, deadline);
  const int64_t n = int64_t(g.members.size());
  Armed armed(myRank, "all_to_all", &axes, remaining(deadline), kInsideExchange, waitLimit);
  std::vector<int> sendRows(sendCounts, sendCounts + n), recvRows(n);
  checkMpi(MPI_Alltoall(sendRows.data(), 1, MPI_INT, recvRows.data(), 1, MPI_INT, g.comm),
           "all_to_all", "MPI_Alltoall");

  // What this rank alone can see wrong. Counts are checked before any byte
  // moves.
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

  // Agree: the lowest failing rank of the group (n when none), so that
  // every rank raises the same error and none starts the exchange alone.
  int64_t firstFailing = problem.empty() ? n : g.index;
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, &firstFailing, 1, MPI_INT64_T, MPI_MIN, g.comm),
           "all_to_all", "MPI_Allreduce");
  if (firstFailing < n) {
    char message[1024] = {};
    if (firstFailing == g.index)
      std::snprintf(message, sizeof message, "%s", problem.c_str());
    checkMpi(MPI_Bcast(message, int(sizeof message), MPI_CHAR, int(firstFailing), g.comm),
             "all_to_all", "MPI_Bcast");
    throw CollectiveError(message);
  }

  checkMpi(MPI_Alltoallv(rows, sendBytes.data(), sendAt.data(), MPI_BYTE, received,
                         recvBytes.data(), recvAt.data(), MPI_BYTE, g.comm),
           "all_to_all", "MPI_Alltoallv");
  std::memset(static_cast<char *>(received) + total * rowBytes, 0,
              size_t((capacityRows - total) * rowBytes));
  for (int64_t p = 0; p < n; ++p)
    recvCounts[p] = recvRows[p];
}

std::string MpiComm::agreeOnRun(const std::vector<std::string> &lines) {
  std::string text;
  for (const std::string &line : lines)
    text += line + "\n";
  Clock::time_point deadline = Clock::now() + waitLimit;
  Group &everyone = impl->everyone;
  auto table = arrive(everyone, "the run agreement", {}, Kind::Agree,
                      int64_t(contentHash(text.data(), text.size())), deadline);
  // A rank elsewhere (in a split) is not agreeing on anything.
  if (std::string why = disagreement(table, everyone.members, "the run", /*sizes=*/false);
      !why.empty())
    return why;
  int64_t differing = -1;
  for (size_t r = 1; r < table.size() && differing < 0; ++r)
    if (table[r][2] != table[0][2])
      differing = int64_t(r);
  if (differing < 0)
    return "";
  // Someone differs: every rank gathers every description and names the
  // lowest rank that differs from rank 0, and the first line where.
  const int64_t n = int64_t(table.size());
  int length = int(text.size());
  std::vector<int> lengths(n), offsets(n);
  Armed armed(myRank, "the run agreement", nullptr, remaining(deadline), kInsideExchange, waitLimit);
  checkMpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, everyone.comm),
           "the run agreement", "MPI_Allgather");
  int64_t totalLength = 0;
  for (int64_t r = 0; r < n; ++r)
    offsets[r] = int(totalLength), totalLength += lengths[r];
  std::string all(size_t(totalLength), '\0');
  checkMpi(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(),
                          offsets.data(), MPI_CHAR, everyone.comm),
           "the run agreement", "MPI_Allgatherv");
  auto linesOf = [&](int64_t r) {
    std::vector<std::string> out;
    std::string own = all.substr(size_t(offsets[r]), size_t(lengths[r]));
    size_t at = 0;
    for (size_t end; (end = own.find('\n', at)) != std::string::npos; at = end + 1)
      out.push_back(own.substr(at, end - at));
    return out;
  };
  std::vector<std::string> first = linesOf(0), other = linesOf(differing);
  size_t i = 0;
  while (i < first.size() && i < other.size() && first[i] == other[i])
    ++i;
  auto shown = [](const std::vector<std::string> &v, size_t k) {
    return k < v.size() ? "'" + v[k] + "'" : std::string("nothing more");
  };
  return "rank " + std::to_string(differing) + " does not run what rank 0 runs: rank 0 has " +
         shown(first, i) + ", rank " + std::to_string(differing) + " has " + shown(other, i) +
         " (every rank must run the same program with the same options and inputs)";
}

void MpiComm::abort(const std::string &why) {
  endRun(2, "moec: rank " + std::to_string(myRank) + " failed: " + why);
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

std::vector<std::string> moec::commandLineDescription(const std::vector<std::string> &args) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &before = i > 0 ? args[i - 1] : std::string();
    bool value = !before.empty() && before[0] == '-' && before.find('=') == std::string::npos &&
                 !(args[i].size() > 0 && args[i][0] == '-');
    lines.push_back("argument " + std::to_string(i + 1) + ": " + (value ? before + " " : "") +
                    args[i]);
  }
  return lines;
}
