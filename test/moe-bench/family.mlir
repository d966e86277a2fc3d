// moe-bench --family: each open model's layer with the family's routing
// over the distribution's logits and the family's experts, named on its
// RESULT line and in the JSON; the f32 and bf16 forward, a training step
// (every weight's gradient, the expert biases and the shared gate among
// them), and the refusals. (The numbers are measured: only their form is
// checked.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: for f in mixtral qwen2_moe qwen3_moe olmoe deepseek_v2 deepseek_v3 gpt_oss llama4; do moe-bench --family $f --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --distribution random --iters 1 --warmup 0 --threads 2 --peak-gflops 100; done | FileCheck %s
// RUN: moe-bench --family deepseek_v3 --groups 4 --topk-groups 2 --routed-scaling 1.5 --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 4 --dtype bf16 --distribution runs --iters 1 --warmup 0 --peak-gflops 100 --json %t/v3.json | FileCheck %s --check-prefix=V3
// RUN: FileCheck %s --check-prefix=JSON < %t/v3.json
// RUN: moe-bench --family gpt_oss --bench-pass forward_backward --tokens 32 --hidden 32 --mlp-dim 16 --experts 4 --topk 2 --distribution random --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=TRAIN
// RUN: moe-bench --family qwen2_moe --bench-pass forward_backward --tokens 32 --hidden 32 --mlp-dim 16 --experts 4 --topk 2 --distribution random --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=TRAIN-QWEN2
// RUN: not moe-bench --family gemma --tokens 64 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not moe-bench --family mixtral --groups 4 --tokens 64 2>&1 | FileCheck %s --check-prefix=GROUPS
// RUN: not moe-bench --groups 4 --tokens 64 2>&1 | FileCheck %s --check-prefix=NOFAMILY
// RUN: not moe-bench --family gpt_oss --impl baseline --tokens 64 2>&1 | FileCheck %s --check-prefix=IMPL
// RUN: not moe-bench --family llama4 --stage-timing --tokens 64 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not moe-bench --family deepseek_v3 --tokens 64 --experts 8 --topk 8 --groups 4 --topk-groups 1 2>&1 | FileCheck %s --check-prefix=FIT
// RUN: not moe-bench --family mixtral --null-route-frac-list 0.5 --tokens 64 2>&1 | FileCheck %s --check-prefix=NULLS
// RUN: not moe-bench --family deepseek_v3 --null-route-frac-list 0.5 --renormalize-real-after-null --tokens 64 2>&1 | FileCheck %s --check-prefix=NULLS-V3
// RUN: moe-bench --family olmoe --null-route-frac-list 0.5 --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --distribution random --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=NULLS-OK

// CHECK: RESULT {{.*}} quant=none family=mixtral
// CHECK: RESULT {{.*}} quant=none family=qwen2_moe
// CHECK: RESULT {{.*}} quant=none family=qwen3_moe
// CHECK: RESULT {{.*}} quant=none family=olmoe
// CHECK: RESULT {{.*}} quant=none family=deepseek_v2
// CHECK: RESULT {{.*}} quant=none family=deepseek_v3
// CHECK: RESULT {{.*}} quant=none family=gpt_oss
// CHECK: RESULT {{.*}} quant=none family=llama4

// V3: run: distribution=runs {{.*}} dtype=bf16 {{.*}} shared_expert_dim=24
// V3: RESULT distribution=runs {{.*}} dtype=bf16 {{.*}} family=deepseek_v3
// JSON: "shared_expert_dim": 24, "family": "deepseek_v3"

// TRAIN: RESULT {{.*}} pass=forward_backward {{.*}} family=gpt_oss
// TRAIN-QWEN2: RESULT {{.*}} pass=forward_backward {{.*}} family=qwen2_moe

// UNKNOWN: error: --family must be one of mixtral, qwen2_moe, qwen3_moe, olmoe, deepseek_v2, deepseek_v3, gpt_oss, llama4 (got 'gemma')
// GROUPS: error: --groups, --topk-groups and --routed-scaling are DeepSeek's: --family mixtral has none
// NOFAMILY: error: --groups, --topk-groups and --routed-scaling apply to --family deepseek_v2 or deepseek_v3
// IMPL: error: --family gpt_oss keeps gate and up in one interleaved weight with its biases: --impl fused_w13 or scatter
// STAGES: error: --family times the family's block whole: --stage-timing and --queue-mode prequeue cut the plain block's stages
// FIT: error: --family deepseek_v3: 4 groups keeping 1 do not fit 8 experts and top-8
// NULLS: error: --family mixtral renormalises its routing weights, and with null routing the block renormalises the real weights after the nulling too: give --renormalize-real-after-null to say so
// NULLS-V3: error: --family deepseek_v3 renormalises and then scales its routing weights (2.5): null routing's renormalisation after the nulling would undo the scaling
// NULLS-OK: RESULT {{.*}} null_target=0.5 {{.*}} family=olmoe
