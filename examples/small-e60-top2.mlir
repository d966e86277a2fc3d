// seed-e60-top2 at a size that runs in milliseconds: experts stay 60 (not a
// power of two), hidden 64, mlp_dim 44, shared 88, dynamic token count,
// baseline w1/w3 instead of fused w13.
func.func @moe_block(%x: tensor<?x64xf32>, %logits: tensor<?x60xf32>,
                     %w1: tensor<60x64x44xf32>, %w3: tensor<60x64x44xf32>, %w2: tensor<60x44x64xf32>,
                     %sw1: tensor<64x88xf32>, %sw3: tensor<64x88xf32>, %sw2: tensor<88x64xf32>)
    -> tensor<?x64xf32> {
  %y = moe.block %x logits(%logits : tensor<?x60xf32>)
         gate_up(%w1, %w3 : tensor<60x64x44xf32>, tensor<60x64x44xf32>) down(%w2 : tensor<60x44x64xf32>)
         shared_gate_up(%sw1, %sw3 : tensor<64x88xf32>, tensor<64x88xf32>) shared_down(%sw2 : tensor<88x64xf32>)
         top 2 : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
