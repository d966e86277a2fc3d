// REQUIRES: matplotlib
// moe-bench --sweep --plot draws the sweep with matplotlib into an SVG.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moe-bench --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 1 --warmup 0 --peak-gflops 100 --sweep "tokens=32,64; parallel=none,dp" --devices 2 --json %t/s.json --plot %t/s.svg | FileCheck %s
// RUN: FileCheck %s --check-prefix=SVG < %t/s.svg
// CHECK: sweep: plot written to {{.*}}s.svg
// SVG: <svg
// SVG: throughput vs batch (tokens)
// SVG: parallel=dp
// SVG: share of the machine's peak vs tokens
