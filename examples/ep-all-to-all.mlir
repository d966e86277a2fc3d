// All-to-all expert parallelism (GShard/DeepSpeed/DeepEP; not in the seeds'
// harness): every token row goes only to the shards that own its experts and
// comes back. 8 experts over expert=2 (4 each), 64 tokens per shard, top-2,
// a receive capacity of 192 rows.
shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}

func.func @ep_a2a_shard(%x: tensor<64x64xf32>, %logits: tensor<64x8xf32>,
                        %w13: tensor<4x64x96xf32>, %w2: tensor<4x48x64xf32>)
    -> tensor<64x64xf32> {
  %ids, %w = moe.route %logits top 2 : tensor<64x8xf32>
  // Sorting by global expert also sorts by destination shard.
  %rows, %sorted_w, %perm, %sizes = moe.pack %x, %ids, %w experts 8
      : tensor<64x64xf32>, tensor<64x2xi32>, tensor<64x2xf32>

  // Rows per destination shard: the sums of each shard's 4 group sizes.
  %sizes_2d = tensor.expand_shape %sizes [[0, 1]] output_shape [2, 4] : tensor<8xi32> into tensor<2x4xi32>
  %zero = arith.constant dense<0> : tensor<2xi32>
  %send = linalg.reduce ins(%sizes_2d : tensor<2x4xi32>) outs(%zero : tensor<2xi32>) dimensions = [1]
    (%in: i32, %acc: i32) {
      %s = arith.addi %in, %acc : i32
      linalg.yield %s : i32
    }

  // Each row travels with its destination-local expert id + 1, so that the
  // zero rows padding the receive buffer (id 0) belong to no local group.
  %flat = tensor.collapse_shape %ids [[0, 1]] : tensor<64x2xi32> into tensor<128xi32>
  %ids_col = tensor.expand_shape %flat [[0, 1]] output_shape [128, 1] : tensor<128xi32> into tensor<128x1xi32>
  %ids_sorted = moe.gather_rows %ids_col, %perm top 1 : tensor<128x1xi32>, tensor<128xi32>
  %four = arith.constant dense<4> : tensor<128x1xi32>
  %one = arith.constant dense<1> : tensor<128x1xi32>
  %local_ids = arith.remsi %ids_sorted, %four : tensor<128x1xi32>
  %local_ids_1 = arith.addi %local_ids, %one : tensor<128x1xi32>
  %recv, %recv_counts = moe.all_to_all %rows, %send over @mesh ["expert"]
      : tensor<128x64xf32>, tensor<2xi32> -> tensor<192x64xf32>
  %recv_ids, %unused = moe.all_to_all %local_ids_1, %send over @mesh ["expert"]
      : tensor<128x1xi32>, tensor<2xi32> -> tensor<192x1xi32>

  // Group the received rows by local expert (ids 1..4 are local), compute.
  %ones = arith.constant dense<1.0> : tensor<192x1xf32>
  %lrows, %lw, %lperm, %lsizes = moe.pack %recv, %recv_ids, %ones experts 5 offset 1 local 4
      : tensor<192x64xf32>, tensor<192x1xi32>, tensor<192x1xf32>
  %h = moe.gmm %lrows, %w13, %lsizes : tensor<192x64xf32>, tensor<4x64x96xf32>, tensor<4xi32>
  %a = moe.swiglu %h : tensor<192x96xf32>
  %d = moe.gmm %a, %w2, %lsizes : tensor<192x48xf32>, tensor<4x48x64xf32>, tensor<4xi32>
  // Back into receive order, back to the sending shards, then combine.
  %d_recv = moe.combine %d, %lperm, %ones preweighted : tensor<192x64xf32>, tensor<192xi32>, tensor<192x1xf32>
  %back, %back_counts = moe.all_to_all %d_recv, %recv_counts over @mesh ["expert"]
      : tensor<192x64xf32>, tensor<2xi32> -> tensor<128x64xf32>
  %y = moe.combine %back, %perm, %w : tensor<128x64xf32>, tensor<128xi32>, tensor<64x2xf32>
  return %y : tensor<64x64xf32>
}
