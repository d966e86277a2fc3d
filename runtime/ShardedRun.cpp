//===- ShardedRun.cpp - running a per-shard program on a mesh -------------===//

#include "runtime/ShardedRun.h"

#include "runtime/MeshShape.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

using namespace moec;

int64_t MeshLayout::ranks() const { return mesh::ranks(shape); }

std::string MeshLayout::str() const {
  std::string s;
  for (size_t a = 0; a < shape.size(); ++a)
    s += (a ? "," : "") + (a < axisNames.size() ? axisNames[a] : "axis" + std::to_string(a)) +
         "=" + std::to_string(shape[a]);
  return s;
}

int64_t MeshLayout::parts(const TensorSplit &split, size_t dim) const {
  return dim < split.size() ? mesh::groupSize(shape, split[dim]) : 1;
}

FunctionSignature MeshLayout::fullSignature(const FunctionSignature &perShard) const {
  FunctionSignature full = perShard;
  auto widen = [&](std::vector<TensorSignature> &tensors, const std::vector<TensorSplit> &splits) {
    for (size_t i = 0; i < tensors.size() && i < splits.size(); ++i)
      for (size_t d = 0; d < tensors[i].shape.size(); ++d)
        if (tensors[i].shape[d] >= 0)
          tensors[i].shape[d] *= parts(splits[i], d);
  };
  widen(full.inputs, inputs);
  widen(full.results, results);
  return full;
}

namespace {
/// Rank's block index along each dimension: its place in the group over
/// the axes splitting that dimension.
std::vector<int64_t> blockIndex(const TensorSplit &split, const MeshLayout &layout,
                                int64_t rank, size_t rankOfTensor) {
  std::vector<int64_t> index(rankOfTensor, 0);
  for (size_t d = 0; d < rankOfTensor && d < split.size(); ++d)
    index[d] = mesh::groupIndex(layout.shape, rank, split[d]);
  return index;
}

/// Copies the box of `block` sizes at `offsets` between a full row-major
/// tensor and a block: toBlock picks the direction.
void copyBox(char *full, const std::vector<int64_t> &fullShape, char *block,
             const std::vector<int64_t> &blockShape, const std::vector<int64_t> &offsets,
             size_t element, bool toBlock) {
  size_t rank = fullShape.size();
  if (rank == 0) {
    toBlock ? std::memcpy(block, full, element) : std::memcpy(full, block, element);
    return;
  }
  int64_t rowBytes = blockShape[rank - 1] * element;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    rows *= blockShape[d];
  std::vector<int64_t> i(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    // i: this block row's index over the leading dimensions.
    int64_t fullOffset = 0, blockOffset = 0;
    for (size_t d = 0; d < rank; ++d) {
      fullOffset = fullOffset * fullShape[d] + (d + 1 < rank ? i[d] + offsets[d] : offsets[d]);
      blockOffset = blockOffset * blockShape[d] + (d + 1 < rank ? i[d] : 0);
    }
    char *f = full + fullOffset * element, *b = block + blockOffset * element;
    toBlock ? std::memcpy(b, f, rowBytes) : std::memcpy(f, b, rowBytes);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++i[d] < blockShape[d])
        break;
      i[d] = 0;
    }
  }
}

/// Whether a box of `blockShape` in a row-major tensor of `fullShape` is
/// one run of its memory: the dimensions before the first one the box cuts
/// are 1 in the box, those after it whole. An empty box is not.
bool isOneRun(const std::vector<int64_t> &fullShape, const std::vector<int64_t> &blockShape) {
  size_t rank = fullShape.size(), cut = 0;
  while (cut < rank && blockShape[cut] == fullShape[cut])
    ++cut;
  for (size_t d = 0; d < rank; ++d)
    if (blockShape[d] == 0 || (d < cut && cut < rank && blockShape[d] != 1) ||
        (d > cut && blockShape[d] != fullShape[d]))
      return false;
  return true;
}

/// The shape of a rank's block of a tensor of `shape` split by `split`, or
/// none (and why) when a split dimension does not divide evenly.
std::optional<std::vector<int64_t>> blockShapeOf(std::vector<int64_t> shape,
                                                 const TensorSplit &split, const MeshLayout &mesh,
                                                 std::string &error) {
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t parts = mesh.parts(split, d);
    if (shape[d] % parts != 0) {
      error = "dimension " + std::to_string(d) + " (" + std::to_string(shape[d]) +
              ") does not split evenly over " + std::to_string(parts) + " shards of the mesh " +
              mesh.str();
      return std::nullopt;
    }
    shape[d] /= parts;
  }
  return shape;
}
} // namespace

