// The seeds' top-k 8 case (logbook 001): tokens 32768, hidden 2048, mlp_dim
// 1408, experts 60, top-k 8, shared expert 5632, fused_w13.
func.func @moe_block(%x: tensor<32768x2048xf32>, %logits: tensor<32768x60xf32>,
                     %w13: tensor<60x2048x2816xf32>, %w2: tensor<60x1408x2048xf32>,
                     %sw1: tensor<2048x5632xf32>, %sw3: tensor<2048x5632xf32>,
                     %sw2: tensor<5632x2048xf32>) -> tensor<32768x2048xf32> {
  %y = moe.block %x logits(%logits : tensor<32768x60xf32>)
         gate_up(%w13 : tensor<60x2048x2816xf32>) down(%w2 : tensor<60x1408x2048xf32>)
         shared_gate_up(%sw1, %sw3 : tensor<2048x5632xf32>, tensor<2048x5632xf32>)
         shared_down(%sw2 : tensor<5632x2048xf32>)
         top 8 : tensor<32768x2048xf32>
  return %y : tensor<32768x2048xf32>
}
