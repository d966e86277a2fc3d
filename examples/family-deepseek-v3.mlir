// DeepSeek-V3's MoE layer (family deepseek_v3) at its real size, in bf16 (the
// selection bias stays f32): hidden 7168, mlp_dim 2048
// (moe_intermediate_size), experts 256 (n_routed_experts) in 8 groups
// (n_group), top-k 8 (num_experts_per_tok), one shared expert of 2048
// (n_shared_experts 1). Sigmoid scores (scoring_func sigmoid); selection by
// s + e_score_correction_bias, groups scored by the sum of their top 2, the best
// 4 kept (topk_group), top 8 inside them (topk_method noaux_tc); the unbiased s
// of the chosen renormalised (norm_topk_prob true) and times 2.5
// (routed_scaling_factor).
func.func @moe_block(%x: tensor<?x7168xbf16>, %router: tensor<7168x256xbf16>,
                     %bias: tensor<256xf32>,
                     %w13: tensor<256x7168x4096xbf16>, %w2: tensor<256x2048x7168xbf16>,
                     %sw13: tensor<7168x4096xbf16>, %sw2: tensor<2048x7168xbf16>)
    -> tensor<?x7168xbf16> {
  %y = moe.block %x router(%router : tensor<7168x256xbf16>) selection_bias(%bias : tensor<256xf32>)
         gate_up(%w13 : tensor<256x7168x4096xbf16>) down(%w2 : tensor<256x2048x7168xbf16>)
         shared_gate_up(%sw13 : tensor<7168x4096xbf16>) shared_down(%sw2 : tensor<2048x7168xbf16>)
         top 8 scoring sigmoid order softmax_then_topk renormalize groups 8 topk_groups 4
         group_score top2_sum routed_scaling 2.5 family deepseek_v3
         : tensor<?x7168xbf16>
  return %y : tensor<?x7168xbf16>
}
