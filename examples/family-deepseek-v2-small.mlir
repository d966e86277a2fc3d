// DeepSeek-V2's MoE layer (family deepseek_v2), small, in f32, in the
// group-limited form of DeepSeek-V2 itself (topk_method
// group_limited_greedy; V2-Lite is greedy, see family-deepseek-v2-lite.mlir):
// hidden 64, mlp_dim 32, experts 16 in 8 groups of 2, top-k 4. Softmax over all
// experts; each group scored by its largest score, the best 3 groups kept
// (topk_group), top 4 inside them; the weights (not renormalised) times 16
// (routed_scaling_factor). Two shared experts (n_shared_experts 2) as one
// ungated SwiGLU MLP of 2 x 32 = 64.
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x16xf32>,
                     %w13: tensor<16x64x64xf32>, %w2: tensor<16x32x64xf32>,
                     %sw13: tensor<64x128xf32>, %sw2: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x16xf32>)
         gate_up(%w13 : tensor<16x64x64xf32>) down(%w2 : tensor<16x32x64xf32>)
         shared_gate_up(%sw13 : tensor<64x128xf32>) shared_down(%sw2 : tensor<64x64xf32>)
         top 4 order softmax_then_topk groups 8 topk_groups 3 group_score max
         routed_scaling 16.0 family deepseek_v2
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
