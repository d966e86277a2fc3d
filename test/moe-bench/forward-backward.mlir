// moe-bench --bench-pass forward_backward: the generated training step under
// each remat policy, with what each keeps for the backward and recomputes
// (the numbers moe-remat-report prints for this shape), the time ratio to
// none beside the ratio its recomputed FLOPs predict, and the RESULT line.
// --remat-mode is --remat's older name (an alias, comma lists too): the bad-policy line uses it.
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --bench-pass forward_backward --remat none,expert_mlp,combine,auto --activation-budget 60000 --iters 1 --warmup 0 --threads 2 --peak-gflops 100 --json %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: not moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --bench-pass forward_backward --remat-mode bogus 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --bench-pass forward_backward --remat auto 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --remat expert_mlp 2>&1 | FileCheck %s --check-prefix=FORWARD
// RUN: not moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --bench-pass forward_backward --queue-mode prequeue 2>&1 | FileCheck %s --check-prefix=PREQUEUE
// --stage-timing times the training step's own stages inside it, at 2
// threads and at 1, forward and backward (bwd), with each stage's share and
// speed-up, and writes them to the JSON.
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --bench-pass forward_backward --remat expert_mlp --stage-timing --iters 2 --warmup 0 --threads 2 --peak-gflops 100 --json %t-stages.json | FileCheck %s --check-prefix=STAGES
// RUN: FileCheck %s --check-prefix=STAGES-JSON < %t-stages.json
// RUN: not moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --bench-pass forward_backward --remat auto --activation-budget -5 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --bench-pass forward_backward --remat-mode auto --activation-budget 10 --iters 1 --peak-gflops 100 2>&1 | FileCheck %s --check-prefix=TIGHT

// A = 128 rows: none keeps rows 16384 B, h 24576, a 12288, y 8192 and the
// routing; expert_mlp recomputes the up gmm (2*128*32*48) and swiglu
// (5*128*24).
// CHECK: run: distribution=random pass=forward_backward
// CHECK: remat: policy=none kept_bytes=[[NONE:[0-9]+]] ({{.*}} MiB) recomputed_flops=0 (0.0% of the step's FLOPs)
// CHECK: RESULT distribution=random mode=full pass=forward_backward impl=fused_w13 backend=microkernel topk=2 {{.*}} real_assignments=128 tflops={{[0-9.]+}} tokens_per_s={{[0-9.]+}} dtype=f32 peak_pct={{[0-9.]+}} remat=none kept_bytes=[[NONE]] recomputed_flops=0
// CHECK: remat: policy=expert_mlp kept_bytes={{[0-9]+}} ({{.*}} MiB) recomputed_flops=408576
// CHECK: remat: expert_mlp takes {{[0-9.]+}}x the time of none; its recomputed FLOPs predict 1.231x
// CHECK: RESULT {{.*}} remat=expert_mlp
// CHECK: remat: policy=combine
// CHECK: RESULT {{.*}} remat=combine
// CHECK: remat: policy=auto {{.*}}, auto under 60000 bytes
// CHECK: RESULT {{.*}} remat=auto

// JSON: "pass": "forward_backward"
// JSON-SAME: "remat": "none", "kept_bytes": {{[0-9]+}}, "recomputed_flops": 0
// JSON: "remat": "expert_mlp", "kept_bytes": {{[0-9]+}}, "recomputed_flops": 408576

// POLICY: moe-bench: for the --remat option: must be none, expert_mlp, combine or auto (got 'bogus')
// BUDGET: moe-bench: error: --remat auto needs --activation-budget BYTES
// FORWARD: moe-bench: error: --remat and --activation-budget apply to --bench-pass forward_backward
// PREQUEUE: moe-bench: error: --queue-mode prequeue times the forward's stages; use it with --bench-pass forward
// The forward's stages cut apart are not timed for a training step.
// STAGES: time: median
// STAGES-NOT: stages:
// STAGES: stages inside @moe_block_forward_backward (medians of 2; speed-up from 1 to 2 threads):
// STAGES: all stages {{[0-9.]+}} ms {{[0-9.]+}}% {{[0-9.]+}}x
// STAGES-NEXT: outside the marks {{[0-9.]+}} ms {{[0-9.]+}}%
// STAGES-NEXT: the call {{[0-9.]+}} ms 100.0% {{[0-9.]+}}x
// STAGES-NEXT: threads: {{[0-9.]+}}% of the stages' time is lost to the split over the threads, idle or slowed by what they share
// STAGES: RESULT {{.*}} remat=expert_mlp
// Every stage in program order. expert_mlp keeps no h, so the forward's up
// gmm fuses the gather and the SwiGLU (one stage); the backward recomputes
// h (the gather and the gmm, then the SwiGLU) for swiglu_grad.
// STAGES-JSON: "block_stages": [{"name": "route 64x2", "median_s": {{[0-9.e-]+}}, "one_thread_s": {{[0-9.e-]+}}}, {"name": "pack 128x32",
// STAGES-JSON-SAME: {"name": "gather+gmm+swiglu 128x48"
// STAGES-JSON-SAME: {"name": "gmm 128x32"
// STAGES-JSON-SAME: {"name": "combine 64x32"
// STAGES-JSON-SAME: {"name": "bwd gmm^T 128x24"
// STAGES-JSON-SAME: {"name": "bwd gather+gmm 128x48"
// STAGES-JSON-SAME: {"name": "bwd swiglu 128x24"
// STAGES-JSON-SAME: {"name": "bwd tgmm 6x24x32"
// STAGES-JSON-SAME: {"name": "bwd swiglu_grad 128x48"
// STAGES-JSON-SAME: {"name": "bwd gmm^T 128x32"
// STAGES-JSON-SAME: {"name": "bwd tgmm 6x32x48"
// STAGES-JSON-SAME: {"name": "bwd combine 64x32", "median_s": {{[0-9.e-]+}}, "one_thread_s": {{[0-9.e-]+}}}]
// TIGHT: moe-bench: error: moe-remat: no choice keeps @moe_block_forward_backward within 10 bytes for the backward; the least it can keep is {{[0-9]+}} bytes
// NEGATIVE: moe-bench: error: --activation-budget must be a number of bytes (got -5)
