// moe-bench --quant-mode: the weights quantized once before the timed runs,
// the relative error of every output against the f32 block on the same
// inputs beside the speed, quant and rel_error in RESULT and JSON; every
// mode, both weight scales, bf16 inputs, stage timing, the training form.
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 6 --topk 2 --shared-expert-dim 32 --quant-mode int8 --iters 1 --warmup 0 --json %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 6 --topk 2 --shared-expert-dim 32 --quant-mode int8_routed --quant-weight-scales expert --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=ROUTED
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 6 --topk 2 --quant-mode fake_int8 --dtype bf16 --impl baseline --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=FAKE
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 6 --topk 2 --quant-mode int8 --stage-timing --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=STAGES
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 6 --topk 2 --quant-mode int8 --bench-pass forward_backward --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=TRAIN
// RUN: moe-bench --tokens 256 --hidden 64 --mlp-dim 32 --experts 6 --topk 2 --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=NONE

// Measured against the int8 unit's peak (AMX INT8, AVX512_VNNI or AVX2
// VPMADDWD, whichever the host's int8 kind runs on; FP32 FMA for the i32
// vector task on a CPU without AVX2).
// CHECK: peak: {{[0-9.]+}} [[UNIT:GOP/s|GFLOP/s]] {{(AMX INT8|AVX512_VNNI|AVX2 VPMADDWD)|FP32 FMA}}, 2 threads (measured now)
// CHECK: quant: mode=int8 weight_scales=channel; weights quantized once in {{[0-9.]+}} ms ({{[0-9.]+}} MiB -> {{[0-9.]+}} MiB with scales){{(, packed for the kernels: the timed calls pack none)?$}}
// CHECK: quant: relative error against f32: y {{[0-9]\.[0-9]+E-0[23]}}
// The time line in the peak's unit (integer products: GOP/s).
// CHECK: time: median {{.*}} runs; {{[0-9.]+}} [[UNIT]], {{[0-9.]+}}% of peak
// CHECK: RESULT {{.*}} quant=int8 quant_weight_scales=channel rel_error={{[0-9]\.[0-9]+E-0[23]}}
// JSON: "quant": "int8", "quant_weight_scales": "channel", "rel_error": {{0\.0[0-9]+}}, "rel_errors": {"y": {{0\.0[0-9]+}}}

// int8_routed leaves the shared expert's weights float: the routed ones are
// quantized (scales per expert) and packed as int8 quads, the shared
// expert's packed as f32 panels, all once (a VNNI, AMX or AVX2 host packs
// the int8 ones; int8_vector reads them in place, the float ones are packed
// either way).
// ROUTED: peak: 100.0 {{GOP/s (AMX INT8|AVX512_VNNI|AVX2 VPMADDWD)|GFLOP/s FP32 FMA}}, 2 threads (given)
// ROUTED: quant: mode=int8_routed weight_scales=expert; weights quantized once in {{[0-9.]+}} ms (0.2 MiB -> 0.1 MiB with scales), packed for the kernels: the timed calls pack none
// ROUTED: RESULT {{.*}} quant=int8_routed quant_weight_scales=expert rel_error=

// FAKE: peak: 100.0 GFLOP/s {{.*}}, 2 threads (given)
// FAKE: quant: mode=fake_int8
// FAKE: quant: relative error against f32: y {{[0-9]\.[0-9]+E-0[123]}}
// FAKE: RESULT {{.*}} dtype=bf16 {{.*}} quant=fake_int8

// A given --peak-gflops is taken in the int8 unit's rate (GOP/s; GFLOP/s
// for the FP32 fallback without AVX2).
// STAGES: peak: 100.0 {{GOP/s (AMX INT8|AVX512_VNNI|AVX2 VPMADDWD)|GFLOP/s FP32 FMA}}, 2 threads (given)
// STAGES: stages: route {{.*}} up {{.*}} down
// STAGES: gmm: up {{[0-9.]+}} G{{OP|FLOP}}/s, down {{[0-9.]+}} G{{OP|FLOP}}/s
// STAGES: RESULT {{.*}} quant=int8

// The training form: every output of the forward_backward compared.
// TRAIN: quant: relative error against f32: loss {{.*}} dx {{.*}} dw13 {{.*}} dw2
// TRAIN: RESULT {{.*}} pass=forward_backward {{.*}} quant=int8 quant_weight_scales=channel rel_error=

// The float block: no error fields (the hypervisor's steal's share, where
// the timed calls' window allows one, is the last field).
// NONE: RESULT {{.*}} quant=none{{( steal_pct=[0-9]+\.[0-9])?$}}
