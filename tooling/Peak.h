//===- Peak.h - this machine's peaks per unit, measured --------*- C++ -*-===//

#ifndef MOEC_TOOLING_PEAK_H
#define MOEC_TOOLING_PEAK_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>

namespace moec {

/// A unit's peak loop as one thread runs it: `run(rounds)` does `rounds`
/// rounds of `opsPerRound` operations (FLOPs, or int8 products counted as
/// a multiply and an add) on registers only and returns a sum to keep;
/// `ratePerThread` (operations a second) sizes an attempt's rounds before
/// any is timed. `run` is null where this host lacks the unit.
struct PeakLoop {
  float (*run)(long rounds) = nullptr;
  double opsPerRound = 0, ratePerThread = 0;
  /// Rounds for about `seconds` at ratePerThread, at least 1.
  long roundsFor(double seconds) const;
};
/// The best rate (1e9 operations a second) of five attempts, each
/// `attempt()` running `rounds` rounds of `opsPerRound` operations on as
/// many threads as it returns, timed whole (the best: the machines are
/// shared, a slow attempt is another tenant, not the core); 0 when an
/// attempt returns 0 (it found no threads to run on).
double bestOfFive(long rounds, double opsPerRound, llvm::function_ref<unsigned()> attempt);

/// The loops the measurements below time (CoreSpeed.h times them too).
PeakLoop fp32PeakLoop();
PeakLoop amxBf16PeakLoop();
PeakLoop avx512Bf16PeakLoop();
PeakLoop amxInt8PeakLoop();
PeakLoop vnniPeakLoop();
PeakLoop avx2MaddPeakLoop();

/// GFLOP/s of `threads` threads each running independent AVX-512 FMA chains
/// (AVX2 FMA where there is no AVX-512) on registers for about `seconds`:
/// what the generated code is measured against. The best of five (the
/// machines are shared: a slow attempt is another tenant, not the core).
double measureFp32PeakGflops(unsigned threads, double seconds = 0.3);

/// GFLOP/s of `threads` threads each running tdpbf16ps on four accumulator
/// tiles in registers (what bf16 gmms on AMX are measured against), best of
/// five; 0 where the process may not use AMX tiles.
double measureAmxBf16PeakGflops(unsigned threads, double seconds = 0.3);

/// GFLOP/s of `threads` threads each running vdpbf16ps chains on zmm
/// registers (what bf16 gmms on AVX512_BF16 dot products are measured
/// against), best of five; 0 where the CPU has no AVX512_BF16.
double measureAvx512Bf16PeakGflops(unsigned threads, double seconds = 0.3);

/// GOP/s (one multiply and one add counted per int8 product, as FLOPs are)
/// of `threads` threads each running tdpbssd on four accumulator tiles; 0
/// where the process may not use AMX tiles.
double measureAmxInt8PeakGops(unsigned threads, double seconds = 0.3);
/// GOP/s of vpdpbusd chains on zmm registers (what int8 gmms off AMX are
/// measured against); 0 where the CPU has no AVX512-VNNI.
double measureVnniPeakGops(unsigned threads, double seconds = 0.3);
/// GOP/s of vpmaddwd + vpaddd chains on ymm registers (what int8 gmms on
/// AVX2 without VNNI are measured against); 0 where the CPU has no AVX2.
double measureAvx2MaddPeakGops(unsigned threads, double seconds = 0.3);
/// GB/s (1e9 bytes) of `threads` threads each streaming its part of a
/// `bytes` buffer (far larger than the caches: DRAM) through vector loads,
/// best of five: the bound of a block that reads its weights once (decode
/// sizes). 0 when the buffer cannot be allocated.
double measureReadGBps(unsigned threads, size_t bytes = size_t(256) << 20);
/// The largest cache (the last level's): weights smaller than it are read
/// from the cache, not DRAM, call after call. `bytes` 0 when unknown;
/// `fromGlibc` when Linux describes no cache and the size is glibc's,
/// which a VM may overstate (callers say so where it decides something).
struct LastLevelCache {
  double bytes = 0;
  bool fromGlibc = false;
};
LastLevelCache lastLevelCache();
/// Whether Linux grants this process the AMX tile state (arch_prctl
/// ARCH_REQ_XCOMP_PERM): false on a CPU or kernel without AMX.
bool amxTilesGranted();

} // namespace moec

#endif
