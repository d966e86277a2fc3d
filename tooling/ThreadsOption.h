//===- ThreadsOption.h - --threads, read before LLVM's options --*- C++ -*-===//
//
// moe-bench and moe-kernel-bench take `--threads N` (threads of the
// generated code) out of argv before cl::ParseCommandLineOptions: a library
// linked in (OpenMP's LLVM support) registers a global option of that name.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_THREADSOPTION_H
#define MOEC_TOOLING_THREADSOPTION_H

#include <string>

namespace moec {

/// Takes `--threads N` / `--threads=N` out of argv into `threads`; false
/// with a message if N is not a positive integer or more threads than the
/// machine runs (runtime/ThreadLimit.h).
bool takeThreadsOption(int &argc, char **argv, unsigned &threads, std::string &error);

} // namespace moec

#endif // MOEC_TOOLING_THREADSOPTION_H
