// Mixtral's MoE layer (family mixtral), small, in f32: hidden 64, mlp_dim 96,
// experts 8, top-k 2. The router is a weight (logits = x @ w_router); softmax
// over all 8 experts, top 2, the two weights renormalised to sum 1. Experts
// are w2 @ (silu(w1 x) * (w3 x)) with w13 = [w1 | w3].
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x8xf32>,
                     %w13: tensor<8x64x192xf32>, %w2: tensor<8x96x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x8xf32>)
         gate_up(%w13 : tensor<8x64x192xf32>) down(%w2 : tensor<8x96x64xf32>)
         top 2 order softmax_then_topk renormalize family mixtral
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
