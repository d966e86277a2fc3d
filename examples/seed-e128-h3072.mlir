// A wide block from the seeds' sweeps: hidden 3072, mlp_dim 3072, experts 128,
// top-k 2, shared expert 8192 fused (family B's shared size), bf16 storage
// with f32 accumulation. The token count is left dynamic.
func.func @moe_block(%x: tensor<?x3072xbf16>, %logits: tensor<?x128xf32>,
                     %w13: tensor<128x3072x6144xbf16>, %w2: tensor<128x3072x3072xbf16>,
                     %sw13: tensor<3072x16384xbf16>, %sw2: tensor<8192x3072xbf16>)
    -> tensor<?x3072xbf16> {
  %y = moe.block %x logits(%logits : tensor<?x128xf32>)
         gate_up(%w13 : tensor<128x3072x6144xbf16>) down(%w2 : tensor<128x3072x3072xbf16>)
         shared_gate_up(%sw13 : tensor<3072x16384xbf16>) shared_down(%sw2 : tensor<8192x3072xbf16>)
         top 2 : tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}
