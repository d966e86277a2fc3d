//===- AtomicFile.h - whole files or none ----------------------*- C++ -*-===//
//
// Outputs (objects, libraries, result files) are written to a temporary file
// beside the target and renamed into place, so a failure part way leaves the
// old file, or none, and never a partial one.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_ATOMICFILE_H
#define MOEC_RUNTIME_ATOMICFILE_H

#include <string>

namespace moec {

/// Writes `bytes` to `path` atomically (permissions as a new file's: 0666
/// less the umask). False with "path: reason" in `error` on failure.
bool writeFileAtomically(const std::string &path, const std::string &bytes,
                         std::string &error);

/// Whether a file can be made at `path`, checked before the work that
/// produces it (a compile, a run, a benchmark): `path` is not a directory
/// and its directory exists. False with "path: reason" in `error`.
bool checkOutputFile(const std::string &path, std::string &error);

/// Whether `dir` is a directory or can be made one: the nearest part of it
/// that exists is a directory. Makes nothing. False with "dir: reason".
bool checkOutputDirectory(const std::string &dir, std::string &error);

} // namespace moec

#endif
