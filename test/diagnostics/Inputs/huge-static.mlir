// Not a test: input of memory.mlir. A million tokens into experts of
// 65536 hidden units: 64 MiB of tokens, 24 MiB of weights, and a gate/up
// activation of 2e6 rows x 131072 = 1 TiB.
func.func @block(%x: tensor<1000000x16xf32>, %logits: tensor<1000000x2xf32>,
                 %w13: tensor<2x16x131072xf32>, %w2: tensor<2x65536x16xf32>) -> tensor<1000000x16xf32> {
  %y = moe.block %x logits(%logits : tensor<1000000x2xf32>) gate_up(%w13 : tensor<2x16x131072xf32>)
         down(%w2 : tensor<2x65536x16xf32>) top 2 : tensor<1000000x16xf32>
  return %y : tensor<1000000x16xf32>
}
