//===- MpiCommTest.cpp - the MPI backend, under mpirun --------------------===//
//
// Not a GoogleTest binary: it runs as N processes under mpirun, every
// process runs the same checks, and a failed check must not leave its peers
// waiting in a collective. Each rank prints "rank R: N checks passed" (or
// what failed); rank 0 prints a summary; every rank exits non-zero if any
// rank failed a check.
//
//   mpirun -np 2 moe-mpi-tests            the checks (-np 2 and -np 4)
//   mpirun -np 2 moe-mpi-tests --mode=hang   rank 1 never reaches the
//        all-reduce: the others' watchdog must end the run (exit != 0)
//   mpirun -np 2 moe-mpi-tests --mode=return rank 1 returns from main
//        early (status 0, MPI_Finalize at exit): the same
//   mpirun -np 2 moe-mpi-tests --mode=abort  rank 1 calls abort()
//   mpirun -np 2 moe-mpi-tests --mode=die    rank 1 is killed (SIGKILL)
//   mpirun -np 2 moe-mpi-tests --mode=stop   rank 1 is stopped (SIGSTOP)
//        before the all-reduce: rank 0 must name rank 1 as the one missing
//   mpirun -np 2 moe-mpi-tests --mode=continue  must succeed: rank 1 is
//        stopped inside the all-reduce past its deadline while rank 0 comes
//        late; continued, it finishes instead of blaming rank 0
//   mpirun -np 2 moe-mpi-tests --mode=continue-exchange  must succeed: the
//        same with rank 1 stopped inside a long exchange
//   --timeout-ms=N sets the collective timeout (default 60000; the failure
//   modes' tests use 2000 for hang and return, 30000 for abort and die, so that a
//   run that ends well before 30 s was ended by the abort or by mpirun,
//   not by the watchdog).
//
// The expected values are ThreadCollectivesTest's, and the groups come from
// ThreadMesh::group, the in-process backend's definition of them.
//
//===----------------------------------------------------------------------===//

#include "runtime/MpiComm.h"
#include "runtime/ThreadCollectives.h"

#include <mpi.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <thread>
#include <unistd.h>

using namespace moec;
using namespace std::chrono_literals;

namespace {

int64_t worldRank = -1;
int64_t checks = 0, failures = 0;

void check(bool ok, const std::string &what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "rank %lld: FAILED: %s\n", static_cast<long long>(worldRank),
                 what.c_str());
  }
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

std::string str(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

/// Runs `body`, returning the CollectiveError's message ("" if none; other
/// exceptions are failed checks).
std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const CollectiveError &e) {
    return e.what();
  } catch (const std::exception &e) {
    check(false, std::string("unexpected exception: ") + e.what());
    return "";
  }
  return "";
}

/// Every ordered list of distinct axes of an n-axis mesh: [], [0], [1],
/// [0, 1], [1, 0], ...
std::vector<std::vector<int64_t>> axisLists(int64_t n) {
  std::vector<std::vector<int64_t>> result{{}};
  for (size_t at = 0; at < result.size(); ++at)
    for (int64_t a = 0; a < n; ++a) {
      const std::vector<int64_t> &base = result[at];
      if (std::find(base.begin(), base.end(), a) != base.end())
        continue;
      std::vector<int64_t> longer = base;
      longer.push_back(a);
      result.push_back(longer);
    }
  return result;
}

