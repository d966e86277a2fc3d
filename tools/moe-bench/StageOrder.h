//===- StageOrder.h - the order of --stage-timing's calls -------*- C++ -*-===//
//
// --stage-timing's speed-up column sets each stage's one-thread time against
// its time at the run's threads. Timed one after the other (all the calls
// at the run's threads, then all at one) the host's drift over the minute
// between them entered the column: at T 512 f32 the training step's gmms
// showed 2.2-2.4x in one run and 1.77-1.84x an hour later (AMD EPYC
// znver5, 2 threads). So the two thread counts take turns, call by call,
// each pair in the other order from the last (N 1, 1 N, N 1, ...), and a
// drift that runs the length of the table enters both columns alike (an
// even number of kept pairs exactly; an odd one, moe-bench's default 5,
// has one more pair one way round than the other).
//
// Header-only: the order is a plain function, tested alone
// (test/unit/StageOrderTest.cpp) without the compiler behind moe-bench.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLS_MOEBENCH_STAGEORDER_H
#define MOEC_TOOLS_MOEBENCH_STAGEORDER_H

#include <vector>

namespace moebench {

/// One stage-timed call: at `threads` threads, its times kept for the
/// medians or not (a warm-up call).
struct StagedCall {
  unsigned threads;
  bool kept;
};

/// The calls of a stage table at `threads` threads: `warmup` + `iters`
/// rounds, the first `warmup` not kept; with more than one thread each round
/// calls at `threads` and at one, the even rounds in that order and the odd
/// ones the other way round.
inline std::vector<StagedCall> stagedCallOrder(int warmup, int iters, unsigned threads) {
  std::vector<StagedCall> order;
  for (int round = 0; round < warmup + iters; ++round) {
    bool kept = round >= warmup;
    if (threads <= 1) {
      order.push_back({1, kept});
      continue;
    }
    bool manyFirst = round % 2 == 0;
    order.push_back({manyFirst ? threads : 1, kept});
    order.push_back({manyFirst ? 1 : threads, kept});
  }
  return order;
}

} // namespace moebench

#endif // MOEC_TOOLS_MOEBENCH_STAGEORDER_H
