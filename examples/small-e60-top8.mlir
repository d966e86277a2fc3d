// seed-e60-top8, small: experts 60, top-k 8, hidden 64, mlp_dim 44, shared 88,
// fused w13, preweight (routing weight applied before the down projection)
// and the counting-sort pack with the scatter combine.
func.func @moe_block(%x: tensor<?x64xf32>, %logits: tensor<?x60xf32>,
                     %w13: tensor<60x64x88xf32>, %w2: tensor<60x44x64xf32>,
                     %sw13: tensor<64x176xf32>, %sw2: tensor<88x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x logits(%logits : tensor<?x60xf32>)
         gate_up(%w13 : tensor<60x64x88xf32>) down(%w2 : tensor<60x44x64xf32>)
         shared_gate_up(%sw13 : tensor<64x176xf32>) shared_down(%sw2 : tensor<88x64xf32>)
         top 8 pack_strategy counting combine_strategy scatter preweight : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
