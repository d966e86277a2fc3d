// int8 gmms with hand-written lowerings (kept by moe-select-lowering)
// whose weights span several column blocks, the last one partial, and a
// depth (100) the int8 quads pad to 128: what a packed int8 block's offsets
// are tested on. The weights are quantized in the body (per output channel
// for the SwiGLU's, per expert for the down projection), so that moe-
// prepare-weights moves quantization and packing into one prepare function.
// KIND is replaced by the tests (int8_vnni; with amx_int8 in
// prepare-weights-int8-amx.mlir, on AMX hosts; int8_avx2 and int8_vector in
// prepare-weights-int8-avx2.mlir).
func.func @blocks(%x: tensor<?x100xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                  %w1: tensor<4x100x72xf32>, %w3: tensor<4x100x72xf32>, %w13: tensor<4x100x144xf32>,
                  %w2: tensor<4x72x100xf32>) -> (tensor<?x100xf32>, tensor<?x72xf32>) {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 4 : tensor<?x100xf32>, tensor<?x2xi32>, tensor<?x2xf32>
  %q1, %s1 = moe.quantize %w1 per_channel : tensor<4x100x72xf32>
  %q3, %s3 = moe.quantize %w3 per_channel : tensor<4x100x72xf32>
  %q13, %s13 = moe.quantize %w13 per_channel : tensor<4x100x144xf32>
  %q2, %s2 = moe.quantize %w2 per_expert : tensor<4x72x100xf32>
  %g = moe.gmm %rows, %q1, %sizes scales(%s1 : tensor<4x72xf32>) {moe.lowering = #moe.gmm_lowering<KIND, fuse = ["swiglu"]>} : tensor<?x100xf32>, tensor<4x100x72xi8>, tensor<4xi32>
  %u = moe.gmm %rows, %q3, %sizes scales(%s3 : tensor<4x72xf32>) {moe.lowering = #moe.gmm_lowering<KIND, fuse = ["swiglu"]>} : tensor<?x100xf32>, tensor<4x100x72xi8>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x72xf32>, tensor<?x72xf32>
  %h = moe.gmm %rows, %q13, %sizes scales(%s13 : tensor<4x144xf32>) {moe.lowering = #moe.gmm_lowering<KIND, fuse = ["swiglu"]>} : tensor<?x100xf32>, tensor<4x100x144xi8>, tensor<4xi32>
  %b = moe.swiglu %h : tensor<?x144xf32>
  %s = arith.addf %a, %b : tensor<?x72xf32>
  %d = moe.gmm %s, %q2, %sizes scales(%s2 : tensor<4xf32>) {moe.lowering = #moe.gmm_lowering<KIND>} : tensor<?x72xf32>, tensor<4x72x100xi8>, tensor<4xi32>
  return %d, %s : tensor<?x100xf32>, tensor<?x72xf32>
}
