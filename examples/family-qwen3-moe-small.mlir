// Qwen3-MoE's MoE layer (family qwen3_moe), small, in f32: hidden 64, mlp_dim
// 32, experts 16, top-k 4. Softmax over all experts, top 4, renormalised
// (norm_topk_prob true); no shared expert.
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x16xf32>,
                     %w13: tensor<16x64x64xf32>, %w2: tensor<16x32x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x16xf32>)
         gate_up(%w13 : tensor<16x64x64xf32>) down(%w2 : tensor<16x32x64xf32>)
         top 4 order softmax_then_topk renormalize family qwen3_moe
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
