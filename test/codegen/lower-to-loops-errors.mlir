// RUN: moe-opt %s -moe-lower-to-loops -split-input-file -verify-diagnostics

func.func @unexpanded(%x: tensor<?x16xf32>, %l: tensor<?x4xf32>, %w13: tensor<4x16x24xf32>, %w2: tensor<4x12x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{moe.block must be expanded before lowering (run -moe-expand-block first, or the moe-to-llvm pipeline)}}
  %y = moe.block %x logits(%l : tensor<?x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>) down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

shard.grid @mesh(shape = ?) {moe.axes = ["expert"]}
func.func @dynamic_grid(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'moe.psum' op runs on a grid with a dynamic axis size; the sharded runtime needs every axis size at compile time}}
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
func.func @integer_sum(%x: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'moe.psum' op has no sharded-runtime lowering for a sum of 'i32'}}
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
func.func @dynamic_capacity(%rows: tensor<8x4xf32>, %send: tensor<2xi32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'moe.all_to_all' op needs a static received row count (the capacity) to be lowered}}
  %r, %c = moe.all_to_all %rows, %send over @mesh ["expert"] : tensor<8x4xf32>, tensor<2xi32> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
