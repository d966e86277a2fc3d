// Compact expert-parallel dispatch (seeds' logbook 001, "EP compact local
// dispatch"), written as the per-shard (SPMD) program on a (data=2, expert=2)
// mesh: 8 experts, 4 per expert shard. Tokens are split over `data` and
// replicated over `expert`; each shard gathers only the rows routed to its 4
// experts into a buffer of 256 rows (the local capacity), computes them, and
// the partial [T, H] outputs are summed over `expert`.
shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}

func.func @ep_compact_shard(%x: tensor<128x64xf32>, %logits: tensor<128x8xf32>,
                            %w13: tensor<4x64x96xf32>, %w2: tensor<4x48x64xf32>)
    -> tensor<128x64xf32> {
  %ids, %w = moe.route %logits top 2 : tensor<128x8xf32>

  // This shard's first expert is 4 x its index along "expert"; shifting the
  // ids by it makes the local experts 0..3. Every other id (another shard's
  // expert, or a null id) falls outside [0, 4) and belongs to no group.
  %shard = shard.process_multi_index on @mesh axes = [1] : index
  %c4 = arith.constant 4 : index
  %first = arith.muli %shard, %c4 : index
  %first_i32 = arith.index_cast %first : index to i32
  %shift = tensor.splat %first_i32 : tensor<128x2xi32>
  %local_ids = arith.subi %ids, %shift : tensor<128x2xi32>

  %rows, %sorted_w, %perm, %sizes = moe.pack %x, %local_ids, %w experts 8 local 4 capacity 256
      : tensor<128x64xf32>, tensor<128x2xi32>, tensor<128x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<256x64xf32>, tensor<4x64x96xf32>, tensor<4xi32>
  %a = moe.swiglu %h : tensor<256x96xf32>
  %d = moe.gmm %a, %w2, %sizes : tensor<256x48xf32>, tensor<4x48x64xf32>, tensor<4xi32>
  // Padding rows carry permutation -1 and add nothing.
  %partial = moe.combine %d, %perm, %w : tensor<256x64xf32>, tensor<256xi32>, tensor<128x2xf32>
  %y = moe.psum %partial over @mesh ["expert"] : tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}
