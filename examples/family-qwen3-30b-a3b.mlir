// Qwen3-30B-A3B's MoE layer (family qwen3_moe) at its real size, in bf16:
// hidden 2048, mlp_dim 768 (moe_intermediate_size), experts 128 (num_experts),
// top-k 8 (num_experts_per_tok). Softmax over the 128 experts, top 8,
// renormalised (norm_topk_prob true); no shared expert.
func.func @moe_block(%x: tensor<?x2048xbf16>, %router: tensor<2048x128xbf16>,
                     %w13: tensor<128x2048x1536xbf16>, %w2: tensor<128x768x2048xbf16>)
    -> tensor<?x2048xbf16> {
  %y = moe.block %x router(%router : tensor<2048x128xbf16>)
         gate_up(%w13 : tensor<128x2048x1536xbf16>) down(%w2 : tensor<128x768x2048xbf16>)
         top 8 order softmax_then_topk renormalize family qwen3_moe
         : tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}
