//===- CostModelTest.cpp - the cost model's compute term, by its algebra --===//
//
// tooling/CostModel.h states what its parameters mean: a gmm over r rows
// per expert at rate x r / (r + h), so h is a fixed cost per weight (2 h
// FLOPs of time each, whatever the batch); training's three gmms at the
// training share of that rate, the weights' gradients with their own h.
// These tests hold predict()'s compute term (one device and DP against
// compact EP; not the shared expert, dense EP, null routing or the
// collectives) to those statements on small numbers, so a
// change of the formula that the docs' calibration (docs/sharding.md)
// does not describe fails here.
//
//===----------------------------------------------------------------------===//

#include "tooling/CostModel.h"

#include <gtest/gtest.h>

using namespace moec;

namespace {

Workload block(bool training) {
  Workload w;
  w.tokens = 512, w.hidden = 64, w.mlp = 32, w.experts = 8, w.topk = 2;
  w.training = training;
  return w;
}

Machine machine() {
  Machine m;
  m.coreGflops = 10, m.halfRateRows = 16, m.tgmmHalfRateRows = 40, m.trainingShare = 0.8;
  m.linkGBps = 1, m.linkLatencyUs = 0;
  return m;
}

// Seconds of `flop` at `gflops`.
double seconds(double flop, double gflops) { return flop * 1e-9 / gflops; }

TEST(CostModel, ForwardHalfRateRowsAreAFixedCostPerWeight) {
  Workload w = block(false);
  Machine m = machine();
  Prediction p = predict(w, Plan{"none", 1, 1}, m);
  // 6 H M FLOPs a row (three [H, M] matmuls).
  double rows = 512 * 2, perExpert = rows / 8, flop = 6.0 * 64 * 32 * rows;
  double weights = 3.0 * 64 * 32 * 8;
  EXPECT_DOUBLE_EQ(p.computeS, seconds(flop, 10 * perExpert / (perExpert + 16)));
  EXPECT_NEAR(p.computeS, seconds(flop, 10) + seconds(2 * 16 * weights, 10), 1e-15);
  EXPECT_EQ(p.commS, 0);
}

TEST(CostModel, TrainingRunsThreeGmmsAtTheTrainingShare) {
  Machine m = machine();
  double rows = 512 * 2, perExpert = rows / 8, flop = 6.0 * 64 * 32 * rows;
  Prediction p = predict(block(true), Plan{"none", 1, 1}, m);
  double gmms = seconds(2 * flop, 10 * perExpert / (perExpert + 16));
  double tgmm = seconds(flop, 10 * perExpert / (perExpert + 40));
  EXPECT_NEAR(p.computeS, (gmms + tgmm) / 0.8, 1e-15);

  // With the forward's half rate and the whole rate, three forwards.
  m.tgmmHalfRateRows = m.halfRateRows, m.trainingShare = 1;
  EXPECT_NEAR(predict(block(true), Plan{"none", 1, 1}, m).computeS,
              3 * predict(block(false), Plan{"none", 1, 1}, m).computeS, 1e-15);
}

// DP's shard holds every expert's weights and EP's half of them; over the
// same rows, their compute differs by the fixed cost of the weights EP's
// shard does not hold: (2 h + h_tgmm) x 2 FLOPs of time a weight.
TEST(CostModel, DataParallelPaysTheFixedCostOfEveryWeight) {
  Machine m = machine();
  Prediction dp = predict(block(true), Plan{"dp", 2, 1}, m);
  Prediction ep = predict(block(true), Plan{"ep-compact", 1, 2}, m);
  double halfTheWeights = 3.0 * 64 * 32 * 8 / 2;
  double perWeight = (2 * 16 + 40) * 2;
  EXPECT_NEAR(dp.computeS - ep.computeS, seconds(perWeight * halfTheWeights, 10 * 0.8), 1e-15);
  EXPECT_DOUBLE_EQ(dp.usefulGflop, ep.usefulGflop);
}

} // namespace
