// seed-e128-h3072, small, in the model form of null routing (seeds' logbook
// 004): the router is a weight (logits = x @ w_router) scoring 128 real
// experts plus 32 null experts (f = 0.2: N_null = round(E*f/(1-f)) = 32);
// Mixtral-style softmax over all then top-k, real weights renormalised,
// every slot after a token's first null slot nulled.
func.func @moe_block(%x: tensor<?x96xf32>, %router: tensor<96x160xf32>,
                     %w13: tensor<128x96x192xf32>, %w2: tensor<128x96x96xf32>) -> tensor<?x96xf32> {
  %y = moe.block %x router(%router : tensor<96x160xf32>)
         gate_up(%w13 : tensor<128x96x192xf32>) down(%w2 : tensor<128x96x96xf32>)
         top 8 order softmax_then_topk renormalize null_experts 32 null_policy take_until_null
         : tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}