/// Every collective's values on one mesh, over one ordered axis list.
void checkGroup(MpiComm &comm, const std::vector<int64_t> &shape,
                const std::vector<int64_t> &axes) {
  const int64_t r = comm.rank();
  const std::string where = "mesh " + str(shape) + " axes " + str(axes) + ": ";
  ThreadMesh oracle(shape, 1s);
  std::vector<int64_t> members = oracle.group(r, axes);
  const int64_t n = int64_t(members.size());
  const int64_t me = std::find(members.begin(), members.end(), r) - members.begin();
  check(comm.groupSize(axes) == n, where + "groupSize");
  std::vector<int64_t> coords = oracle.coordinates(r);
  for (size_t a = 0; a < shape.size(); ++a)
    check(comm.coordinate(int64_t(a)) == coords[a], where + "coordinate " + std::to_string(a));

  std::string error = errorOf([&] {
    // All-reduce of 1001 values (not a multiple of any group size).
    constexpr int64_t kCount = 1001;
    std::vector<float> data(kCount);
    for (int64_t i = 0; i < kCount; ++i)
      data[i] = float(r * 1000 + i);
    comm.allReduceSum(axes, data.data(), kCount);
    int64_t bad = -1;
    for (int64_t i = 0; i < kCount && bad < 0; ++i) {
      float expected = 0;
      for (int64_t p : members)
        expected += float(p * 1000 + i);
      if (data[i] != expected)
        bad = i;
    }
    check(bad < 0, where + "all_reduce element " + std::to_string(bad));

    // Reduce-scatter, then all-gather: the all-reduce.
    constexpr int64_t kBlock = 5;
    std::vector<float> in(n * kBlock);
    for (int64_t i = 0; i < n * kBlock; ++i)
      in[i] = float((r + 1) * (i + 1));
    float s = 0; // sum over the group of (p + 1)
    for (int64_t p : members)
      s += float(p + 1);
    std::vector<float> mine(kBlock, -1.0f);
    comm.reduceScatterSum(axes, in.data(), kBlock, mine.data());
    for (int64_t j = 0; j < kBlock; ++j)
      check(mine[j] == s * float(me * kBlock + j + 1),
            where + "reduce_scatter element " + std::to_string(j) + " = " +
                std::to_string(mine[j]));
    std::vector<float> gathered(n * kBlock, -1.0f);
    comm.allGather(axes, mine.data(), kBlock * sizeof(float), gathered.data());
    for (int64_t i = 0; i < n * kBlock; ++i)
      check(gathered[i] == s * float(i + 1), where + "all_gather after reduce_scatter element " +
                                                 std::to_string(i));

    // All-gather of odd-sized byte blocks, in group order.
    unsigned char block[3] = {(unsigned char)r, (unsigned char)me, 0xA5};
    std::vector<unsigned char> all(3 * n, 0);
    comm.allGather(axes, block, 3, all.data());
    for (int64_t i = 0; i < n; ++i)
      check(all[3 * i] == members[i] && all[3 * i + 1] == i && all[3 * i + 2] == 0xA5,
            where + "all_gather block " + std::to_string(i));

    // Ragged all-to-all: group index s sends counts(s, d) rows to d, each
    // row {sender, receiver, k} in mesh ranks; some counts are 0.
    auto counts = [](int64_t s, int64_t d) { return int32_t((s + 2 * d + 1) % 3); };
    const int64_t kCapacity = 2 * n + 1; // room for padding
    std::vector<int32_t> rows, send(n);
    for (int64_t d = 0; d < n; ++d) {
      send[d] = counts(me, d);
      for (int32_t k = 0; k < send[d]; ++k)
        rows.insert(rows.end(), {int32_t(r), int32_t(members[d]), k});
    }
    std::vector<int32_t> received(kCapacity * 3, -1), recvCounts(n, -1);
    comm.allToAllV(axes, rows.data(), send.data(), 3 * sizeof(int32_t), received.data(),
                   recvCounts.data(), kCapacity);
    size_t at = 0;
    for (int64_t s2 = 0; s2 < n; ++s2) {
      check(recvCounts[s2] == counts(s2, me),
            where + "all_to_all count from group index " + std::to_string(s2));
      for (int32_t k = 0; k < counts(s2, me); ++k, at += 3)
        check(received[at] == members[s2] && received[at + 1] == r && received[at + 2] == k,
              where + "all_to_all row " + std::to_string(k) + " from " +
                  std::to_string(members[s2]));
    }
    for (; at < received.size(); ++at)
      check(received[at] == 0, where + "all_to_all padding at " + std::to_string(at));
    // And back by the counts received: every sender gets its rows again.
    std::vector<int32_t> back(kCapacity * 3, -1), backCounts(n, -1);
    comm.allToAllV(axes, received.data(), recvCounts.data(), 3 * sizeof(int32_t), back.data(),
                   backCounts.data(), kCapacity);
    check(backCounts == send, where + "all_to_all back: counts");
    check(std::equal(rows.begin(), rows.end(), back.begin()), where + "all_to_all back: rows");
  });
  check(error.empty(), where + "unexpected error: " + error);
}

