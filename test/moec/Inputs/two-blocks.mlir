// Two moe.block functions: --parallel-mode plans for one block.
func.func @first(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
func.func @second(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                  %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 1 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
