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

#include <atomic>
#include <chrono>
#include <thread>

using namespace moec;

namespace {

std::atomic<int> sleptCalls{0};
/// A "peak loop" whose rate needs no core: `rounds` of 2 ms, slept at once.
float sleepRounds(long rounds) {
  sleptCalls.fetch_add(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * rounds));
  return float(rounds);
}

TEST(CoreSpeed, MedianLowestAndHighestAsSharesOfThePeak) {
  std::optional<CoreSpeed> s = coreSpeedOf({180.0, 200.0, 220.0, 190.0, 210.0}, 200.0);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->medianPct, 100.0);
  EXPECT_DOUBLE_EQ(s->minPct, 90.0);
  EXPECT_DOUBLE_EQ(s->maxPct, 110.0);
  EXPECT_DOUBLE_EQ(s->medianRate, 200.0);
  EXPECT_EQ(s->pcts, (std::vector<double>{90.0, 100.0, 110.0, 95.0, 105.0}));
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
// generated code's threads to run on; once it is, a region runs on as many
// as the code's worker count, each with its number in the team, and the
// probe times a loop on them, counting every thread's work. Loaded here as
// the JIT loads it.
TEST(CoreSpeed, ProbesTheGeneratedCodesThreadsOnceLibompIsLoaded) {
  std::string libomp = openMPLibraryDir() + "/libomp.so";
  if (!dlopen(libomp.c_str(), RTLD_LAZY | RTLD_NOLOAD)) { // (ctest runs each test in a process of its own)
    EXPECT_EQ(probeCores(fp32PeakLoop()), 0.0);
  }
  void *handle = dlopen(libomp.c_str(), RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(handle, nullptr) << dlerror();

  ASSERT_TRUE(setGeneratedCodeThreads(2));
  std::atomic<int> seen[2] = {0, 0};
  auto mark = [](void *arg, int thread) {
    auto *counts = static_cast<std::atomic<int> *>(arg);
    if (thread >= 0 && thread < 2)
      counts[thread].fetch_add(1);
  };
  EXPECT_EQ(runOnGeneratedCodeThreads(mark, seen), 2);
  EXPECT_EQ(seen[0].load(), 1);
  EXPECT_EQ(seen[1].load(), 1);

  // The probe counts each thread's work, done side by side: a loop that
  // sleeps its rounds (2 ms each, 1e6 "operations"; 25 rounds, 50 ms an
  // attempt) reads about 2 x 0.5e9 a second on two threads, and sleeping
  // needs no core, so ctest's other processes only delay the wake-ups
  // (the best of five attempts: under 33 ms of delay in one of them).
  // Counting one thread's work, or the threads one after the other, would
  // read half at most. Never more than 1: a sleep is at least its length,
  // on the clock the attempt is timed by. What this gives up: two threads
  // on one core would pass too. (The FP32 loop's own rate is the host's to
  // give: under ctest's other processes two threads of it read anything
  // from one core's rate to two, so here it only has to measure something.)
  sleptCalls = 0;
  double slept = probeCores(PeakLoop{sleepRounds, 1e6, 0.5e9}, 0.05);
  EXPECT_EQ(sleptCalls.load(), 5 * 2) << "five attempts, each on both threads";
  EXPECT_GT(slept, 0.6);
  EXPECT_LE(slept, 1.0);
  EXPECT_GT(probeCores(fp32PeakLoop()), 0.0);
}

} // namespace
