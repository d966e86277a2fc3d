//===- CpuSteal.h - CPU time the hypervisor took, from /proc/stat -*- C++ -*-===//
//
// On a virtual machine a vCPU that is ready to run may wait while the host
// runs another tenant; Linux counts that wait as "steal". A timed call that
// lost time so is slower by the host's doing, not the code's: moe-bench
// reports the steal over its timed calls beside their median, so that a
// slow run on a shared host can be told from a slow kernel (on the 2-core
// EPYC VMs, two-thread runs saw steal where one-thread runs saw none).
//
//===----------------------------------------------------------------------===//

#ifndef MOEC_TOOLING_CPUSTEAL_H
#define MOEC_TOOLING_CPUSTEAL_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace moec {

/// The steal column of the aggregate "cpu" line of /proc/stat (the sum over
/// the machine's CPUs), in clock ticks (USER_HZ).
struct CpuSteal {
  uint64_t ticks = 0;
};

/// The steal of /proc/stat's text `procStat`: its "cpu " line's eighth
/// number (user nice system idle iowait irq softirq steal ...). None when
/// there is no such line or it has fewer than eight numbers (a kernel
/// before 2.6.11).
std::optional<CpuSteal> parseProcStatSteal(std::string_view procStat);

/// This machine's steal now; none where /proc/stat cannot be read or
/// parsed (not Linux).
std::optional<CpuSteal> readCpuSteal();

/// Seconds of CPU time stolen between two readings (ticks over USER_HZ);
/// 0 if the counter went back.
double stolenSeconds(const CpuSteal &before, const CpuSteal &after);

} // namespace moec

#endif // MOEC_TOOLING_CPUSTEAL_H