/// The errors every rank of a group must raise alike, on a 1-D mesh of the
/// whole world; the communicators stay usable after each.
void checkErrors(MpiComm &comm) {
  const int64_t r = comm.rank(), n = comm.meshShape()[0];
  auto stillWorks = [&](const std::string &after) {
    float v = 1;
    std::string e = errorOf([&] { comm.allReduceSum({0}, &v, 1); });
    check(e.empty() && v == float(n), "an all-reduce after " + after + ": " + e);
  };

  // Over capacity where only rank 0 can see it: every rank sends 2 rows to
  // every rank; rank 0 has room for 2, the others for all.
  {
    std::vector<float> rows(2 * n, 1.0f), received(2 * n, -1.0f);
    std::vector<int32_t> send(n, 2), recv(n, -1);
    int64_t capacity = r == 0 ? 2 : 2 * n;
    std::string e = errorOf([&] {
      comm.allToAllV({0}, rows.data(), send.data(), sizeof(float), received.data(), recv.data(),
                     capacity);
    });
    check(contains(e, "all_to_all: rank 0 receives " + std::to_string(2 * n) +
                          " rows but has room for 2"),
          "over capacity: got \"" + e + "\"");
    check(received[0] == -1.0f && recv[0] == -1, "over capacity: nothing was exchanged");
    stillWorks("an over-capacity all-to-all");
  }
  // A negative count on rank 1 (the sum fits the capacity: it must not let
  // another count overflow it).
  {
    std::vector<float> rows(8, 1.0f), received(8);
    std::vector<int32_t> send(n, 0), recv(n);
    if (r == 0)
      send[0] = 5;
    if (r == 1)
      send[0] = -2;
    std::string e = errorOf([&] {
      comm.allToAllV({0}, rows.data(), send.data(), sizeof(float), received.data(), recv.data(),
                     3);
    });
    check(contains(e, "rank 1 sends a negative row count (-2)"), "negative count: got \"" + e + "\"");
    stillWorks("a negative count");
  }
  // Rows of different sizes.
  {
    std::vector<float> rows(4, 1.0f), received(8);
    std::vector<int32_t> send(n, 0), recv(n);
    int64_t rowBytes = r == 1 ? 8 : 4;
    std::string e = errorOf([&] {
      comm.allToAllV({0}, rows.data(), send.data(), rowBytes, received.data(), recv.data(), 2);
    });
    check(contains(e, "the ranks of the group over axes [0] disagree at its collective #") &&
              contains(e, "rank 0 all_to_all of rows of 4 bytes, rank 1 all_to_all of rows of "
                          "8 bytes"),
          "row sizes: got \"" + e + "\"");
    stillWorks("rows of different sizes");
  }
  // Sizes that differ by rank (ranks started with different --dim): one
  // error on every rank before any byte moves, for every collective; the
  // buffers are too small for the larger size, so an exchange would have
  // written past them.
  {
    std::vector<float> data(2 * n, 1.0f), out(2 * n, -1.0f);
    int64_t count = r == 1 ? 2 : 1;
    auto same = [&](const std::string &e, const std::string &what) {
      check(contains(e, "disagree at its collective #") &&
                contains(e, "rank 0 " + what + " of 1") && contains(e, "rank 1 " + what + " of 2"),
            what + " sizes: got \"" + e + "\"");
    };
    same(errorOf([&] { comm.allReduceSum({0}, data.data(), count); }), "all_reduce");
    check(data[0] == 1.0f, "all_reduce sizes: nothing was reduced");
    stillWorks("an all-reduce of different sizes");
    same(errorOf([&] { comm.allGather({0}, data.data(), count, out.data()); }), "all_gather");
    same(errorOf([&] { comm.reduceScatterSum({0}, data.data(), count, out.data()); }),
         "reduce_scatter");
    check(out[0] == -1.0f, "gather and scatter sizes: nothing was exchanged");
    stillWorks("a gather and a reduce-scatter of different sizes");
  }
  // Ranks in different collectives at the same point (different programs).
  {
    float v = 1;
    unsigned char b = 1, all[64];
    std::string e = errorOf([&] {
      if (r == 1)
        comm.allGather({0}, &b, 1, all);
      else
        comm.allReduceSum({0}, &v, 1);
    });
    check(contains(e, "rank 0 all_reduce of 1 values, rank 1 all_gather of 1 bytes"),
          "different collectives: got \"" + e + "\"");
    stillWorks("different collectives");
  }
  // The run agreement: the same description passes; rank 1's differing
  // line is named, the same on every rank.
  {
    std::vector<std::string> lines = {"program 1234", "argument 1: --dim", "argument 2: 512"};
    check(comm.agreeOnRun(lines).empty(), "the same run: agreed");
    if (r == 1)
      lines[2] = "argument 2: 1024";
    std::string e = comm.agreeOnRun(lines);
    check(e == "rank 1 does not run what rank 0 runs: rank 0 has 'argument 2: 512', rank 1 has "
               "'argument 2: 1024' (every rank must run the same program with the same "
               "options and inputs)",
          "a different run: got \"" + e + "\"");
    stillWorks("a run agreement that failed");
  }
  // More bytes than MPI's int counts: rank 0 sends 4 rows of 1 GiB to rank
  // 1. Refused before any byte moves (the buffers are far too small).
  {
    char rows[16] = {}, received[16] = {};
    std::vector<int32_t> send(n, 0), recv(n);
    if (r == 0)
      send[1] = 4;
    std::string e = errorOf([&] {
      comm.allToAllV({0}, rows, send.data(), int64_t(1) << 30, received, recv.data(), 4);
    });
    check(contains(e, "all_to_all: rank 0 sends 4294967296 bytes") &&
              contains(e, "more than MPI's int counts allow"),
          "int overflow: got \"" + e + "\"");
    stillWorks("an all-to-all over MPI's int counts");
  }
  // Axes outside the mesh or listed twice: refused locally, alike on every
  // rank, before any communication.
  {
    float v = 1;
    std::string e = errorOf([&] { comm.allReduceSum({1}, &v, 1); });
    check(contains(e, "all_reduce: rank " + std::to_string(r) +
                          " mesh axis 1 out of range (the mesh has 1 axes)"),
          "bad axis: got \"" + e + "\"");
    e = errorOf([&] { comm.allGather({0, 0}, &v, 4, nullptr); });
    check(contains(e, "mesh axis 0 listed twice"), "axis twice: got \"" + e + "\"");
    stillWorks("bad axes");
  }
}

