// Llama-4's MoE layer (family llama4), small, in f32: hidden 64, mlp_dim 64,
// experts 8, top-k 1, shared expert 64. Top 1 of the logits, its weight
// sigmoid(logit), applied to the expert's INPUT (x * w enters the expert) and
// not to its output; gate_up [E, H, 2M] in halves (gate first). The shared
// expert (ungated SwiGLU) runs on x and is added.
func.func @moe_block(%x: tensor<?x64xf32>, %router: tensor<64x8xf32>,
                     %w13: tensor<8x64x128xf32>, %w2: tensor<8x64x64xf32>,
                     %sw13: tensor<64x128xf32>, %sw2: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%router : tensor<64x8xf32>)
         gate_up(%w13 : tensor<8x64x128xf32>) down(%w2 : tensor<8x64x64xf32>)
         shared_gate_up(%sw13 : tensor<64x128xf32>) shared_down(%sw2 : tensor<64x64xf32>)
         top 1 scoring sigmoid weight_input family llama4
         : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
