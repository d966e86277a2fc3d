// The expert-parallel comparison of docs/sharding.md: f32 forward, 4096 tokens,
// hidden 2048, mlp_dim 1408, 60 experts, top-8, no shared expert. Run with
// moec run bench/ep-forward-4096.mlir --random-inputs --threads 2 [--mesh expert=2 --ep-dispatch D].
func.func @moe_block(%x: tensor<4096x2048xf32>, %logits: tensor<4096x60xf32>,
                     %w13: tensor<60x2048x2816xf32>, %w2: tensor<60x1408x2048xf32>) -> tensor<4096x2048xf32> {
  %y = moe.block %x logits(%logits : tensor<4096x60xf32>)
         gate_up(%w13 : tensor<60x2048x2816xf32>) down(%w2 : tensor<60x1408x2048xf32>)
         top 8 : tensor<4096x2048xf32>
  return %y : tensor<4096x2048xf32>
}