/// Sends SIGCONT to this process after `delay`, from a child process (a
/// stopped process cannot wake itself), unless the run has ended by then.
void continueAfter(std::chrono::milliseconds delay) {
  pid_t parent = ::getpid();
  if (::fork() == 0) {
    std::this_thread::sleep_for(delay);
    ::kill(parent, SIGCONT);
    std::_Exit(0);
  }
}

/// --mode=continue, which must succeed: rank 1 enters the all-reduce at
/// once and is stopped there (SIGSTOP) from 0.25 to 1.5 timeouts; rank 0
/// comes at 0.9, so its own deadline (1.9) is after rank 1 runs again. Continued after its own deadline passed,
/// rank 1 must not blame rank 0 (it was rank 1 that did not run): both
/// all-reduces return the sum.
int continueMode(std::chrono::milliseconds timeout) {
  std::string error;
  int64_t size = MpiComm::worldSize(error);
  std::unique_ptr<MpiComm> comm = size < 0 ? nullptr : MpiComm::create({size}, timeout, error);
  if (!comm) {
    std::fprintf(stderr, "moe-mpi-tests: %s\n", error.c_str());
    return 1;
  }
  float warm = 1;
  comm->allReduceSum({0}, &warm, 1); // the group exists; both are here
  if (comm->rank() == 1) {
    pid_t self = ::getpid();
    if (::fork() == 0) { // stops rank 1 inside its all-reduce, then continues it
      std::this_thread::sleep_for(timeout / 4);
      ::kill(self, SIGSTOP);
      std::this_thread::sleep_for(timeout * 5 / 4);
      ::kill(self, SIGCONT);
      std::_Exit(0);
    }
  } else {
    // Arrives after rank 1's deadline, and waits less than its own.
    std::this_thread::sleep_for(timeout * 9 / 10);
  }
  float v = 1;
  comm->allReduceSum({0}, &v, 1);
  bool right = v == float(size);
  std::printf("rank %lld: the all-reduce returned %g after the stop%s\n",
              static_cast<long long>(comm->rank()), double(v), right ? "" : " (FAILED)");
  std::fflush(stdout);
  comm.reset();
  MpiComm::finalize();
  return right ? 0 : 1;
}

