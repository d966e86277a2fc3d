// A bf16 block whose gate/up weight has more values (8 x 512 x 1280, 5.2M)
// than the MPI bf16 all-reduce widens at once (4M): its gradient is summed
// in two pieces (sharded-mpi.mlir).
func.func @block(%x: tensor<16x512xbf16>, %logits: tensor<16x8xf32>,
                 %w13: tensor<8x512x1280xbf16>, %w2: tensor<8x640x512xbf16>) -> tensor<16x512xbf16> {
  %y = moe.block %x logits(%logits : tensor<16x8xf32>) gate_up(%w13 : tensor<8x512x1280xbf16>)
         down(%w2 : tensor<8x640x512xbf16>) top 2 renormalize : tensor<16x512xbf16>
  return %y : tensor<16x512xbf16>
}
