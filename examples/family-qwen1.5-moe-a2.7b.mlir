// Qwen1.5-MoE-A2.7B's MoE layer (family qwen2_moe) at its real size, in bf16:
// hidden 2048, mlp_dim 1408 (moe_intermediate_size), experts 60 (num_experts),
// top-k 4 (num_experts_per_tok), shared expert 5632
// (shared_expert_intermediate_size). Softmax over the 60 experts, top 4, not
// renormalised (norm_topk_prob false); the shared expert's output times
// sigmoid(x @ w_gate) per token, w_gate [2048, 1] (shared_expert_gate).
func.func @moe_block(%x: tensor<?x2048xbf16>, %router: tensor<2048x60xbf16>,
                     %w13: tensor<60x2048x2816xbf16>, %w2: tensor<60x1408x2048xbf16>,
                     %sw13: tensor<2048x11264xbf16>, %sw2: tensor<5632x2048xbf16>,
                     %wg: tensor<2048x1xbf16>) -> tensor<?x2048xbf16> {
  %y = moe.block %x router(%router : tensor<2048x60xbf16>)
         gate_up(%w13 : tensor<60x2048x2816xbf16>) down(%w2 : tensor<60x1408x2048xbf16>)
         shared_gate_up(%sw13 : tensor<2048x11264xbf16>) shared_down(%sw2 : tensor<5632x2048xbf16>)
         shared_gate(%wg : tensor<2048x1xbf16>)
         top 4 order softmax_then_topk family qwen2_moe
         : tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}
