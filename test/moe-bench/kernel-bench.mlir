// moe-kernel-bench: each kernel kind alone on a small gmm, checked against
// the reference loops before it is timed. (Only the form of the numbers is
// checked; speed is judged by benchmarks, not tests.)
// RUN: moe-kernel-bench --kernel fma,int8_vector --rows 12 --depth 40 --columns 24 --tiles 2,2,16,32,12 --packed-columns 64 --repeat 2 | FileCheck %s
// RUN: moe-kernel-bench --kernel fma --bf16 --swiglu --gather --rows 13 --depth 33 --columns 20 --tiles 2,2,16,32,12 --repeat 1 --threads 2 | FileCheck %s --check-prefix=FUSED
// RUN: not moe-kernel-bench --kernel nonsense 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not moe-kernel-bench --tiles 1,2,3 2>&1 | FileCheck %s --check-prefix=TILES
// RUN: not moe-kernel-bench --threads 0 2>&1 | FileCheck %s --check-prefix=THREADS
// A kind the attribute's verifier refuses (nc not a multiple of 16 nv).
// RUN: not moe-kernel-bench --kernel fma --tiles 2,2,16,24,12 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: host: {{.*}}
// CHECK: gmm: one group of 12 rows x depth 40 x 24 columns, 1 thread, tiles mr,nv,kc,nc,mc=2,2,16,32,12 packed_columns=64 dot_rows=48
// CHECK: kernel fma: median {{[0-9.]+}} ms (2 calls), {{[0-9.]+}} GFLOP/s, {{[0-9]+}}% of the FP32 FMA peak ({{[0-9.]+}} GFLOP/s measured now); {{[0-9.]+}}x the reference loops ({{[0-9.]+}} ms); max error {{.*}} of max |expected|{{$}}
// CHECK: kernel int8_vector: median {{[0-9.]+}} ms (2 calls), {{[0-9.]+}} GOP/s, no peak loop for this unit; {{.*}} of max |expected|{{$}}

// FUSED: gmm: one group of 13 rows x depth 33 x 40 weight columns (SwiGLU fused), 2 threads
// FUSED: kernel fma: median {{.*}} of max |expected|{{$}}

// UNKNOWN: moe-kernel-bench: no kernel kind 'nonsense' (the registry has: fma avx512bf16_dot amx_bf16 int8_vector int8_avx2 int8_vnni amx_int8)
// TILES: moe-kernel-bench: --tiles wants mr,nv,kc,nc,mc (five integers), got '1,2,3'
// THREADS: moe-kernel-bench: --threads must be a positive integer (got '0')
// BAD: moe-kernel-bench: fma: the gmm program does not parse:
// BAD: nc=24 must be a multiple of the register tile's 32 columns
