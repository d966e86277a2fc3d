// The seeds' Qwen-like family A (logbooks 001 and 002): tokens 32768, hidden
// 2048, mlp_dim 2048, experts 64, top-k 2, shared expert 5632 with
// shared_fused (one matmul against sw13 = [sw1 | sw3]).
func.func @moe_block(%x: tensor<32768x2048xf32>, %logits: tensor<32768x64xf32>,
                     %w13: tensor<64x2048x4096xf32>, %w2: tensor<64x2048x2048xf32>,
                     %sw13: tensor<2048x11264xf32>, %sw2: tensor<5632x2048xf32>)
    -> tensor<32768x2048xf32> {
  %y = moe.block %x logits(%logits : tensor<32768x64xf32>)
         gate_up(%w13 : tensor<64x2048x4096xf32>) down(%w2 : tensor<64x2048x2048xf32>)
         shared_gate_up(%sw13 : tensor<2048x11264xf32>) shared_down(%sw2 : tensor<5632x2048xf32>)
         top 2 : tensor<32768x2048xf32>
  return %y : tensor<32768x2048xf32>
}
