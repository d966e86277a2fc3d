// DeepSeek-V3's MoE layer (family deepseek_v3), small, in f32: hidden 64,
// mlp_dim 32, experts 32 in 8 groups of 4, top-k 8, one shared expert of 32.
// Sigmoid scores s; the experts are chosen by s + b (b the f32
// e_score_correction_bias): each group scored by the sum of its two largest
// s + b, the best 4 groups kept, top 8 of s + b inside them. The weights are
// the unbiased s of the chosen, renormalised (norm_topk_prob true), times 2.5
// (routed_scaling_factor). The shared expert is an ungated SwiGLU MLP.
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x32xf32>,
                     %bias: tensor<32xf32>,
                     %w13: tensor<32x64x64xf32>, %w2: tensor<32x32x64xf32>,
                     %sw13: tensor<64x64xf32>, %sw2: tensor<32x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x32xf32>) selection_bias(%bias : tensor<32xf32>)
         gate_up(%w13 : tensor<32x64x64xf32>) down(%w2 : tensor<32x32x64xf32>)
         shared_gate_up(%sw13 : tensor<64x64xf32>) shared_down(%sw2 : tensor<32x64xf32>)
         top 8 scoring sigmoid order softmax_then_topk renormalize groups 8 topk_groups 4
         group_score top2_sum routed_scaling 2.5 family deepseek_v3
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
