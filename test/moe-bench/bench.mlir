// moe-bench on a small shape: the seeds' lines for each top-k, distribution
// and queue mode; stage timing; the JSON file; the routing for the peers; a
// tuning table that the compiler then reads. (The numbers are measured, so
// only their form is checked; speed is judged by benchmarks, not tests.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk-list 1,3 --distribution both --queue-mode both --stage-timing --iters 2 --warmup 0 --threads 2 --json %t/r.json --dump-routing %t/routing --peak-gflops 100 | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t/r.json
// RUN: ls %t/routing/random-top3 %t/routing/runs-top1 | FileCheck %s --check-prefix=ROUTING
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 1 --tune --tuning-table %t/table.txt --peak-gflops 100 --dtype bf16 --impl baseline | FileCheck %s --check-prefix=TUNE
// RUN: FileCheck %s --check-prefix=TABLE < %t/table.txt
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 1 --tuning-table %t/table.txt --peak-gflops 100 --dtype bf16 --impl preweight | FileCheck %s --check-prefix=READ
// bf16 is measured against the AMX BF16 peak where its gmms run on tiles,
// else (no AMX, or the FMA backend forced) against FP32 FMA.
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 1 --dtype bf16 --backend microkernel-fma --threads 1 | FileCheck %s --check-prefix=FMA
// FMA: peak: {{[0-9.]+}} GFLOP/s FP32 FMA, 1 threads (measured now)
// FMA: backend=microkernel-fma dtype=bf16

// CHECK: peak: 100.0 GFLOP/s FP32 FMA, 2 threads (given)
// CHECK: run: distribution=random pass=forward impl=fused_w13 backend=microkernel dtype=f32 tokens=64 hidden=32 mlp_dim=24 experts=6 topk=1
// CHECK: load: assignments=64 real=64 null=0 rows_per_expert min={{[0-9]+}} mean=10.7
// CHECK: time: median {{[0-9.]+}} ms
// The hypervisor's steal over the timed calls (Linux's /proc/stat; on a
// machine of its own, 0.00 s): calls this short give no share on a machine
// of a few CPUs (steal.mlir runs long enough for one).
// CHECK-NEXT: steal: {{[0-9]+\.[0-9][0-9]}} s of CPU time held back by the hypervisor over the timed calls{{(, [0-9]+\.[0-9]% of the machine's CPU time \(/proc/stat\)| \(/proc/stat; under 1 s of the machine's CPU time, too short for a share at its 0.01 s ticks\))$}}
// CHECK: stages: route {{.*}} pack {{.*}} up {{.*}} down {{.*}} combine {{.*}}; pack+combine {{[0-9.]+}}% of the stages
// Then the stages inside the timed function, the prepared block: the up gmm
// one kernel with the gather and the SwiGLU fused.
// CHECK: stages inside @moe_block_prepared (medians of 2; speed-up from 1 to 2 threads):
// CHECK: the call {{[0-9.]+}} ms 100.0%
// CHECK: RESULT distribution=random mode=full pass=forward impl=fused_w13 backend=microkernel topk=1 null_target=0 null_realized=0.0000 null_assignments=0 real_assignments=64 tflops={{[0-9.]+}} tokens_per_s={{[0-9.]+}} dtype=f32 peak_pct={{[0-9.]+}}
// The prequeued block's weights are packed once too.
// CHECK: prepare: the prequeued block's weights prepared once in {{[0-9.]+}} ms; the timed calls pack none
// CHECK: RESULT distribution=random mode=prequeue
// CHECK: run: distribution=runs
// CHECK: RESULT distribution=runs mode=full {{.*}} topk=1
// CHECK: RESULT distribution=runs mode=prequeue {{.*}} topk=1
// CHECK: RESULT distribution=random mode=full {{.*}} topk=3 {{.*}} real_assignments=192
// CHECK: RESULT distribution=runs mode=prequeue {{.*}} topk=3

// JSON: "peak_gflops": 100
// JSON: "peak_kind": "FP32 FMA"
// JSON: {"distribution": "random", "mode": "full", "pass": "forward", "impl": "fused_w13", "backend": "microkernel", "dtype": "f32", "tokens": 64
// JSON-SAME: "steal_s": {{[0-9.e-]+}}
// JSON-SAME: "stages_s": {"route":
// JSON-SAME: "block_stages": [{"name": "route 64x1", "median_s": {{[0-9.e-]+}}, "one_thread_s": {{[0-9.e-]+}}}, {"name": "pack 64x32",
// JSON-SAME: {"name": "gather+gmm+swiglu 64x48"
// JSON-SAME: {"name": "gmm 64x32"
// JSON-SAME: {"name": "combine 64x32"
// JSON-COUNT-7: {"distribution":

// ROUTING: ids.npy
// ROUTING: weights.npy

// TUNE: peak: 100.0 GFLOP/s {{FP32 FMA|AMX BF16|AVX512_BF16}}, {{[0-9]+}} threads (given)
// TUNE: tune: up D=32,N=24,swiglu=1,bytes=2 -> mr={{[0-9]+}},nv={{[0-9]+}},kc={{[0-9]+}},nc={{[0-9]+}},mc={{[0-9]+}}, {{[0-9.]+}} GFLOP/s (cost model mr={{[0-9]+}},nv={{[0-9]+}},{{.*}}), stored in {{.*}}table.txt
// TUNE: tune: down D=24,N=32,swiglu=0,bytes=2 -> {{.*}}, stored in
// TUNE: RESULT {{.*}} impl=baseline {{.*}} dtype=bf16

// TABLE: # moec gmm tuning table
// TABLE-DAG: D=32,N=24,swiglu=1,bytes=2 mr=
// TABLE-DAG: D=24,N=32,swiglu=0,bytes=2 mr=

// READ: RESULT {{.*}} impl=preweight
