//===- ThreadLimit.h - thread counts a machine can run ----------*- C++ -*-===//
//
// `--threads 100000` (or OMP_NUM_THREADS=100000) made libomp try to start
// that many threads: 14 s later it aborted with a stack dump. A count is
// refused up front when it is more than 16 threads per core (and more than
// 64, so that small machines may still oversubscribe for testing): past
// that, threads only slow a run down, and far past it the machine cannot
// start them.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_THREADLIMIT_H
#define MOEC_RUNTIME_THREADLIMIT_H

#include <cstdint>
#include <string>

namespace moec {

/// The most threads a run may ask for on this machine.
int64_t maxThreads();

/// The threads a run gets for a `--threads` of `threads`: those, or every
/// core for 0.
unsigned threadsOrCores(unsigned threads);

/// Why `count` threads, asked for by `what` ("--threads 100000"), are
/// refused, or "".
std::string threadCountRefusal(int64_t count, const std::string &what);

/// The same for OMP_NUM_THREADS (its first number, as libomp reads it), or
/// "" when it is unset or within the limit.
std::string ompNumThreadsRefusal();

} // namespace moec

#endif
