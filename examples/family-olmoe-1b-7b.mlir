// OLMoE-1B-7B's MoE layer (family olmoe) at its real size, in bf16: hidden
// 2048, mlp_dim 1024 (intermediate_size), experts 64 (num_experts), top-k 8
// (num_experts_per_tok). Softmax over the 64 experts, top 8, not renormalised
// (norm_topk_prob false); no shared expert.
func.func @moe_block(%x: tensor<?x2048xbf16>, %router: tensor<2048x64xbf16>,
                     %w13: tensor<64x2048x2048xbf16>, %w2: tensor<64x1024x2048xbf16>)
    -> tensor<?x2048xbf16> {
  %y = moe.block %x router(%router : tensor<2048x64xbf16>)
         gate_up(%w13 : tensor<64x2048x2048xbf16>) down(%w2 : tensor<64x1024x2048xbf16>)
         top 8 order softmax_then_topk family olmoe
         : tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}
