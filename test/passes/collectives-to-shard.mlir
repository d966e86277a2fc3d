// RUN: moe-opt %s -moe-collectives-to-shard -split-input-file | FileCheck %s

shard.grid @mesh(shape = 2x4) {moe.axes = ["data", "expert"]}

// Axis names become axis indices of the same grid, in the order named.
// CHECK-LABEL: func @collectives
func.func @collectives(%p: tensor<?x64xf32>, %x: tensor<8x64xf32>, %y: tensor<64x64xf32>, %rows: tensor<?x64xf32>, %send: tensor<4xi32>)
    -> (tensor<?x64xf32>, tensor<32x64xf32>, tensor<8x64xf32>, tensor<?x64xf32>, tensor<4xi32>) {
  // CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [1] : tensor<?x64xf32> -> tensor<?x64xf32>
  %0 = moe.psum %p over @mesh ["expert"] : tensor<?x64xf32>
  // CHECK: shard.all_gather %{{.*}} on @mesh grid_axes = [1] gather_axis = 0 : tensor<8x64xf32> -> tensor<32x64xf32>
  %1 = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<8x64xf32> -> tensor<32x64xf32>
  // CHECK: shard.reduce_scatter %{{.*}} on @mesh grid_axes = [1, 0] scatter_axis = 0 : tensor<64x64xf32> -> tensor<8x64xf32>
  %2 = moe.reduce_scatter %y over @mesh ["expert", "data"] dim 0 : tensor<64x64xf32> -> tensor<8x64xf32>
  // The ragged all-to-all has no upstream counterpart and stays.
  // CHECK: moe.all_to_all %{{.*}}, %{{.*}} over @mesh ["expert"]
  %3, %4 = moe.all_to_all %rows, %send over @mesh ["expert"] : tensor<?x64xf32>, tensor<4xi32> -> tensor<?x64xf32>
  return %0, %1, %2, %3, %4 : tensor<?x64xf32>, tensor<32x64xf32>, tensor<8x64xf32>, tensor<?x64xf32>, tensor<4xi32>
}

// -----

// The moe-default pipeline lowers collectives when asked.
// RUN: moe-opt %s -split-input-file --pass-pipeline='builtin.module(moe-default{lower-collectives=true})' | FileCheck %s --check-prefix=PIPE
// RUN: moe-opt %s -split-input-file --pass-pipeline='builtin.module(moe-default)' | FileCheck %s --check-prefix=KEEP
shard.grid @m(shape = 2) {moe.axes = ["expert"]}
// PIPE-LABEL: func @pipeline
// PIPE: shard.all_reduce
// KEEP-LABEL: func @pipeline
// KEEP: moe.psum
func.func @pipeline(%p: tensor<4xf32>) -> tensor<4xf32> {
  %0 = moe.psum %p over @m ["expert"] : tensor<4xf32>
  return %0 : tensor<4xf32>
}
