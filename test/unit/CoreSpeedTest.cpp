//===- CoreSpeedTest.cpp - the cores' own speed between timed calls -------===//
//
// coreSpeedOf (tooling/CoreSpeed.h) summarizes moe-bench's probes as shares
// of the run's peak, and refuses what would not be a share; probeCores runs
// a peak loop on the generated code's OpenMP threads, so it measures
// nothing until libomp is loaded (the JIT loads it with the first program)
// and the loop's rate once it is.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "tooling/CoreSpeed.h"
#include "tooling/Peak.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

using namespace moec;

namespace {

TEST(CoreSpeed, MedianLowestAndHighestAsSharesOfThePeak) {
  std::optional<CoreSpeed> s = coreSpeedOf({180.0, 200.0, 220.0, 190.0, 210.0}, 200.0);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->medianPct, 100.0);
  EXPECT_DOUBLE_EQ(s->minPct, 90.0);
  EXPECT_DOUBLE_EQ(s->maxPct, 110.0);
}

TEST(CoreSpeed, AnEvenCountsMedianIsTheMeanOfTheMiddleTwo) {
  std::optional<CoreSpeed> s = coreSpeedOf({90.0, 100.0, 80.0, 70.0}, 100.0);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->medianPct, 85.0);
  EXPECT_DOUBLE_EQ(s->minPct, 70.0);
  EXPECT_DOUBLE_EQ(s->maxPct, 100.0);
}

TEST(CoreSpeed, NoShareWithoutProbesAPeakOrAMeasuredProbe) {
  EXPECT_FALSE(coreSpeedOf({}, 100.0));
  EXPECT_FALSE(coreSpeedOf({50.0}, 0.0));
  // A probe of a unit this host lacks measures 0: no share, not 0%.
  EXPECT_FALSE(coreSpeedOf({50.0, 0.0}, 100.0));
}

TEST(CoreSpeed, AProbeOfAnAbsentUnitMeasuresNothing) { EXPECT_EQ(probeCores(PeakLoop{}), 0.0); }

// Before libomp is loaded (this process compiled no program) there are no
// generated code's threads to run on; once it is, the probe times the FP32
// FMA loop on them. Loaded here as the JIT loads it.
TEST(CoreSpeed, ProbesTheGeneratedCodesThreadsOnceLibompIsLoaded) {
  std::string libomp = openMPLibraryDir() + "/libomp.so";
  ASSERT_EQ(dlopen(libomp.c_str(), RTLD_LAZY | RTLD_NOLOAD), nullptr) << "libomp loaded before the test";
  EXPECT_EQ(probeCores(fp32PeakLoop()), 0.0);
  void *handle = dlopen(libomp.c_str(), RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  ASSERT_TRUE(setGeneratedCodeThreads(2));
  double rate = probeCores(fp32PeakLoop());
  EXPECT_GT(rate, 0.0);
  // Two threads of the loop, against one: more, on a host of two cores or
  // more (a generous bound: the host is shared).
  double oneThread = measureFp32PeakGflops(1, 0.004);
  EXPECT_GT(rate, 0.3 * oneThread);
}

} // namespace
