// GPT-OSS's MoE layer (family gpt_oss), small, in f32: hidden 64, mlp_dim 64,
// experts 8, top-k 4. Logits = x @ w_router + b_router; top 4 of the logits,
// softmax over those 4. gate_up [E, H, 2M] with interleaved columns (gate
// 0::2, up 1::2) and its bias [E, 2M]; the clamped activation
// (up + 1) * gate * sigmoid(1.702 gate), gate <= 7, |up| <= 7; down [E, M, H]
// with its bias [E, H], added before the routing weight. No shared expert.
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x8xf32>, %router_b: tensor<8xf32>,
                     %w13: tensor<8x64x128xf32>, %b13: tensor<8x128xf32>,
                     %w2: tensor<8x64x64xf32>, %b2: tensor<8x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x8xf32>) router_bias(%router_b : tensor<8xf32>)
         gate_up(%w13 : tensor<8x64x128xf32>) gate_up_bias(%b13 : tensor<8x128xf32>)
         down(%w2 : tensor<8x64x64xf32>) down_bias(%b2 : tensor<8x64xf32>)
         top 4 activation gpt_oss alpha 1.702 limit 7.0 interleaved family gpt_oss
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
