// Qwen2-MoE's MoE layer (family qwen2_moe), small, in f32: hidden 64, mlp_dim
// 32, experts 12, top-k 4, shared expert 128. Softmax over all experts, top 4,
// not renormalised (norm_topk_prob false). The shared expert (a SwiGLU MLP,
// sw13 = [gate | up]) is scaled per token by sigmoid(x @ w_gate), w_gate [H, 1]
// (shared_expert_gate).
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x12xf32>,
                     %w13: tensor<12x64x64xf32>, %w2: tensor<12x32x64xf32>,
                     %sw13: tensor<64x256xf32>, %sw2: tensor<128x64xf32>,
                     %wg: tensor<64x1xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x12xf32>)
         gate_up(%w13 : tensor<12x64x64xf32>) down(%w2 : tensor<12x32x64xf32>)
         shared_gate_up(%sw13 : tensor<64x256xf32>) shared_down(%sw2 : tensor<128x64xf32>)
         shared_gate(%wg : tensor<64x1xf32>)
         top 4 order softmax_then_topk family qwen2_moe
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
