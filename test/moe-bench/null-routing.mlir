// moe-bench's benchmark null routing (semantics doc, section 6): each
// fraction's RESULT line carries the target, the realized fraction and the
// null/real assignment counts the block computed with; FLOPs count real
// assignments only; the sweep runs 0.1..0.9; take_until_null and the
// renormalisation reach the block; sharded blocks split the draws.
// RUN: moe-bench --tokens 256 --hidden 32 --mlp-dim 24 --experts 6 --topk 4 --null-route-frac-list 0,0.5,1 --iters 1 --warmup 0 --peak-gflops 100 --json %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --null-route-sweep --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=SWEEP
// RUN: moe-bench --tokens 256 --hidden 32 --mlp-dim 24 --experts 6 --topk 4 --null-route-frac 0.5 --null-routing-mode take_until_null --renormalize-real-after-null --bench-pass forward_backward --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=UNTIL
// RUN: moe-bench --tokens 256 --hidden 32 --mlp-dim 24 --experts 6 --topk 4 --null-route-frac 0.5 --stage-timing --queue-mode both --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=STAGES
// RUN: moe-bench --tokens 256 --hidden 32 --mlp-dim 24 --experts 6 --topk 4 --null-route-frac 0.5 --parallel-mode ep --ep-dispatch ring --devices 2 --iters 1 --warmup 0 --peak-gflops 100 --link-gbps 10 | FileCheck %s --check-prefix=RING
// RUN: moe-bench --tokens 256 --hidden 32 --mlp-dim 24 --experts 6 --topk 4 --null-route-frac 0.5 --parallel-mode dp --devices 2 --bench-pass forward_backward --iters 1 --warmup 0 --peak-gflops 100 --link-gbps 10 | FileCheck %s --check-prefix=DP

// CHECK: null: target 0.000 realized 0.0000 (independent); null slots cost no compute, FLOPs count the 1024 real assignments
// CHECK: RESULT {{.*}} topk=4 null_target=0 null_realized=0.0000 null_assignments=0 real_assignments=1024 {{.*}} null_mode=independent renormalize_real_after_null=false
// CHECK: load: assignments=1024 real=[[REAL:[0-9]+]] null=[[NULL:[0-9]+]]
// CHECK: RESULT {{.*}} topk=4 null_target=0.5 null_realized=0.{{4[5-9]|5[0-4]}}{{[0-9]+}} null_assignments=[[NULL]] real_assignments=[[REAL]]
// Every slot null: no routed work at all.
// CHECK: RESULT {{.*}} null_target=1 null_realized=1.0000 null_assignments=1024 real_assignments=0 tflops=0.0000
// JSON: "null_target": 0.5, "null_mode": "independent", "renormalize_real_after_null": false
// JSON-SAME: "null_assignments": {{[0-9]+}}

// SWEEP-COUNT-9: RESULT {{.*}} null_target=0.{{[1-9]}} null_realized
// SWEEP-NOT: RESULT

// UNTIL: null: target 0.500 realized 0.{{[0-9]+}} (take_until_null, real weights renormalised)
// UNTIL: RESULT {{.*}} pass=forward_backward {{.*}} null_target=0.5 {{.*}} null_mode=take_until_null renormalize_real_after_null=true

// STAGES: stages: route
// STAGES: RESULT {{.*}} mode=full {{.*}} null_target=0.5
// STAGES: RESULT {{.*}} mode=prequeue {{.*}} null_target=0.5

// RING: parallel: ep-ring on data=1,expert=2
// RING: RESULT {{.*}} null_target=0.5 {{.*}} parallel=ep-ring

// DP: RESULT {{.*}} pass=forward_backward {{.*}} null_target=0.5 {{.*}} parallel=dp
