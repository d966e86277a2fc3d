//===- CpuSteal.h - CPU time the hypervisor took, from /proc/stat -*- C++ -*-===//
//
// On a virtual machine a vCPU that is ready to run may wait while the host
// runs another tenant; Linux counts that wait as "steal". A timed call that
// lost time so is slower by the host's doing, not the code's: moe-bench
// reports the steal over its timed calls beside their median, so that a
// slow run on a shared host can be told from a slow kernel, or steal ruled
// out as its cause.
//
//===----------------------------------------------------------------------===//

#ifndef MOEC_TOOLING_CPUSTEAL_H
#define MOEC_TOOLING_CPUSTEAL_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace moec {

/// The aggregate "cpu" line of /proc/stat (the sum over the machine's
/// CPUs), in clock ticks (USER_HZ): its steal column, and all the time it
/// accounts (user nice system idle iowait irq softirq steal; the guest
/// columns after them are counted in user and nice already).
struct CpuTicks {
  uint64_t steal = 0, total = 0;
};

/// The "cpu " line of /proc/stat's text `procStat`. None when there is no
/// such line or it has fewer than eight numbers (a kernel before 2.6.11).
std::optional<CpuTicks> parseProcStatCpu(std::string_view procStat);

/// This machine's ticks now; none where /proc/stat cannot be read or
/// parsed (not Linux).
std::optional<CpuTicks> readCpuTicks();

/// Below this much of the machine's CPU time between two readings (1 s:
/// 100 ticks of 0.01 s) no share is quoted: Linux books time a tick at a
/// time per CPU, so over a few milliseconds one tick of steal would read as
/// a share of tens of percent.
constexpr uint64_t kMinShareTicks = 100;

struct Steal {
  double seconds = 0;
  /// Of the machine's CPU time between the readings, in percent (top's
  /// %st); none over a window under kMinShareTicks.
  std::optional<double> sharePct;
};

/// The steal between two readings; none if a counter went back (a reset).
std::optional<Steal> stealBetween(const CpuTicks &before, const CpuTicks &after);

/// Adds the window from `before` to `after` to `sum`, so that windows apart
/// (moe-bench's timed calls, not what runs between them) count as one:
/// stealBetween(CpuTicks{}, sum). False, leaving `sum` as it was, if a
/// counter went back.
bool addWindow(CpuTicks &sum, const CpuTicks &before, const CpuTicks &after);

} // namespace moec

#endif // MOEC_TOOLING_CPUSTEAL_H
