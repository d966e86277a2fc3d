// RUN: moe-opt %s -moe-lower-to-loops -split-input-file -verify-diagnostics

func.func @unexpanded(%x: tensor<?x16xf32>, %l: tensor<?x4xf32>, %w13: tensor<4x16x24xf32>, %w2: tensor<4x12x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{moe.block must be expanded before lowering (run -moe-expand-block first, or the moe-to-llvm pipeline)}}
  %y = moe.block %x logits(%l : tensor<?x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>) down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
func.func @collective(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'moe.psum' is a collective and has no single-device lowering; compile the per-shard program with a sharded pipeline}}
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}
