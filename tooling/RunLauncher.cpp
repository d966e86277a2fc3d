//===- RunLauncher.cpp - how a tool's run starts, shares threads and fails -===//

#include "tooling/RunLauncher.h"

#include "runtime/MpiComm.h"

#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cstdlib>
#include <string>

using namespace moec;

namespace {
const char *failingTool = "moec";
int failureCode = 1;
/// This process's rank of an MPI run, once it has one.
ShardComm *mpiRank = nullptr;
} // namespace

void moec::setFailingTool(const char *tool, int exitCode) {
  failingTool = tool;
  failureCode = exitCode;
}

int moec::failRun(const std::string &message) {
  llvm::outs().flush(); // what was printed before the error comes before it
  if (mpiRank)
    mpiRank->abort(message); // does not return
  // One write of the whole line: errs() is unbuffered, so each << is a
  // write of its own, and the ranks of an MPI run that all refuse the same
  // mesh interleaved their pieces ("moe-benchmoe-bench: error: : error:").
  // A pipe takes a write of up to PIPE_BUF bytes whole.
  llvm::errs() << (std::string(failingTool) + ": error: " + message + "\n");
  return failureCode;
}

void moec::MpiRankDeleter::operator()(ShardComm *rank) const {
  if (rank == mpiRank)
    mpiRank = nullptr;
  delete rank;
}

MpiRank moec::startMpiRank(const std::vector<int64_t> &meshShape, const std::string &meshText,
                           std::chrono::milliseconds timeout, std::string &error) {
#ifdef MOEC_HAVE_MPI
  std::unique_ptr<MpiComm> mpi = MpiComm::create(meshShape, timeout, error);
  if (!mpi) {
    error = "--launcher mpi with the mesh " + meshText + ": " + error;
    return nullptr;
  }
  llvm::outs().flush();
  mpi->quietUnlessRankZero();
  mpiRank = mpi.get();
  return MpiRank(mpi.release());
#else
  error = std::string("--launcher mpi: this ") + failingTool +
          " was built without MPI (install libopenmpi-dev and rebuild; scripts/setup.sh does)";
  return nullptr;
#endif
}

std::string moec::agreeOnRun(ShardComm &rank, const std::vector<std::string> &args,
                             const std::vector<std::string> &extra) {
#ifdef MOEC_HAVE_MPI
  std::vector<std::string> lines = commandLineDescription(args);
  lines.insert(lines.end(), extra.begin(), extra.end());
  // startMpiRank made it (no RTTI here to check the type otherwise).
  assert(&rank == mpiRank && "agreeOnRun takes the rank startMpiRank returned");
  return static_cast<MpiComm &>(rank).agreeOnRun(lines);
#else
  return "";
#endif
}

void moec::setCodeThreads(unsigned threads) {
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), /*overwrite=*/1);
}