/// --mode=continue-exchange, which must succeed: the same inside the
/// exchange (a blocking MPI call under the watchdog): rank 1 is stopped
/// from 0.25 to 1.5 timeouts while the ranks run all-reduces of 128 MiB
/// (each far longer than an arrival, so the stop falls in an exchange);
/// rank 0 waits for it under 5 timeouts of its own.
int continueExchangeMode(std::chrono::milliseconds timeout) {
  std::string error;
  int64_t size = MpiComm::worldSize(error);
  int rank = 0;
  if (size >= 0)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::unique_ptr<MpiComm> comm =
      size < 0 ? nullptr : MpiComm::create({size}, rank == 0 ? 5 * timeout : timeout, error);
  if (!comm) {
    std::fprintf(stderr, "moe-mpi-tests: %s\n", error.c_str());
    return 1;
  }
  std::vector<float> data(int64_t(32) << 20, 1.0f);
  comm->allReduceSum({0}, data.data(), 1);
  if (comm->rank() == 1) {
    pid_t self = ::getpid();
    if (::fork() == 0) {
      std::this_thread::sleep_for(timeout / 4);
      ::kill(self, SIGSTOP);
      std::this_thread::sleep_for(timeout * 5 / 4);
      ::kill(self, SIGCONT);
      std::_Exit(0);
    }
  }
  auto start = std::chrono::steady_clock::now();
  int rounds = 0;
  while (std::chrono::steady_clock::now() - start < timeout * 2) {
    std::fill(data.begin(), data.begin() + 8, 1.0f);
    comm->allReduceSum({0}, data.data(), int64_t(data.size()));
    ++rounds;
    // Both ranks run the same number of rounds: rank 0 decides.
    float more = comm->rank() == 0 && std::chrono::steady_clock::now() - start < timeout * 2;
    comm->allReduceSum({0}, &more, 1);
    if (more == 0)
      break;
  }
  bool right = data[0] == float(size);
  std::printf("rank %lld: %d all-reduces of 128 MiB across the stop, the last gave %g%s\n",
              static_cast<long long>(comm->rank()), rounds, double(data[0]),
              right ? "" : " (FAILED)");
  std::fflush(stdout);
  comm.reset();
  MpiComm::finalize();
  return right ? 0 : 1;
}

