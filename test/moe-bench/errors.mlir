// Bad options: one clear message, exit code 2, nothing run.
// RUN: not moe-bench --impl fastest 2>&1 | FileCheck %s --check-prefix=IMPL
// RUN: not moe-bench --topk 0 2>&1 | FileCheck %s --check-prefix=TOPK
// RUN: not moe-bench --topk-list 2,x 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not moe-bench --bench-pass backward 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not moe-bench --threads 0 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not moe-bench --tuning-table %t.none 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: not moe-bench --experts 100000 --hidden 65536 --mlp-dim 65536 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not moe-bench --tune --gmm-tiling mr=6 2>&1 | FileCheck %s --check-prefix=TUNE

// IMPL: moe-bench: error: --impl must be one of baseline, fused_w13, preweight, scatter (got 'fastest')
// TOPK: moe-bench: error: top-k 0 must be in 1..60
// LIST: moe-bench: error: --topk-list: 'x' is not an integer
// PASS: moe-bench: error: --bench-pass must be forward or forward_backward (got 'backward')
// THREADS: moe-bench: error: --threads must be a positive integer (got '0')
// TABLE: moe-bench: error: tuning table '{{.*}}.none' does not exist (make it with --tune)
// MEMORY: moe-bench: error: this configuration needs about {{[0-9]+}} GB, more than this machine's {{[0-9]+}} GB
// TUNE: moe-bench: error: --tune searches the tiles; do not give --gmm-tiling with it
