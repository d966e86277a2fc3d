// Not a test: input of memory.mlir. As huge-static.mlir with the token
// count dynamic: the plan cannot size the activation before the run.
func.func @block(%x: tensor<?x16xf32>, %logits: tensor<?x2xf32>,
                 %w13: tensor<2x16x131072xf32>, %w2: tensor<2x65536x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%logits : tensor<?x2xf32>) gate_up(%w13 : tensor<2x16x131072xf32>)
         down(%w2 : tensor<2x65536x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
