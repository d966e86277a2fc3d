// RUN: moe-opt %s -split-input-file -verify-diagnostics -moe-generate-backward -moe-remat="policy=auto activation-budget=100"

// Nothing keeps the forward_backward under 100 bytes: the sorted rows alone
// are 4096.
// expected-error@+1 {{moe-remat: no choice keeps @block_forward_backward within 100 bytes for the backward; the least it can keep is 4888 bytes}}
func.func @block(%x: tensor<32x16xf32>, %logits: tensor<32x4xf32>, %w13: tensor<4x16x24xf32>,
                 %w2: tensor<4x12x16xf32>) -> tensor<32x16xf32> {
  %y = moe.block %x logits(%logits : tensor<32x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

// auto weighs bytes: it needs every kept value's size.
// expected-error@+1 {{moe-remat: policy auto needs static shapes: @block_forward_backward keeps values of dynamic size for the backward}}
func.func @block(%x: tensor<?x16xf32>, %logits: tensor<?x4xf32>, %w13: tensor<4x16x24xf32>,
                 %w2: tensor<4x12x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%logits : tensor<?x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
