// Llama-4-Scout's MoE layer (family llama4) at its real size, in bf16: hidden
// 5120, mlp_dim 8192 (intermediate_size), experts 16 (num_local_experts),
// top-k 1 (num_experts_per_tok), shared expert 8192 (intermediate_size,
// ungated). Top 1 of the logits, sigmoid(logit) scales the expert's input;
// gate_up_proj [E, H, 2M] in halves (gate first), down_proj [E, M, H], as
// stacked in the checkpoint.
func.func @moe_block(%x: tensor<?x5120xbf16>, %router: tensor<5120x16xbf16>,
                     %w13: tensor<16x5120x16384xbf16>, %w2: tensor<16x8192x5120xbf16>,
                     %sw13: tensor<5120x16384xbf16>, %sw2: tensor<8192x5120xbf16>)
    -> tensor<?x5120xbf16> {
  %y = moe.block %x router(%router : tensor<5120x16xbf16>)
         gate_up(%w13 : tensor<16x5120x16384xbf16>) down(%w2 : tensor<16x8192x5120xbf16>)
         shared_gate_up(%sw13 : tensor<5120x16384xbf16>) shared_down(%sw2 : tensor<8192x5120xbf16>)
         top 1 scoring sigmoid weight_input family llama4
         : tensor<?x5120xbf16>
  return %y : tensor<?x5120xbf16>
}
