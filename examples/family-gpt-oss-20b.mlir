// gpt-oss-20b's MoE layer (family gpt_oss) at its real size, in bf16 (the
// checkpoint's bf16 form; the released one stores the experts in MXFP4):
// hidden 2880, mlp_dim 2880 (intermediate_size), experts 32
// (num_local_experts), top-k 4 (num_experts_per_tok). Logits = x @ router +
// router.bias, top 4, softmax over the 4. gate_up_proj [E, H, 2M] (interleaved
// gate/up columns) + gate_up_proj_bias [E, 2M], activation gpt_oss (alpha
// 1.702, limit 7.0), down_proj [E, M, H] + down_proj_bias [E, H]; already
// [in, out] and stacked in the checkpoint.
func.func @moe_block(%x: tensor<?x2880xbf16>, %router: tensor<2880x32xbf16>,
                     %router_b: tensor<32xbf16>,
                     %w13: tensor<32x2880x5760xbf16>, %b13: tensor<32x5760xbf16>,
                     %w2: tensor<32x2880x2880xbf16>, %b2: tensor<32x2880xbf16>)
    -> tensor<?x2880xbf16> {
  %y = moe.block %x router(%router : tensor<2880x32xbf16>) router_bias(%router_b : tensor<32xbf16>)
         gate_up(%w13 : tensor<32x2880x5760xbf16>) gate_up_bias(%b13 : tensor<32x5760xbf16>)
         down(%w2 : tensor<32x2880x2880xbf16>) down_bias(%b2 : tensor<32x2880xbf16>)
         top 4 activation gpt_oss alpha 1.702 limit 7.0 interleaved family gpt_oss
         : tensor<?x2880xbf16>
  return %y : tensor<?x2880xbf16>
}
