// Gmms with hand-written lowerings (kept by moe-select-lowering) whose
// weights span several column blocks, the last one partial, and several
// depth blocks: what a packed block's offsets are tested on. KIND is
// replaced by the test: fma (panels of nr 32 in blocks of 64, or of nr 16
// in blocks of 48; depth blocks of 32) or the bf16 dot kind (pairs, blocks
// of 32 columns).
func.func @blocks(%x: tensor<?x96xDT>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                  %w1: tensor<4x96x80xDT>, %w3: tensor<4x96x80xDT>, %w13: tensor<4x96x160xDT>,
                  %w2: tensor<4x80x160xDT>) -> (tensor<?x160xDT>, tensor<?x80xDT>) {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 4 : tensor<?x96xDT>, tensor<?x2xi32>, tensor<?x2xf32>
  %g = moe.gmm %rows, %w1, %sizes {moe.lowering = #moe.gmm_lowering<KIND, fuse = ["swiglu"]>} : tensor<?x96xDT>, tensor<4x96x80xDT>, tensor<4xi32>
  %u = moe.gmm %rows, %w3, %sizes {moe.lowering = #moe.gmm_lowering<KIND, fuse = ["swiglu"]>} : tensor<?x96xDT>, tensor<4x96x80xDT>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x80xDT>, tensor<?x80xDT>
  %h = moe.gmm %rows, %w13, %sizes {moe.lowering = #moe.gmm_lowering<KIND, fuse = ["swiglu"]>} : tensor<?x96xDT>, tensor<4x96x160xDT>, tensor<4xi32>
  %b = moe.swiglu %h : tensor<?x160xDT>
  %s = arith.addf %a, %b : tensor<?x80xDT>
  %d = moe.gmm %s, %w2, %sizes {moe.lowering = #moe.gmm_lowering<KIND>} : tensor<?x80xDT>, tensor<4x80x160xDT>, tensor<4xi32>
  return %d, %s : tensor<?x160xDT>, tensor<?x80xDT>
}
