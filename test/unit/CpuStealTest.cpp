//===- CpuStealTest.cpp - the hypervisor's steal from /proc/stat ----------===//
//
// parseProcStatCpu (tooling/CpuSteal.h) reads the aggregate "cpu" line's
// eighth number and the sum of its first eight, not a per-CPU line's, and
// refuses what it cannot read whole rather than report a wrong steal;
// stealBetween quotes a share only over a window long enough for one.
//
//===----------------------------------------------------------------------===//

#include "tooling/CpuSteal.h"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace moec;

namespace {

TEST(CpuSteal, ReadsTheAggregateLine) {
  // A 2-vCPU guest's /proc/stat as Linux 6 writes it: steal 4191 in total;
  // the guest columns (0 0) are not added again.
  const char *text = "cpu  8836954 1214 232005 39155393 11009 0 4529 4191 0 0\n"
                     "cpu0 4410318 652 116011 19590264 5431 0 3109 2050 0 0\n"
                     "cpu1 4426636 562 115994 19565129 5578 0 1420 2141 0 0\n"
                     "intr 1234 0 0\n";
  std::optional<CpuTicks> ticks = parseProcStatCpu(text);
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->steal, 4191u);
  EXPECT_EQ(ticks->total, 8836954u + 1214 + 232005 + 39155393 + 11009 + 0 + 4529 + 4191);
}

TEST(CpuSteal, FindsTheLineWhereverItIs) {
  std::optional<CpuTicks> ticks = parseProcStatCpu("cpu0 1 2 3 4 5 6 7 9\ncpu  1 2 3 4 5 6 7 8 100 100");
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->steal, 8u);
  EXPECT_EQ(ticks->total, 36u);
}

TEST(CpuSteal, RefusesWhatItCannotRead) {
  // No aggregate line, too few columns (no steal column before 2.6.11), a
  // column that is not a number.
  EXPECT_FALSE(parseProcStatCpu("cpu0 1 2 3 4 5 6 7 8\n"));
  EXPECT_FALSE(parseProcStatCpu("cpu  1 2 3 4 5 6 7\n"));
  EXPECT_FALSE(parseProcStatCpu("cpu  1 2 3 4 5 6 x 8\n"));
  EXPECT_FALSE(parseProcStatCpu("cpu  1 2 3 4 5 6 7 8x\n"));
  EXPECT_FALSE(parseProcStatCpu(""));
}

TEST(CpuSteal, SecondsAndShareBetweenReadings) {
  long hz = sysconf(_SC_CLK_TCK);
  ASSERT_GT(hz, 0);
  // 3 s of steal in a window of 400 ticks of the machine's time.
  std::optional<Steal> s = stealBetween(CpuTicks{100, 1000}, CpuTicks{uint64_t(100 + 3 * hz), 1400});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->seconds, 3.0);
  ASSERT_TRUE(s->sharePct);
  EXPECT_DOUBLE_EQ(*s->sharePct, 100.0 * 3 * hz / 400);
  // A window under kMinShareTicks: the seconds, no share (one tick of
  // steal in 4 would read as 25%).
  s = stealBetween(CpuTicks{0, 0}, CpuTicks{1, kMinShareTicks - 1});
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->sharePct);
  // A counter that went back (a reset): no figure rather than a wrong one.
  EXPECT_FALSE(stealBetween(CpuTicks{100, 1000}, CpuTicks{50, 2000}));
  EXPECT_FALSE(stealBetween(CpuTicks{100, 1000}, CpuTicks{100, 500}));
}

// moe-bench's timed calls, each its own window: what runs between them
// (its probes of the cores) counts for neither the steal nor the share's
// window; a window whose counters went back is refused and leaves the sum.
TEST(CpuSteal, WindowsApartSumToOne) {
  CpuTicks sum;
  EXPECT_TRUE(addWindow(sum, CpuTicks{10, 1000}, CpuTicks{12, 1060}));
  // 500 ticks between the windows, 40 of them steal: not counted.
  EXPECT_TRUE(addWindow(sum, CpuTicks{52, 1560}, CpuTicks{55, 1620}));
  EXPECT_EQ(sum.steal, 5u);
  EXPECT_EQ(sum.total, 120u);
  EXPECT_FALSE(addWindow(sum, CpuTicks{60, 2000}, CpuTicks{59, 2100}));
  EXPECT_FALSE(addWindow(sum, CpuTicks{60, 2000}, CpuTicks{61, 1900}));
  EXPECT_EQ(sum.steal, 5u);
  EXPECT_EQ(sum.total, 120u);
  std::optional<Steal> s = stealBetween(CpuTicks{}, sum);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->sharePct);
  EXPECT_DOUBLE_EQ(*s->sharePct, 100.0 * 5 / 120);
}

TEST(CpuSteal, ThisMachineHasOneOnLinux) {
#ifdef __linux__
  std::optional<CpuTicks> before = readCpuTicks();
  ASSERT_TRUE(before);
  std::optional<CpuTicks> after = readCpuTicks();
  ASSERT_TRUE(after);
  EXPECT_GE(after->total, before->total);
  EXPECT_GE(after->steal, before->steal);
#else
  GTEST_SKIP() << "/proc/stat is Linux's";
#endif
}

} // namespace
