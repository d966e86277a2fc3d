// moe-bench --sweep: one process per point of the grid (last axis fastest),
// a progress line after each with the time left, every RESULT line passed
// on, one JSON and one CSV with the point's axes first.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --iters 1 --warmup 0 --peak-gflops 100 --sweep "topk=1,2; null=0,0.5; dtype=f32,bf16" --json %t/s.json --csv %t/s.csv | FileCheck %s
// RUN: FileCheck %s --check-prefix=CSV < %t/s.csv
// RUN: FileCheck %s --check-prefix=JSON < %t/s.json
// A point that fails is reported with its last lines; the others still run
// and are written; the exit code says so.
// RUN: not moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --iters 1 --warmup 0 --peak-gflops 100 --sweep "topk=2,9" --json %t/f.json 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: FileCheck %s --check-prefix=FAILJSON < %t/f.json
// Errors in the sweep itself.
// RUN: not moe-bench --sweep "topk=1; width=2" 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not moe-bench --sweep "topk=1; topk=2" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not moe-bench --sweep "topk" 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not moe-bench --topk 4 --sweep "topk=1,2" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not moe-bench --topk-list 2,4 --sweep "topk=1" 2>&1 | FileCheck %s --check-prefix=BOTHLIST
// RUN: not moe-bench --null-route-sweep --sweep "null=0,0.5" 2>&1 | FileCheck %s --check-prefix=BOTHNULL
// RUN: not moe-bench --csv %t/x.csv 2>&1 | FileCheck %s --check-prefix=NOSWEEP
// The outputs' directory is checked before any point runs.
// RUN: not moe-bench --sweep "topk=1" --json %t/nodir/s.json 2>&1 | FileCheck %s --check-prefix=NODIR

// CHECK: sweep: 8 configurations over topk=1,2 null=0,0.5 dtype=f32,bf16
// CHECK: RESULT {{.*}} topk=1 null_target=0 {{.*}} dtype=f32
// CHECK: sweep: configuration 1 of 8 (topk=1 null=0 dtype=f32) done in {{[0-9.]+}} s; elapsed {{[0-9.]+}} s, about {{.*}} left
// CHECK: RESULT {{.*}} topk=1 null_target=0 {{.*}} dtype=bf16
// CHECK: sweep: configuration 2 of 8 (topk=1 null=0 dtype=bf16) done
// CHECK: sweep: configuration 3 of 8 (topk=1 null=0.5 dtype=f32) done
// CHECK: RESULT {{.*}} topk=2 null_target=0.5 {{.*}} dtype=bf16
// CHECK: sweep: configuration 8 of 8 (topk=2 null=0.5 dtype=bf16) done
// CHECK: sweep: 8 results written to {{.*}}s.json and {{.*}}s.csv

// CSV: sweep_topk,sweep_null,sweep_dtype,distribution,mode,pass,impl,backend,dtype,quant,tokens,hidden,mlp_dim,experts,topk,null_target,null_realized,null_assignments,real_assignments,median_s,tflops,tokens_per_s,peak_pct,peak_gflops,peak_kind
// CSV-NEXT: 1,0,f32,random,full,forward,fused_w13,microkernel,f32,none,64,32,24,6,1,0,0,0,64,
// CSV-COUNT-7: {{^[12],0(.5)?,(f32|bf16),random,full}}
// Each result carries its point and the peak it was measured against (bf16
// and f32 differ); the sweep's axes come last (keys are sorted).
// f32 and bf16 points measure different peaks where the CPU has
// AVX512_BF16; without it both are FP32 FMA.
// JSON: "peak_kind": "{{per result|FP32 FMA}}",
// JSON: "results": [
// JSON: "dtype": "f32",
// JSON: "peak_gflops": 100,
// JSON: "sweep": {
// JSON-NEXT: "dtype": "f32",
// JSON-NEXT: "null": "0",
// JSON-NEXT: "topk": "1"
// JSON: "order": [
// JSON-NEXT: "topk",
// JSON-NEXT: "null",
// JSON-NEXT: "dtype"

// FAIL: sweep: configuration 1 of 2 (topk=2) done
// FAIL: sweep: topk=9 failed (exit 2); its last lines:
// FAIL-NEXT: moe-bench: error: top-k 9 must be in 1..6
// FAIL: sweep: configuration 2 of 2 (topk=9) FAILED
// FAIL: sweep: 1 results written
// FAIL: moe-bench: error: 1 of 2 configurations failed
// FAILJSON: "failed": 1
// AXIS: moe-bench: error: --sweep: unknown axis 'width' (axes: tokens, hidden, mlp_dim, experts, topk, null, dtype, quant, parallel, ep_dispatch, pass, impl)
// TWICE: moe-bench: error: --sweep: axis 'topk' given twice
// FORM: moe-bench: error: --sweep: 'topk' is not axis=value,value
// BOTH: moe-bench: error: --sweep sets --topk (axis topk); do not give --topk as well
// BOTHLIST: moe-bench: error: --sweep sets --topk (axis topk); do not give --topk-list as well
// BOTHNULL: moe-bench: error: --sweep sets --null-route-frac (axis null); do not give --null-route-sweep as well
// NOSWEEP: moe-bench: error: --csv and --plot write a sweep's results: give --sweep
// NODIR: moe-bench: error: {{.*}}nodir/s.json: No such file or directory
// NODIR-NOT: sweep: configuration