bool moec::blockSharesMemory(const std::vector<int64_t> &fullShape, const TensorSplit &split,
                             const MeshLayout &mesh) {
  std::string unused;
  std::optional<std::vector<int64_t>> block = blockShapeOf(fullShape, split, mesh, unused);
  return block && isOneRun(fullShape, *block);
}

std::optional<Buffer> moec::shardOf(const Buffer &full, const TensorSplit &split,
                                    const MeshLayout &mesh, int64_t rank, std::string &error) {
  std::optional<std::vector<int64_t>> shape = blockShapeOf(full.shape(), split, mesh, error);
  if (!shape)
    return std::nullopt;
  std::vector<int64_t> index = blockIndex(split, mesh, rank, shape->size());
  std::vector<int64_t> offsets(shape->size());
  size_t runStart = 0; // row-major element offset of the block's first value
  for (size_t d = 0; d < shape->size(); ++d) {
    offsets[d] = index[d] * (*shape)[d];
    runStart = runStart * full.shape()[d] + offsets[d];
  }
  // One run of full's memory (isOneRun: a replicated tensor, a split of the
  // leading dimension...): the block shares it rather than copying. A
  // rank's inputs are only read (its generated code takes them read-only),
  // and in-process every rank of a data-parallel run had its own copy of
  // the replicated weights: 2 GB each in f32 at E 60 H 2048 M 1408.
  if (isOneRun(full.shape(), *shape))
    return Buffer::sharing(full, *shape, runStart * dtypeSize(full.dtype()));
  Buffer block(full.dtype(), *shape);
  if (block.numElements() > 0)
    copyBox(static_cast<char *>(const_cast<void *>(full.data())), full.shape(),
            static_cast<char *>(block.data()), *shape, offsets, dtypeSize(full.dtype()), true);
  return block;
}

std::optional<Buffer> moec::assemble(const std::vector<const Buffer *> &blocks,
                                     const TensorSplit &split, const MeshLayout &mesh,
                                     std::string &error) {
  if (blocks.empty() || int64_t(blocks.size()) != mesh.ranks()) {
    error = "assemble: " + std::to_string(blocks.size()) + " blocks for a mesh of " +
            std::to_string(mesh.ranks());
    return std::nullopt;
  }
  const Buffer &first = *blocks[0];
  std::vector<int64_t> fullShape = first.shape();
  for (size_t d = 0; d < fullShape.size(); ++d)
    fullShape[d] *= mesh.parts(split, d);
  Buffer full(first.dtype(), fullShape);
  // Descending: of the replicas of a block (equal, as SPMD computes them),
  // the lowest rank's is written last and kept.
  for (int64_t r = int64_t(blocks.size()); r-- > 0;) {
    const Buffer &b = *blocks[r];
    if (b.shape() != first.shape() || b.dtype() != first.dtype()) {
      error = "rank " + std::to_string(r) + " returned " + shapeString(b.shape()) +
              " but rank 0 " + shapeString(first.shape());
      return std::nullopt;
    }
    std::vector<int64_t> index = blockIndex(split, mesh, r, fullShape.size());
    std::vector<int64_t> offsets(fullShape.size());
    for (size_t d = 0; d < fullShape.size(); ++d)
      offsets[d] = index[d] * first.shape()[d];
    if (b.numElements() > 0)
      copyBox(static_cast<char *>(full.data()), fullShape,
              static_cast<char *>(const_cast<void *>(b.data())), b.shape(), offsets,
              dtypeSize(b.dtype()), false);
  }
  return full;
}

std::optional<std::vector<Buffer>> moec::shardInputs(const std::vector<Buffer> &full,
                                                     const MeshLayout &mesh, int64_t rank,
                                                     std::string &error) {
  std::vector<Buffer> blocks;
  for (size_t i = 0; i < full.size(); ++i) {
    auto b = shardOf(full[i], mesh.inputs[i], mesh, rank, error);
    if (!b) {
      error = "argument " + std::to_string(i) + ": " + error;
      return std::nullopt;
    }
    blocks.push_back(std::move(*b));
  }
  return blocks;
}

