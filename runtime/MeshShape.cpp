//===- MeshShape.cpp - ranks, coordinates and groups of a device mesh -----===//

#include "runtime/MeshShape.h"

using namespace moec;

std::string mesh::shapeError(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "a mesh needs at least one axis";
  if (shape.size() > 64)
    return "a mesh has at most 64 axes";
  for (int64_t s : shape)
    if (s < 1)
      return "mesh axis sizes must be >= 1 (got " + std::to_string(s) + ")";
  return "";
}

std::string mesh::axesError(const std::vector<int64_t> &shape,
                            const std::vector<int64_t> &axes) {
  uint64_t seen = 0;
  for (int64_t a : axes) {
    if (a < 0 || a >= int64_t(shape.size()))
      return "mesh axis " + std::to_string(a) + " out of range (the mesh has " +
             std::to_string(shape.size()) + " axes)";
    if (seen & (uint64_t(1) << a))
      return "mesh axis " + std::to_string(a) + " listed twice";
    seen |= uint64_t(1) << a;
  }
  return "";
}

std::string mesh::timeoutError(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0 || timeout > std::chrono::hours(24 * 365))
    return "the collective timeout must be positive and at most a year";
  return "";
}

int64_t mesh::ranks(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<int64_t> mesh::coordinates(const std::vector<int64_t> &shape, int64_t rank) {
  std::vector<int64_t> c(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    c[a] = rank % shape[a];
    rank /= shape[a];
  }
  return c;
}

int64_t mesh::groupSize(const std::vector<int64_t> &shape, const std::vector<int64_t> &axes) {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= shape[a];
  return n;
}

std::vector<int64_t> mesh::groupMembers(const std::vector<int64_t> &shape, int64_t rank,
                                        const std::vector<int64_t> &axes) {
  std::vector<int64_t> base = coordinates(shape, rank);
  std::vector<int64_t> members(groupSize(shape, axes));
  for (int64_t i = 0; i < int64_t(members.size()); ++i) {
    // i as a row-major index over `axes` (the first listed most significant).
    std::vector<int64_t> c = base;
    int64_t rest = i;
    for (size_t j = axes.size(); j-- > 0;) {
      c[axes[j]] = rest % shape[axes[j]];
      rest /= shape[axes[j]];
    }
    int64_t linear = 0;
    for (size_t a = 0; a < shape.size(); ++a)
      linear = linear * shape[a] + c[a];
    members[i] = linear;
  }
  return members;
}

int64_t mesh::groupIndex(const std::vector<int64_t> &shape, int64_t rank,
                         const std::vector<int64_t> &axes) {
  std::vector<int64_t> c = coordinates(shape, rank);
  int64_t index = 0;
  for (int64_t a : axes)
    index = index * shape[a] + c[a];
  return index;
}
