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

} // namespace moec

#endif