std::optional<std::vector<Buffer>>
moec::assembleResults(const std::vector<std::vector<Buffer>> &blocks, const MeshLayout &mesh,
                      std::string &error) {
  std::vector<Buffer> full;
  for (size_t i = 0; i < mesh.results.size(); ++i) {
    std::vector<const Buffer *> parts;
    for (const auto &rankBlocks : blocks) {
      if (rankBlocks.size() != mesh.results.size()) {
        error = "a rank returned " + std::to_string(rankBlocks.size()) + " results, not " +
                std::to_string(mesh.results.size());
        return std::nullopt;
      }
      parts.push_back(&rankBlocks[i]);
    }
    auto f = assemble(parts, mesh.results[i], mesh, error);
    if (!f)
      return std::nullopt;
    full.push_back(std::move(*f));
  }
  return full;
}

bool moec::runInProcess(const std::vector<int64_t> &shape, std::chrono::milliseconds timeout,
                        const std::function<bool(int64_t, std::string &)> &body,
                        std::string &error) {
  // Callers may be built without exceptions (the LLVM tools): none leaves.
  std::unique_ptr<ThreadMesh> meshOwner;
  try {
    meshOwner = std::make_unique<ThreadMesh>(shape, timeout);
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  ThreadMesh &mesh = *meshOwner;
  int64_t ranks = mesh.size();
  std::mutex mutex;
  std::string firstFailure; // the rank that failed first: the cause
  std::vector<std::string> failures(ranks);
  auto record = [&](int64_t rank, const std::string &why) {
    std::lock_guard<std::mutex> lock(mutex);
    failures[rank] = why;
    if (firstFailure.empty())
      firstFailure = "rank " + std::to_string(rank) + ": " + why;
  };
  std::vector<std::thread> threads;
  threads.reserve(ranks);
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadMeshComm comm(mesh, r);
      bindShardComm(&comm);
      std::string why;
      bool ok = body(r, why);
      std::string collective = takeShardFailure();
      bindShardComm(nullptr);
      if (!ok || !collective.empty()) {
        record(r, !collective.empty() ? collective : why);
        // Peers still waiting for this rank stop now.
        mesh.abort(r, !collective.empty() ? collective : why);
      }
    });
  for (std::thread &t : threads)
    t.join();
  if (firstFailure.empty())
    return true;
  // The mesh keeps the first abort: the cause, not a peer it stopped.
  std::string cause = mesh.failureReason();
  error = cause.empty() ? firstFailure : cause;
  return false;
}

namespace {
/// Every axis of `comm`'s mesh: the group of all its ranks.
std::vector<int64_t> allAxes(const ShardComm &comm) {
  std::vector<int64_t> all(comm.meshShape().size());
  for (size_t a = 0; a < all.size(); ++a)
    all[a] = a;
  return all;
}
} // namespace

bool moec::gatherBlocks(ShardComm &comm, const std::vector<Buffer> &mine,
                        std::vector<std::vector<Buffer>> &blocks, std::string &error) {
  int64_t ranks = mesh::ranks(comm.meshShape());
  std::vector<int64_t> all = allAxes(comm);
  blocks.clear();
  blocks.resize(ranks);
  try {
    for (const Buffer &r : mine) {
      std::vector<char> gathered(r.numBytes() * ranks);
      comm.allGather(all, r.data(), r.numBytes(), gathered.data());
      for (int64_t k = 0; k < ranks; ++k) {
        Buffer copy(r.dtype(), r.shape());
        if (r.numBytes() > 0)
          std::memcpy(copy.data(), gathered.data() + k * r.numBytes(), r.numBytes());
        blocks[k].push_back(std::move(copy));
      }
    }
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

std::optional<std::vector<std::vector<Buffer>>>
moec::localShardInputs(const std::vector<Buffer> &full, const MeshLayout &mesh,
                       const ShardComm *mpi, std::string &error) {
  std::vector<std::vector<Buffer>> local;
  for (int64_t r = 0; r < mesh.ranks(); ++r) {
    if (mpi && r != mpi->rank())
      continue;
    auto blocks = shardInputs(full, mesh, r, error);
    if (!blocks)
      return std::nullopt;
    local.push_back(std::move(*blocks));
  }
  return local;
}

bool moec::gatherRankStats(ShardComm &comm, const RankStats &mine, std::vector<RankStats> &all,
                           std::string &error) {
  static_assert(std::is_trivially_copyable_v<RankStats>, "gathered as bytes");
  all.assign(mesh::ranks(comm.meshShape()), RankStats());
  try {
    comm.allGather(allAxes(comm), &mine, sizeof(RankStats), all.data());
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}
