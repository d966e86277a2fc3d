// What moe-bench measures its results against. A quoted peak must bound the
// rate measured against it: above 100% of it, moe-bench warns that the peak
// is no upper bound (here a given one far too low); at a plausible peak, no
// warning. The DRAM read bandwidth is measured as the peak is (before and
// after the calls of each forward that reports against it, the best so far;
// --read-gbps gives it), and each forward
// whose weights do not fit in the last-level cache reports the bytes of the
// weights it reads per call (the experts its routing uses), their rate and
// its share of that bandwidth: the bound at decode sizes, with a warning
// above 100%. --llc-mib sets the cache the weights must exceed (a VM may
// describe 480 MiB of L3). HIGH measures the bandwidth: on a host busy with
// other tests it may measure less than the block then reads at, and warn
// so (rightly); only the FMA peak's warning is excluded there.
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 8 --topk 2 --iters 2 --peak-gflops 0.001 --read-gbps 10 | FileCheck %s --check-prefix=LOW --implicit-check-not=bandwidth:
// RUN: moe-bench --tokens 32 --hidden 512 --mlp-dim 512 --experts 64 --topk 2 --iters 2 --peak-gflops 100000 --llc-mib 32 | FileCheck %s --check-prefix=HIGH --implicit-check-not='FMA peak:'
// RUN: moe-bench --tokens 32 --hidden 512 --mlp-dim 512 --experts 64 --topk 2 --iters 2 --peak-gflops 100000 --llc-mib 32 --read-gbps 0.001 | FileCheck %s --check-prefix=SLOW
// RUN: moe-bench --tokens 32 --hidden 512 --mlp-dim 512 --experts 64 --topk-list 1,2 --iters 2 --peak-gflops 100000 --llc-mib 32 | FileCheck %s --check-prefix=TWO --implicit-check-not='(measured now)'
// RUN: moe-bench --tokens 4 --hidden 64 --mlp-dim 32 --experts 8 --topk 1 --iters 2 --peak-gflops 100000 | FileCheck %s --check-prefix=CACHED --implicit-check-not=weights: --implicit-check-not=bandwidth:
// RUN: moe-bench --tokens 32 --hidden 512 --mlp-dim 512 --experts 64 --topk 2 --iters 1 --peak-gflops 100000 --read-gbps 10 --bench-pass forward_backward | FileCheck %s --check-prefix=TRAIN --implicit-check-not=weights:

// LOW: time: median
// LOW: warning: {{[0-9.]+}}% of the FP32 FMA peak: that peak (0.0 GFLOP/s, given) is no upper bound; give the unit's real peak to --peak-gflops
// HIGH: bandwidth: {{[0-9.]+}} GB/s DRAM read, 2 threads (measured now)
// Each expert's weights: 3 x 512 x 512 f32, 3 MiB; 64 assignments use most
// of the 64 experts, far more than the 32 MiB cache given.
// HIGH: weights: {{[0-9]+}}.00 MiB read per call ({{[0-9]+}} of 64 experts), {{[0-9.]+}} GB/s, {{[0-9.]+}}% of the DRAM read bandwidth
// HIGH: RESULT {{.*}} weight_gbps={{[0-9.]+}} read_bandwidth_pct={{[0-9.]+}}
// A given bandwidth below what the block reads at is no upper bound either.
// SLOW: weights: {{.*}}% of the DRAM read bandwidth
// SLOW-NEXT: warning: {{[0-9.]+}}% of the DRAM read bandwidth: that bandwidth (0.0 GB/s, given) is no upper bound; give the machine's real one to --read-gbps
// Measured once, then again around each configuration's calls: a higher
// figure only replaces it, as `measured again, higher`.
// TWO: bandwidth: {{[0-9.]+}} GB/s DRAM read, 2 threads (measured now)
// TWO-NEXT: run: {{.*}} topk=1
// TWO: weights: {{.*}} of the DRAM read bandwidth
// TWO: RESULT {{.*}} topk=1
// TWO: weights: {{.*}} of the DRAM read bandwidth
// TWO: RESULT {{.*}} topk=2
// CACHED: RESULT
// TRAIN: RESULT
