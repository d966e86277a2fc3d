// Mixtral-8x7B's MoE layer (family mixtral) at its real size, in bf16 as the
// checkpoint stores it: hidden 4096, mlp_dim 14336 (intermediate_size),
// experts 8 (num_local_experts), top-k 2 (num_experts_per_tok). Softmax over
// the 8 experts, top 2, renormalised. w13 [E, H, 2M] stacks the checkpoint's
// w1 (gate) and w3 (up) transposed; w2 [E, M, H].
func.func @moe_block(%x: tensor<?x4096xbf16>, %router: tensor<4096x8xbf16>,
                     %w13: tensor<8x4096x28672xbf16>, %w2: tensor<8x14336x4096xbf16>)
    -> tensor<?x4096xbf16> {
  %y = moe.block %x router(%router : tensor<4096x8xbf16>)
         gate_up(%w13 : tensor<8x4096x28672xbf16>) down(%w2 : tensor<8x14336x4096xbf16>)
         top 2 order softmax_then_topk renormalize family mixtral
         : tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}
