// moe-bench --hf-config: the layer a model's config.json describes (family,
// sizes, routing knobs) with random weights of its shapes; without --layer
// the first MoE layer (Qwen3-MoE's layer 0 is dense here: decoder_sparse_step
// 2). The numbers are measured: only their form is checked.
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"model_type": "qwen3_moe", "hidden_size": 32, "moe_intermediate_size": 24, "intermediate_size": 64, "num_experts": 8, "num_experts_per_tok": 2, "norm_topk_prob": true, "num_hidden_layers": 4, "decoder_sparse_step": 2}' > %t/config.json
// RUN: moe-bench --hf-config %t/config.json --tokens 64 --distribution random --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s
// RUN: moe-bench --hf-config %t/config.json --layer 3 --dtype bf16 --bench-pass forward_backward --tokens 32 --distribution random --iters 1 --warmup 0 --peak-gflops 100 | FileCheck %s --check-prefix=TRAIN
// RUN: echo '{"model_type": "deepseek_v3", "hidden_size": 32, "moe_intermediate_size": 16, "intermediate_size": 64, "n_routed_experts": 16, "num_experts_per_tok": 4, "n_shared_experts": 1, "n_group": 4, "topk_group": 2, "routed_scaling_factor": 2.5, "norm_topk_prob": true, "num_hidden_layers": 3, "first_k_dense_replace": 1, "moe_layer_freq": 1, "topk_method": "noaux_tc", "scoring_func": "sigmoid"}' > %t/v3.json
// RUN: moe-bench --hf-config %t/v3.json --tokens 64 --distribution random --iters 1 --warmup 0 --peak-gflops 100 --json %t/v3-result.json | FileCheck %s --check-prefix=V3
// RUN: FileCheck %s --check-prefix=V3-JSON < %t/v3-result.json
// RUN: not moe-bench --hf-config %t/config.json --hidden 64 --tokens 64 2>&1 | FileCheck %s --check-prefix=SIZES
// RUN: not moe-bench --hf-config %t/config.json --family mixtral --tokens 64 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not moe-bench --layer 1 --tokens 64 2>&1 | FileCheck %s --check-prefix=NOCONFIG
// RUN: not moe-bench --hf-config %t/config.json --layer 0 --tokens 64 2>&1 | FileCheck %s --check-prefix=DENSE
// RUN: not moe-bench --hf-config %t/missing.json --tokens 64 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: run: distribution=random {{.*}} tokens=64 hidden=32 mlp_dim=24 experts=8 topk=2 shared_expert_dim=0
// CHECK: RESULT {{.*}} family=qwen3_moe
// TRAIN: RESULT {{.*}} pass=forward_backward {{.*}} dtype=bf16 {{.*}} family=qwen3_moe
// V3: run: {{.*}} hidden=32 mlp_dim=16 experts=16 topk=4 shared_expert_dim=16
// V3: RESULT {{.*}} family=deepseek_v3
// V3-JSON: "shared_expert_dim": 16, "family": "deepseek_v3"
// SIZES: moe-bench: error: --hf-config sets the layer's sizes and routing: drop --hidden
// BOTH: moe-bench: error: give --hf-config or --family, not both
// NOCONFIG: moe-bench: error: --layer applies to --hf-config
// DENSE: moe-bench: error: {{.*}}config.json: layer 0 of this qwen3_moe model is a dense MLP, not an MoE block
// MISSING: moe-bench: error: {{.*}}missing.json
