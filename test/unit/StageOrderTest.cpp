//===- StageOrderTest.cpp - the order of --stage-timing's calls -----------===//
//
// moe-bench's stage table sets each stage's one-thread time against its
// time at the run's threads; the two take turns, each pair in the other
// order from the last, so the host's drift enters both alike.
//
//===----------------------------------------------------------------------===//

#include "tools/moe-bench/StageOrder.h"

#include <gtest/gtest.h>

#include <string>

using moebench::StagedCall;
using moebench::stagedCallOrder;

namespace {
/// "2 1 1' 2'": the calls' threads in order, a ' on those kept.
std::string spell(const std::vector<StagedCall> &order) {
  std::string s;
  for (const StagedCall &c : order)
    s += (s.empty() ? "" : " ") + std::to_string(c.threads) + (c.kept ? "'" : "");
  return s;
}
} // namespace

TEST(StageOrder, TwoThreadCountsTakeTurnsInAlternatingPairs) {
  EXPECT_EQ(spell(stagedCallOrder(1, 3, 2)), "2 1 1' 2' 2' 1' 1' 2'");
  EXPECT_EQ(spell(stagedCallOrder(0, 4, 8)), "8' 1' 1' 8' 8' 1' 1' 8'");
}

TEST(StageOrder, EachThreadCountKeepsItersCalls) {
  for (int warmup : {0, 1, 2})
    for (int iters : {1, 2, 5}) {
      int many = 0, one = 0, skipped = 0;
      for (const StagedCall &c : stagedCallOrder(warmup, iters, 2)) {
        if (!c.kept)
          ++skipped;
        else
          ++(c.threads == 2 ? many : one);
      }
      EXPECT_EQ(many, iters);
      EXPECT_EQ(one, iters);
      EXPECT_EQ(skipped, 2 * warmup);
    }
}

TEST(StageOrder, OneThreadCallsOnce) {
  EXPECT_EQ(spell(stagedCallOrder(1, 2, 1)), "1 1' 1'");
  EXPECT_EQ(spell(stagedCallOrder(0, 1, 0)), "1'");
}
