//===- ShardedCall.cpp - one call of a compiled per-shard program ---------===//

#include "compiler/ShardedCall.h"

using namespace moec;

namespace {
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
} // namespace

std::optional<std::vector<Buffer>>
moec::callSharded(JitProgram &program, const FunctionSignature &sig, const MeshLayout &layout,
                  std::vector<std::vector<Buffer>> &args, ShardComm *mpi,
                  std::chrono::milliseconds timeout, std::vector<RankStats> &ranks,
                  std::string &error) {
  int64_t n = layout.ranks();
  std::vector<std::vector<Buffer>> blocks(n);
  if (mpi) {
    bindShardComm(mpi);
    auto start = std::chrono::steady_clock::now();
    auto mine = program.run(sig, args[0], error);
    RankStats stats{since(start), shardCommCounters()};
    std::string failure = takeShardFailure();
    bindShardComm(nullptr);
    if (!failure.empty())
      error = failure;
    if (!failure.empty() || !mine)
      return std::nullopt;
    if (!gatherRankStats(*mpi, stats, ranks, error) || !gatherBlocks(*mpi, *mine, blocks, error))
      return std::nullopt;
    return assembleResults(blocks, layout, error);
  }
  ranks.assign(n, RankStats());
  bool ok = runInProcess(
      layout.shape, timeout,
      [&](int64_t r, std::string &e) {
        auto start = std::chrono::steady_clock::now();
        auto out = program.run(sig, args[r], e);
        ranks[r] = {since(start), shardCommCounters()};
        if (!out)
          return false;
        blocks[r] = std::move(*out);
        return true;
      },
      error);
  if (!ok)
    return std::nullopt;
  return assembleResults(blocks, layout, error);
}

std::optional<std::vector<Buffer>> moec::callOnDevice(JitProgram &program,
                                                      const FunctionSignature &sig,
                                                      std::vector<Buffer> &args,
                                                      std::string &error) {
  bindShardComm(nullptr);
  auto out = program.run(sig, args, error);
  if (std::string failure = takeShardFailure(); !failure.empty()) {
    error = failure;
    return std::nullopt;
  }
  return out;
}
