//===- ThreadLimit.cpp - thread counts a machine can run ------------------===//

#include "runtime/ThreadLimit.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

int64_t moec::maxThreads() {
  int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max<int64_t>(64, 16 * cores);
}

unsigned moec::threadsOrCores(unsigned threads) {
  return threads ? threads : std::max(1u, std::thread::hardware_concurrency());
}

std::string moec::threadCountRefusal(int64_t count, const std::string &what) {
  if (count <= maxThreads())
    return "";
  return what + ": more threads than this machine runs (" +
         std::to_string(std::thread::hardware_concurrency()) + " cores; at most " +
         std::to_string(maxThreads()) + ", 16 per core)";
}

std::string moec::ompNumThreadsRefusal() {
  const char *value = std::getenv("OMP_NUM_THREADS");
  if (!value || !*value)
    return "";
  // libomp reads a list ("8,2" for nested levels): the first is the
  // outermost level's.
  char *end = nullptr;
  long long first = std::strtoll(value, &end, 10);
  if (end == value)
    return ""; // not a number: libomp ignores it with a warning of its own
  return threadCountRefusal(first, "OMP_NUM_THREADS=" + std::string(value));
}
