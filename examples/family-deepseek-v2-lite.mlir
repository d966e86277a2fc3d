// DeepSeek-V2-Lite's MoE layer (family deepseek_v2) at its real size, in bf16:
// hidden 2048, mlp_dim 1408 (moe_intermediate_size), experts 64
// (n_routed_experts), top-k 6 (num_experts_per_tok). topk_method greedy with
// n_group 1 (so no groups), routed_scaling_factor 1.0 (the default),
// norm_topk_prob false: softmax over the 64 experts, top 6, not renormalised.
// Two shared experts (n_shared_experts 2) as one ungated SwiGLU MLP of
// 2 x 1408 = 2816. (The first layer, first_k_dense_replace 1, is dense.)
func.func @moe_block(%x: tensor<?x2048xbf16>, %router: tensor<2048x64xbf16>,
                     %w13: tensor<64x2048x2816xbf16>, %w2: tensor<64x1408x2048xbf16>,
                     %sw13: tensor<2048x5632xbf16>, %sw2: tensor<2816x2048xbf16>)
    -> tensor<?x2048xbf16> {
  %y = moe.block %x router(%router : tensor<2048x64xbf16>)
         gate_up(%w13 : tensor<64x2048x2816xbf16>) down(%w2 : tensor<64x1408x2048xbf16>)
         shared_gate_up(%sw13 : tensor<2048x5632xbf16>) shared_down(%sw2 : tensor<2816x2048xbf16>)
         top 6 order softmax_then_topk family deepseek_v2
         : tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}