/// Modes in which the run must fail: rank 1 never reaches the all-reduce
/// (hang), returns from main (return), fails (abort) or dies (die); the
/// others wait in it.
int failureMode(const std::string &mode, std::chrono::milliseconds timeout) {
  std::string error;
  int64_t size = MpiComm::worldSize(error);
  if (size < 0) {
    std::fprintf(stderr, "moe-mpi-tests: %s\n", error.c_str());
    return 1;
  }
  std::unique_ptr<MpiComm> comm = MpiComm::create({size}, timeout, error);
  if (!comm) {
    std::fprintf(stderr, "moe-mpi-tests: %s\n", error.c_str());
    return 1;
  }
  worldRank = comm->rank();
  if (comm->rank() == 1) {
    if (mode == "return") {
      // A program that returns early: exit status 0, MPI_Finalize at exit
      // (MpiComm registered it), which in Open MPI waits for the others.
      std::fprintf(stderr, "rank 1: returning without the all-reduce\n");
      return 0;
    }
    if (mode == "hang") {
      std::fprintf(stderr, "rank 1: sleeping instead of the all-reduce\n");
      for (;;)
        std::this_thread::sleep_for(1h);
    }
    if (mode == "stop") {
      // Stopped before the all-reduce for twice the timeout (a child sends
      // SIGCONT, if the run is not over by then): the others must name
      // rank 1 as the one they wait for.
      std::fprintf(stderr, "rank 1: stopping (SIGSTOP) before the all-reduce\n");
      std::fflush(stderr);
      continueAfter(2 * timeout);
      ::raise(SIGSTOP);
      std::fprintf(stderr, "rank 1: continued\n");
    } else {
      std::this_thread::sleep_for(200ms); // the others are waiting by now
    }
    if (mode == "abort")
      comm->abort("told to fail by --mode=abort");
    std::fprintf(stderr, "rank 1: killing itself\n");
    std::fflush(stderr);
    ::kill(::getpid(), SIGKILL);
  }
  float v = 1;
  if (mode == "stop" && comm->rank() == 1)
    std::this_thread::sleep_for(1h); // the others' abort ends the run
  comm->allReduceSum({0}, &v, 1);
  std::fprintf(stderr, "rank %lld: the all-reduce returned, which it must not in --mode=%s\n",
               static_cast<long long>(comm->rank()), mode.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = "checks";
  std::chrono::milliseconds timeout{60000};
  bool timeoutGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--mode=", 0) == 0) {
      mode = arg.substr(7);
    } else if (arg.rfind("--timeout-ms=", 0) == 0) {
      timeout = std::chrono::milliseconds(std::atoll(arg.c_str() + 13));
      timeoutGiven = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--mode=checks|hang|return|abort|die|stop|continue|continue-exchange] "
                   "[--timeout-ms=N]\n",
                   argv[0]);
      return 2;
    }
  }
  // 4 s: a margin of 1.6 s or more for the stop timings on a loaded 2-core
  // machine.
  if (mode == "continue")
    return continueMode(timeoutGiven ? timeout : 4000ms);
  if (mode == "continue-exchange")
    return continueExchangeMode(timeoutGiven ? timeout : 4000ms);
  if (mode == "hang" || mode == "return" || mode == "abort" || mode == "die" || mode == "stop")
    return failureMode(mode, timeoutGiven ? timeout
                             : mode == "hang" || mode == "return" || mode == "stop"
                                 ? 2000ms
                                 : 30000ms);
  if (mode != "checks") {
    std::fprintf(stderr, "moe-mpi-tests: unknown mode %s\n", mode.c_str());
    return 2;
  }

  // A mesh whose size is not the world's is refused (first: it also starts
  // MPI), and so are invalid meshes.
  std::string error;
  const int64_t size = MpiComm::worldSize(error);
  if (size < 0) {
    std::fprintf(stderr, "moe-mpi-tests: %s\n", error.c_str());
    return 1;
  }
  {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    worldRank = rank;
  }
  check(!MpiComm::create({size + 1}, timeout, error) &&
            error == "the mesh " + std::to_string(size + 1) + " needs " +
                         std::to_string(size + 1) + " processes but mpirun started " +
                         std::to_string(size),
        "a mesh of the wrong size: got \"" + error + "\"");
  check(!MpiComm::create({2, size}, timeout, error) &&
            contains(error, "the mesh 2x" + std::to_string(size) + " needs " +
                                std::to_string(2 * size) + " processes"),
        "a 2-D mesh of the wrong size: got \"" + error + "\"");
  check(!MpiComm::create({}, timeout, error) && contains(error, "at least one axis"),
        "an empty mesh: got \"" + error + "\"");
  check(!MpiComm::create({size, 0}, timeout, error) && contains(error, ">= 1"),
        "an axis of size 0: got \"" + error + "\"");
  check(!MpiComm::create({size}, 0ms, error) && contains(error, "timeout"),
        "a zero timeout: got \"" + error + "\"");

  // Every collective over every ordered axis list, on a 1-D mesh, every
  // 2-D factorisation and a 3-D one.
  std::vector<std::vector<int64_t>> meshes{{size}};
  for (int64_t a = 1; a <= size; ++a)
    if (size % a == 0)
      meshes.push_back({a, size / a});
  if (size % 2 == 0)
    meshes.push_back({2, 1, size / 2});
  for (const std::vector<int64_t> &shape : meshes) {
    std::unique_ptr<MpiComm> comm = MpiComm::create(shape, timeout, error);
    check(comm != nullptr, "create " + str(shape) + ": " + error);
    if (!comm)
      continue;
    check(comm->rank() == worldRank && std::string(comm->backend()) == "mpi",
          "mesh rank is the world rank");
    for (const std::vector<int64_t> &axes : axisLists(int64_t(shape.size())))
      checkGroup(*comm, shape, axes);
    // A second round reuses the cached communicators.
    checkGroup(*comm, shape, axisLists(int64_t(shape.size())).back());
  }

  std::unique_ptr<MpiComm> line = MpiComm::create({size}, timeout, error);
  check(line != nullptr, "create the 1-D mesh: " + error);
  if (line && size >= 2)
    checkErrors(*line);

  // Ranks that split different groups at the same point, or one splitting
  // while another agrees on the run: every rank fails alike, none calls
  // MPI_Comm_split alone.
  if (size >= 2) {
    std::unique_ptr<MpiComm> grid = MpiComm::create({size, 1}, timeout, error);
    check(grid != nullptr, "create the 2-D mesh: " + error);
    float v = 1;
    std::string e = errorOf([&] { grid->allReduceSum({worldRank == 1 ? 1 : 0}, &v, 1); });
    // The same words on every rank, whichever axes it meant to split.
    check(contains(e, "the ranks of the run disagree at its collective #") &&
              contains(e, "rank 0 a split of axes [0], rank 1 a split of axes [1]"),
          "different splits: got \"" + e + "\"");
    if (worldRank == 1) {
      e = grid->agreeOnRun({"the same"});
    } else {
      e = errorOf([&] { grid->allReduceSum({0}, &v, 1); });
    }
    check(contains(e, "rank 0 a split of axes [0], rank 1 the run agreement"),
          "a split against the run agreement: got \"" + e + "\"");
    e = errorOf([&] { grid->allReduceSum({0}, &v, 1); });
    check(e.empty() && v == float(size), "an all-reduce after the failed splits: " + e);
  }

  // The summary: every rank learns the totals, so every rank exits alike.
  long long mine[2] = {checks, failures}, total[2] = {0, 0};
  int failedRanks = 0, failedHere = failures ? 1 : 0;
  MPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&failedHere, &failedRanks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (failures)
    std::printf("rank %lld: %lld of %lld checks failed\n", static_cast<long long>(worldRank),
                static_cast<long long>(failures), static_cast<long long>(checks));
  else
    std::printf("rank %lld: %lld checks passed\n", static_cast<long long>(worldRank),
                static_cast<long long>(checks));
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD); // the summary comes after every rank's line
  if (worldRank == 0) {
    if (total[1] == 0)
      std::printf("moe-mpi-tests: %lld processes, %lld checks, all passed\n",
                  static_cast<long long>(size), total[0]);
    else
      std::printf("moe-mpi-tests: %lld of %lld checks failed on %d of %lld processes\n", total[1],
                  total[0], failedRanks, static_cast<long long>(size));
    std::fflush(stdout);
  }
  line.reset();
  MpiComm::finalize();
  return total[1] == 0 ? 0 : 1;
}
