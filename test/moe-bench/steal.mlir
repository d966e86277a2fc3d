// The hypervisor's steal over the timed calls (tooling/CpuSteal.h, Linux's
// /proc/stat): over at least 1 s of the machine's CPU time (here 40 calls
// of about 13 GFLOP each, over a second of two cores' time on the hosts
// this runs on) moe-bench quotes the steal's share of it beside the
// seconds, in the RESULT line (its last field) and the JSON too (with
// each call's own); weights taken as cached, no bandwidth measured. The
// figures are the host's, so only their form is checked (0.0% on a
// machine of its own).
// RUN: moe-bench --tokens 2048 --hidden 1024 --mlp-dim 512 --experts 8 --topk 2 --iters 40 --warmup 1 --peak-gflops 100000 --llc-mib 1024 --json %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json

// CHECK: time: median {{[0-9.]+}} ms
// CHECK-NEXT: steal: {{[0-9]+\.[0-9][0-9]}} s of CPU time held back by the hypervisor over the timed calls, {{[0-9]+\.[0-9]}}% of the machine's CPU time (/proc/stat)
// CHECK: RESULT {{.*}} steal_pct={{[0-9]+\.[0-9]}}{{$}}
// JSON: "steal_s": {{[0-9.e-]+}}, "steal_pct": {{[0-9.e-]+}}
// Each call's own steal too, in order (the sum over the calls is steal_s).
// JSON-SAME: "steal_calls_s": [{{([0-9.e-]+, ){39}[0-9.e-]+}}]
