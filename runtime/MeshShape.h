//===- MeshShape.h - ranks, coordinates and groups of a device mesh -*- C++ -*-===//
//
// The geometry every backend of the sharded runtime and the host share, in
// the upstream shard dialect's convention: ranks are the row-major linear
// index over the mesh shape (last axis fastest); a group over a list of axes
// is the ranks agreeing on every other axis, ordered row-major over the
// listed axes (the first listed most significant).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_MESHSHAPE_H
#define MOEC_RUNTIME_MESHSHAPE_H

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace moec::mesh {

/// Why `shape` is not a mesh (at least one axis, at most 64, sizes >= 1);
/// empty when it is one.
std::string shapeError(const std::vector<int64_t> &shape);
/// Why `axes` are not a group's axes on `shape` (each in range, once);
/// empty when they are.
std::string axesError(const std::vector<int64_t> &shape, const std::vector<int64_t> &axes);
/// Why `timeout` cannot bound a collective's wait (positive, at most a
/// year, so that the clock plus it stays finite); empty when it can.
std::string timeoutError(std::chrono::milliseconds timeout);

int64_t ranks(const std::vector<int64_t> &shape);
/// `rank`'s coordinate on each axis.
std::vector<int64_t> coordinates(const std::vector<int64_t> &shape, int64_t rank);
/// Ranks in `rank`'s group over `axes`, and `rank`'s place among them.
int64_t groupSize(const std::vector<int64_t> &shape, const std::vector<int64_t> &axes);
std::vector<int64_t> groupMembers(const std::vector<int64_t> &shape, int64_t rank,
                                  const std::vector<int64_t> &axes);
int64_t groupIndex(const std::vector<int64_t> &shape, int64_t rank,
                   const std::vector<int64_t> &axes);

} // namespace moec::mesh

#endif // MOEC_RUNTIME_MESHSHAPE_H
