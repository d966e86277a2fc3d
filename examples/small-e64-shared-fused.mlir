// seed-e64-shared-fused, small and in bf16: experts 64, top-k 2, hidden 64,
// mlp_dim 64, shared 176 fused.
func.func @moe_block(%x: tensor<?x64xbf16>, %logits: tensor<?x64xf32>,
                     %w13: tensor<64x64x128xbf16>, %w2: tensor<64x64x64xbf16>,
                     %sw13: tensor<64x352xbf16>, %sw2: tensor<176x64xbf16>) -> tensor<?x64xbf16> {
  %y = moe.block %x logits(%logits : tensor<?x64xf32>)
         gate_up(%w13 : tensor<64x64x128xbf16>) down(%w2 : tensor<64x64x64xbf16>)
         shared_gate_up(%sw13 : tensor<64x352xbf16>) shared_down(%sw2 : tensor<176x64xbf16>)
         top 2 : tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}
