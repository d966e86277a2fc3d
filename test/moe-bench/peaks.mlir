// What moe-bench measures its results against. A quoted peak must bound the
// rate measured against it: above 100% of it, moe-bench warns that the peak
// is no upper bound (here a given one far too low); at a plausible peak, no
// warning. The DRAM read bandwidth is measured as the peak is, and each
// forward reports the bytes of the weights it reads per call (the experts
// its routing uses, and the shared expert's), their rate and its share of
// that bandwidth: the bound at decode sizes.
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 8 --topk 2 --iters 2 --peak-gflops 0.001 | FileCheck %s --check-prefix=LOW
// RUN: moe-bench --tokens 4 --hidden 64 --mlp-dim 32 --experts 8 --topk 1 --shared-expert-dim 16 --iters 2 --peak-gflops 100000 | FileCheck %s --check-prefix=HIGH --implicit-check-not=warning
// RUN: moe-bench --tokens 4 --hidden 64 --mlp-dim 32 --experts 8 --topk 1 --iters 2 --peak-gflops 100000 --bench-pass forward_backward | FileCheck %s --check-prefix=TRAIN --implicit-check-not=weights:

// LOW: time: median
// LOW: warning: {{[0-9.]+}}% of the FP32 FMA peak: that peak (0.0 GFLOP/s, given) is no upper bound; give the unit's real peak to --peak-gflops
// HIGH: bandwidth: {{[0-9.]+}} GB/s DRAM read, 2 threads (measured now)
// 4 tokens at top-1 use at most 4 of the 8 experts: each 3 x 64 x 32 f32
// (24 KiB), and the shared expert 3 x 64 x 16 f32 (12 KiB).
// HIGH: weights: {{0.0[4-9]|0.1[01]}} MiB read per call ({{[1-4]}} of 8 experts), {{[0-9.]+}} GB/s, {{[0-9.]+}}% of the DRAM read bandwidth
// HIGH: RESULT {{.*}} weight_gbps={{[0-9.]+}} read_bandwidth_pct={{[0-9.]+}}
// TRAIN: RESULT
