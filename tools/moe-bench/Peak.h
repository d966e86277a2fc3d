//===- Peak.h - this machine's FP32 FMA peak, measured ---------------------===//

#ifndef MOEC_TOOLS_MOEBENCH_PEAK_H
#define MOEC_TOOLS_MOEBENCH_PEAK_H

namespace moebench {

/// GFLOP/s of `threads` threads each running independent AVX-512 FMA chains
/// (AVX2 FMA where there is no AVX-512) on registers for about `seconds`:
/// what the generated code is measured against. The best of five (the
/// machines are shared: a slow attempt is another tenant, not the core).
double measureFp32PeakGflops(unsigned threads, double seconds = 0.3);

} // namespace moebench

#endif
