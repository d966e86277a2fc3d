// Ring expert parallelism (seeds' `ring_ag_rs`): tokens are sharded over the
// `expert` axis too. Each shard all-gathers the token rows and logits of its
// expert group, computes its local experts over all of them, and a
// reduce-scatter returns every shard the summed rows of its own tokens.
// 8 experts over expert=2, 64 tokens per shard.
shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}

func.func @ep_ring_shard(%x: tensor<64x64xf32>, %logits: tensor<64x8xf32>,
                         %w13: tensor<4x64x96xf32>, %w2: tensor<4x48x64xf32>)
    -> tensor<64x64xf32> {
  %x_all = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<64x64xf32> -> tensor<128x64xf32>
  %l_all = moe.all_gather %logits over @mesh ["expert"] dim 0 : tensor<64x8xf32> -> tensor<128x8xf32>
  %ids, %w = moe.route %l_all top 2 : tensor<128x8xf32>

  %shard = shard.process_multi_index on @mesh axes = [0] : index
  %c4 = arith.constant 4 : index
  %first = arith.muli %shard, %c4 : index
  %first_i32 = arith.index_cast %first : index to i32
  %shift = tensor.splat %first_i32 : tensor<128x2xi32>
  %local_ids = arith.subi %ids, %shift : tensor<128x2xi32>

  %rows, %sorted_w, %perm, %sizes = moe.pack %x_all, %local_ids, %w experts 8 local 4
      : tensor<128x64xf32>, tensor<128x2xi32>, tensor<128x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<256x64xf32>, tensor<4x64x96xf32>, tensor<4xi32>
  %a = moe.swiglu %h : tensor<256x96xf32>
  %d = moe.gmm %a, %w2, %sizes : tensor<256x48xf32>, tensor<4x48x64xf32>, tensor<4xi32>
  %partial = moe.combine %d, %perm, %w : tensor<256x64xf32>, tensor<256xi32>, tensor<128x2xf32>
  %y = moe.reduce_scatter %partial over @mesh ["expert"] dim 0 : tensor<128x64xf32> -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
