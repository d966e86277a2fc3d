//===- CpuStealTest.cpp - the hypervisor's steal from /proc/stat ----------===//
//
// parseProcStatSteal (tooling/CpuSteal.h) reads the aggregate "cpu" line's
// eighth number, not a per-CPU line's, and refuses what it cannot read
// whole rather than report a wrong steal.
//
//===----------------------------------------------------------------------===//

#include "tooling/CpuSteal.h"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace moec;

namespace {

TEST(CpuSteal, ReadsTheAggregateLinesEighthNumber) {
  // A 2-vCPU guest's /proc/stat as Linux 6 writes it: steal 4191 in total.
  const char *text = "cpu  8836954 1214 232005 39155393 11009 0 4529 4191 0 0\n"
                     "cpu0 4410318 652 116011 19590264 5431 0 3109 2050 0 0\n"
                     "cpu1 4426636 562 115994 19565129 5578 0 1420 2141 0 0\n"
                     "intr 1234 0 0\n";
  std::optional<CpuSteal> steal = parseProcStatSteal(text);
  ASSERT_TRUE(steal);
  EXPECT_EQ(steal->ticks, 4191u);
}

TEST(CpuSteal, FindsTheLineWhereverItIs) {
  std::optional<CpuSteal> steal = parseProcStatSteal("cpu0 1 2 3 4 5 6 7 9\ncpu  1 2 3 4 5 6 7 8");
  ASSERT_TRUE(steal);
  EXPECT_EQ(steal->ticks, 8u);
}

TEST(CpuSteal, RefusesWhatItCannotRead) {
  // No aggregate line, too few columns (no steal column before 2.6.11), a
  // column that is not a number.
  EXPECT_FALSE(parseProcStatSteal("cpu0 1 2 3 4 5 6 7 8\n"));
  EXPECT_FALSE(parseProcStatSteal("cpu  1 2 3 4 5 6 7\n"));
  EXPECT_FALSE(parseProcStatSteal("cpu  1 2 3 4 5 6 x 8\n"));
  EXPECT_FALSE(parseProcStatSteal("cpu  1 2 3 4 5 6 7 8x\n"));
  EXPECT_FALSE(parseProcStatSteal(""));
}

TEST(CpuSteal, SecondsBetweenReadings) {
  long hz = sysconf(_SC_CLK_TCK);
  ASSERT_GT(hz, 0);
  EXPECT_DOUBLE_EQ(stolenSeconds(CpuSteal{100}, CpuSteal{uint64_t(100 + 3 * hz)}), 3.0);
  // A counter that went back (a reset) is no steal.
  EXPECT_EQ(stolenSeconds(CpuSteal{100}, CpuSteal{50}), 0.0);
}

TEST(CpuSteal, ThisMachineHasOneOnLinux) {
#ifdef __linux__
  std::optional<CpuSteal> before = readCpuSteal();
  ASSERT_TRUE(before);
  std::optional<CpuSteal> after = readCpuSteal();
  ASSERT_TRUE(after);
  EXPECT_GE(after->ticks, before->ticks);
#else
  GTEST_SKIP() << "/proc/stat is Linux's";
#endif
}

} // namespace
