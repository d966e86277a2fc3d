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

using namespace moec;

namespace {

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
// probe times the FP32 FMA loop on them. Loaded here as the JIT loads it.
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

  // The probe counts each thread's work: its rate on two of libomp's
  // threads is about that of the peak measurement's two std::threads
  // (counting one thread's work would read half). The two measured side by
  // side, three tries: the host may take a core for a moment, from both.
  // libomp's workers sleep at once after each region here (block time 0),
  // or they would spin beside the std::threads and halve those.
  auto setBlocktime = reinterpret_cast<void (*)(int)>(dlsym(handle, "kmp_set_blocktime"));
  ASSERT_NE(setBlocktime, nullptr);
  setBlocktime(0);
  bool agreed = false;
  for (int attempt = 0; attempt < 3 && !agreed; ++attempt) {
    double probe = probeCores(fp32PeakLoop());
    double peak = measureFp32PeakGflops(2, kCoreProbeSeconds);
    ASSERT_GT(probe, 0.0);
    ASSERT_GT(peak, 0.0);
    agreed = probe > 0.75 * peak && probe < 1.33 * peak;
  }
  EXPECT_TRUE(agreed) << "the probe on two threads and two threads of the peak loop disagree";
}

} // namespace
