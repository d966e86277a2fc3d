//===- HostMachineTest.cpp - the host's rate for --parallel-mode auto -----===//
//
// measureHostMachine (tooling/AutoParallel.h) rates a core at
// kGmmShareOfPeak of the peak of the unit it is given (gmmPeakUnit's, so
// that moec rates a block as moe-bench does) and says which; a unit this
// host lacks (measured 0: a target's, compiled for another CPU) falls back
// to the FP32 FMA peak, and says so, rather than rate every plan at
// nothing. Units here are stand-ins with a known peak.
//
//===----------------------------------------------------------------------===//

#include "tooling/AutoParallel.h"
#include "tooling/CostModel.h"
#include "tooling/Peak.h"

#include <gtest/gtest.h>

using namespace moec;

namespace {

double hundredGflops(unsigned, double) { return 100.0; }
double absent(unsigned, double) { return 0.0; }

TEST(HostMachine, RatesACoreAtTheGivenUnitsPeak) {
  Machine m = measureHostMachine(2, 2, Launcher::inprocess, PeakUnit{"TEST UNIT", "GOP/s", hundredGflops});
  EXPECT_DOUBLE_EQ(m.coreGflops, kGmmShareOfPeak * 100.0 / 2);
  EXPECT_EQ(m.coreRateFrom, "0.88 of the TEST UNIT peak");
  EXPECT_EQ(m.rateUnit, "GOP/s"); // the unit's own (int8's count operations)
  EXPECT_EQ(m.coresPerShard, 1);
}

TEST(HostMachine, AUnitThisHostLacksFallsBackToFp32) {
  Machine m = measureHostMachine(2, 2, Launcher::inprocess, PeakUnit{"TEST UNIT", "GOP/s", absent});
  EXPECT_GT(m.coreGflops, 0.0);
  EXPECT_EQ(m.coreRateFrom, "0.88 of the FP32 FMA peak; this host has no TEST UNIT");
  EXPECT_EQ(m.rateUnit, "GFLOP/s"); // the FP32 unit's, not the absent one's
}

} // namespace
