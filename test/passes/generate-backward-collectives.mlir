// RUN: moe-opt %s -moe-generate-backward -split-input-file | FileCheck %s

// The collectives' adjoints, per shard, for the loss summed over the
// shards (each shard's cotangent is its own): a sum over the shards sends
// back a sum over them; a gather, the matching scatter; a scatter, the
// matching gather.
shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}

// CHECK-LABEL: func.func @ring_forward_backward(
// CHECK:         moe.all_gather %{{.*}} over @mesh ["expert"] dim 0 : tensor<8x16xf32> -> tensor<16x16xf32>
// CHECK:         %[[P:.*]] = moe.psum %{{.*}} over @mesh ["expert"] : tensor<16x16xf32>
// CHECK:         %[[Y:.*]] = moe.reduce_scatter %[[P]] over @mesh ["expert"] dim 0 : tensor<16x16xf32> -> tensor<8x16xf32>
// CHECK:         %[[DY:.*]] = arith.mulf %[[Y]], %{{.*}} {moe.adjoint}
// CHECK:         %[[DP:.*]] = moe.all_gather %[[DY]] over @mesh ["expert"] dim 0 {moe.adjoint} : tensor<8x16xf32> -> tensor<16x16xf32>
// CHECK:         %[[DS:.*]] = moe.psum %[[DP]] over @mesh ["expert"] {moe.adjoint} : tensor<16x16xf32>
// CHECK:         %[[DX:.*]] = moe.reduce_scatter %{{.*}} over @mesh ["expert"] dim 0 {moe.adjoint} : tensor<16x16xf32> -> tensor<8x16xf32>
// CHECK:         return %{{.*}}, %[[DX]],
func.func @ring(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %all = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<8x16xf32> -> tensor<16x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %mm = linalg.matmul ins(%all, %w : tensor<16x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<16x16xf32>) -> tensor<16x16xf32>
  %sum = moe.psum %mm over @mesh ["expert"] : tensor<16x16xf32>
  %y = moe.reduce_scatter %sum over @mesh ["expert"] dim 0 : tensor<16x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// all_to_all's adjoint sends each received block back to its sender: an
// all_to_all of the received rows' gradient by the counts received, shaped
// like the rows sent.
shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}

// CHECK-LABEL: func.func @dispatch_forward_backward(
// CHECK:         %[[R:.*]], %[[RC:.*]] = moe.all_to_all %{{.*}}, %[[SC:.*]] over @mesh ["expert"] : tensor<8x16xf32>, tensor<2xi32> -> tensor<12x16xf32>
// CHECK:         %[[B:.*]], %[[BC:.*]] = moe.all_to_all %{{.*}}, %[[RC]] over @mesh ["expert"] : tensor<12x16xf32>, tensor<2xi32> -> tensor<8x16xf32>
// CHECK:         moe.all_to_all %{{.*}}, %[[BC]] over @mesh ["expert"] {moe.adjoint} : tensor<8x16xf32>, tensor<2xi32> -> tensor<12x16xf32>
// CHECK:         moe.all_to_all %{{.*}}, %[[RC]] over @mesh ["expert"] {moe.adjoint} : tensor<12x16xf32>, tensor<2xi32> -> tensor<8x16xf32>
func.func @dispatch(%x: tensor<8x16xf32>, %send: tensor<2xi32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %recv, %counts = moe.all_to_all %x, %send over @mesh ["expert"] : tensor<8x16xf32>, tensor<2xi32> -> tensor<12x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<12x16xf32>) -> tensor<12x16xf32>
  %mm = linalg.matmul ins(%recv, %w : tensor<12x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<12x16xf32>) -> tensor<12x16xf32>
  %back, %back_counts = moe.all_to_all %mm, %counts over @mesh ["expert"] : tensor<12x16xf32>, tensor<2xi32> -> tensor<8x16xf32>
  return %back : tensor<8x16xf32>
}
