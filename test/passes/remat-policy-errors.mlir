// RUN: moe-opt %s -verify-diagnostics -moe-generate-backward -moe-remat="policy=expert_mlp activation-budget=100"
// RUN: not moe-opt %s -moe-generate-backward -moe-remat=policy=bogus 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not moe-opt %s -moe-generate-backward -moe-remat=policy=auto 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not moe-opt %s -moe-generate-backward -moe-remat="policy=auto activation-budget=-7" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// A fixed policy is checked against the budget when one is given.
// expected-error@+1 {{moe-remat: policy expert_mlp keeps 6936 bytes for the backward of @block_forward_backward, over activation-budget 100 (policy auto picks what fits)}}
func.func @block(%x: tensor<32x16xf32>, %logits: tensor<32x4xf32>, %w13: tensor<4x16x24xf32>,
                 %w2: tensor<4x12x16xf32>) -> tensor<32x16xf32> {
  %y = moe.block %x logits(%logits : tensor<32x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
// POLICY: moe-opt: for the --policy option: must be none, expert_mlp, combine or auto (got 'bogus')
// BUDGET: remat-policy-errors.mlir:8:1: error: moe-remat: policy auto needs activation-budget=BYTES
// NEGATIVE: remat-policy-errors.mlir:8:1: error: moe-remat: activation-budget must be a number of bytes (got -7)
