// The forward and backward of a routed block (fused_w13, no shared expert),
// written out with the primitives, as the training issue's backward pass will
// generate it. Routing is fixed (no router gradient), as in the seeds'
// forward_backward. Shapes: 128 tokens, hidden 64, mlp_dim 48, 8 experts,
// top-2. %dy is the gradient of the loss with respect to the block output
// (for the seeds' loss mean(y^2), dy = 2 * y / (T * H)).
func.func @moe_block_grad(%x: tensor<128x64xf32>, %logits: tensor<128x8xf32>,
                          %w13: tensor<8x64x96xf32>, %w2: tensor<8x48x64xf32>,
                          %dy: tensor<128x64xf32>)
    -> (tensor<128x64xf32>, tensor<8x64x96xf32>, tensor<8x48x64xf32>) {
  // Forward, keeping what the backward reads (remat policy `none`).
  %ids, %w = moe.route %logits top 2 : tensor<128x8xf32>
  %rows, %sorted_w, %perm, %sizes = moe.pack %x, %ids, %w experts 8
      : tensor<128x64xf32>, tensor<128x2xi32>, tensor<128x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<256x64xf32>, tensor<8x64x96xf32>, tensor<8xi32>
  %a = moe.swiglu %h : tensor<256x96xf32>

  // combine's adjoint: each row receives its token's gradient times its weight.
  %dy_rows = moe.gather_rows %dy, %perm top 2 : tensor<128x64xf32>, tensor<256xi32>
  %dd = moe.scale_rows %dy_rows, %sorted_w : tensor<256x64xf32>, tensor<256xf32>
  // Down projection: weight gradient (transposed grouped matmul) and the
  // gradient of its rows (grouped matmul with transposed weights).
  %dw2 = moe.tgmm %a, %dd, %sizes : tensor<256x48xf32>, tensor<256x64xf32>, tensor<8xi32>
  %da = moe.gmm %dd, %w2, %sizes transpose_rhs : tensor<256x64xf32>, tensor<8x48x64xf32>, tensor<8xi32>
  %dh = moe.swiglu_grad %da, %h : tensor<256x48xf32>, tensor<256x96xf32>
  // Up projection.
  %dw13 = moe.tgmm %rows, %dh, %sizes : tensor<256x64xf32>, tensor<256x96xf32>, tensor<8xi32>
  %drows = moe.gmm %dh, %w13, %sizes transpose_rhs : tensor<256x96xf32>, tensor<8x64x96xf32>, tensor<8xi32>
  // pack's adjoint: sum each token's K row gradients, unweighted.
  %dx = moe.combine %drows, %perm, %w preweighted : tensor<256x64xf32>, tensor<256xi32>, tensor<128x2xf32>
  return %dx, %dw13, %dw2 : tensor<128x64xf32>, tensor<8x64x96xf32>, tensor<8x48x64xf32>
}
