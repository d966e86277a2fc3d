// moe-bench's parallel modes on a small shape, every shard in-process: the
// plan, each shard's time, rows and TF/s, the busiest shard's traffic as
// counted by the runtime and as the cost model has it (equal where the
// routing does not decide it), the prediction against the measurement, and
// the RESULT fields. Speed is judged by benchmarks; the form and the
// counted bytes are checked here.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --iters 2 --warmup 0 --threads 2 --peak-gflops 100 --link-gbps 8 --parallel-mode ep --json %t/ep.json | FileCheck %s --check-prefix=EP
// RUN: FileCheck %s --check-prefix=JSON < %t/ep.json
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --iters 2 --warmup 0 --threads 2 --peak-gflops 100 --link-gbps 8 --parallel-mode dp --bench-pass forward_backward | FileCheck %s --check-prefix=DP
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --iters 2 --warmup 0 --threads 4 --peak-gflops 100 --link-gbps 8 --parallel-mode ep --ep-dispatch ring --mesh data=2,expert=2 | FileCheck %s --check-prefix=RING
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --iters 2 --warmup 0 --threads 2 --peak-gflops 100 --link-gbps 8 --parallel-mode ep --ep-dispatch a2a --bench-pass forward_backward | FileCheck %s --check-prefix=A2A
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --iters 2 --warmup 0 --threads 2 --peak-gflops 100 --link-gbps 8 --parallel-mode ep --capacity-factor 0.5 | FileCheck %s --check-prefix=DROP
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --iters 2 --warmup 0 --threads 2 --peak-gflops 100 --link-gbps 8 --parallel-mode auto | FileCheck %s --check-prefix=AUTO
// RUN: moe-bench --predict-only --devices 8 --tokens 65536 --experts 64 --bench-pass forward_backward --peak-gflops 100 --link-gbps 50 --link-latency-us 10 | FileCheck %s --check-prefix=PREDICT
// RUN: moe-bench --predict-only --devices 2 --tokens 4096 --core-gflops 50 --peak-gflops 100 --link-gbps 50 | FileCheck %s --check-prefix=GIVEN
// RUN: moe-bench --predict-only --devices 2 --tokens 4096 --threads 2 --dtype bf16 --quant-mode int8 --peak-gflops 100 --link-gbps 50 | FileCheck %s --check-prefix=INT8
// RUN: moe-bench --predict-only --devices 8 --tokens 65536 --experts 64 --bench-pass forward_backward --peak-gflops 100 --link-gbps 50 --link-latency-us 10 | grep -c "<- fastest" | FileCheck %s --check-prefix=ONE

// EP: parallel: ep-compact on data=1,expert=2, 2 shards in-process, 1 thread(s) each
// EP: shard 0: median {{.*}} ms, [[R0:[0-9]+]] rows, {{.*}} TF/s; 1 collectives, 0.008 MiB sent
// EP: shard 1: median {{.*}} ms, [[R1:[0-9]+]] rows,
// The psum of [64, 32] f32 over 2 shards: 2 x 1/2 x 8 KiB.
// EP: comm: busiest shard 0.008 MiB counted, 0.008 MiB modelled per call
// The model's core: 0.88 of the given peak over the run's threads.
// EP: model: predicted {{.*}} s (compute {{.*}} s, comm {{.*}} s), measured {{.*}} s: measured/predicted {{[0-9.]+}} (a core at 44.0 GFLOP/s, 0.88 of the FP32 FMA peak of 100.0 GFLOP/s over 2 threads){{$}}
// EP: RESULT {{.*}} real_assignments=128 {{.*}} parallel=ep-compact mesh=expert=2 shards=2 launcher=inprocess predicted_s={{.*}} comm_mib_counted=0.008 comm_mib_modelled=0.008 shard_tflops_min=
// JSON: "parallel": "ep-compact", "mesh": "expert=2", "shards": 2, "launcher": "inprocess", "predicted_s": {{.*}}, "comm_bytes_counted": 8192, "comm_bytes_modelled": 8192,

// DP's training step sums the weights' gradients over data (and the loss).
// DP: parallel: dp on data=2,expert=1, 2 shards in-process
// DP: shard 0: median {{.*}} ms, {{[0-9]+}} rows, {{.*}}; 3 collectives,
// DP: comm: busiest shard [[C:[0-9.]+]] MiB counted, [[C]] MiB modelled per call
// DP: RESULT {{.*}} pass=forward_backward {{.*}} parallel=dp mesh=data=2 shards=2

// RING: parallel: ep-ring on data=2,expert=2, 4 shards in-process, 1 thread(s) each
// RING: shard 3: median
// RING: comm: busiest shard [[C:[0-9.]+]] MiB counted, [[C]] MiB modelled per call

// A2A: parallel: ep-a2a on data=1,expert=2
// A2A: comm: busiest shard {{[0-9.]+}} MiB counted, {{[0-9.]+}} MiB modelled per call
// A2A: RESULT {{.*}} parallel=ep-a2a

// A capacity of max(4, 0.5 x 128 / 2) = 32 rows per shard.
// DROP: dropped: {{[0-9]+}} of 128 routed rows ({{.*}}%) past the expert capacity per call

// AUTO: model: core 44.0 GFLOP/s (0.88 of the FP32 FMA peak) x 1 per shard (half rate at 16 rows per expert, tgmm at 39, training at 0.89 of the rate)
// AUTO: model: dp on data=2,expert=1
// AUTO: model: ep-a2a on data=1,expert=2
// AUTO: parallel: {{.*}}, 2 shards in-process

// Extrapolated: 8 devices, every mesh and dispatch, the fastest marked.
// PREDICT: model: dp on data=8,expert=1
// PREDICT: model: ep-compact on data=4,expert=2
// PREDICT: model: ep-a2a on data=1,expert=8
// PREDICT-NOT: parallel:

// A rate given is said to be.
// GIVEN: model: core 50.0 GFLOP/s (given) x 1 per shard
// int8's units count operations, not floating-point ones: the rate is in
// the peak's unit (a host without AVX2 runs int8 on the FP32 FMA unit:
// tooling/GmmPeakUnit.cpp).
// INT8: model: core 44.0 {{GOP/s \(0.88 of the (AMX INT8|AVX512_VNNI|AVX2 VPMADDWD)|GFLOP/s \(0.88 of the FP32 FMA}} peak) x 1 per shard

// ONE: {{^}}1{{$}}
