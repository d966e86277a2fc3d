// RUN: moe-opt %s -canonicalize -split-input-file | FileCheck %s

// softmax_then_topk + renormalize is topk_then_softmax: no softmax over all E.
// CHECK-LABEL: func @route_renormalized_softmax
// CHECK: moe.route %{{.*}} top 2 : tensor<?x8xf32>
func.func @route_renormalized_softmax(%l: tensor<?x8xf32>) -> (tensor<?x2xi32>, tensor<?x2xf32>) {
  %i, %w = moe.route %l top 2 order softmax_then_topk renormalize : tensor<?x8xf32>
  return %i, %w : tensor<?x2xi32>, tensor<?x2xf32>
}

// -----

// Softmax over the chosen K already sums to one.
// CHECK-LABEL: func @route_redundant_renormalize
// CHECK: moe.route %{{.*}} top 2 : tensor<?x8xf32>
func.func @route_redundant_renormalize(%l: tensor<?x8xf32>) -> (tensor<?x2xi32>, tensor<?x2xf32>) {
  %i, %w = moe.route %l top 2 renormalize : tensor<?x8xf32>
  return %i, %w : tensor<?x2xi32>, tensor<?x2xf32>
}

// -----

// k = E: every expert is chosen, the order does not matter (sigmoid keeps its
// renormalisation, which does matter).
// CHECK-LABEL: func @route_k_equals_e
// CHECK: moe.route %{{.*}} top 8 scoring sigmoid renormalize : tensor<?x8xf32>
func.func @route_k_equals_e(%l: tensor<?x8xf32>) -> (tensor<?x8xi32>, tensor<?x8xf32>) {
  %i, %w = moe.route %l top 8 scoring sigmoid order softmax_then_topk renormalize : tensor<?x8xf32>
  return %i, %w : tensor<?x8xi32>, tensor<?x8xf32>
}

// -----

// Negative tests: these configurations compute something different.
// CHECK-LABEL: func @route_kept
// CHECK: moe.route %{{.*}} top 2 order softmax_then_topk : tensor<?x8xf32>
// CHECK: moe.route %{{.*}} top 2 scoring sigmoid order softmax_then_topk renormalize : tensor<?x8xf32>
// CHECK: moe.route %{{.*}} top 2 order softmax_then_topk renormalize null_experts 2 : tensor<?x8xf32>
func.func @route_kept(%l: tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
  %i0, %w0 = moe.route %l top 2 order softmax_then_topk : tensor<?x8xf32>
  %i1, %w1 = moe.route %l top 2 scoring sigmoid order softmax_then_topk renormalize : tensor<?x8xf32>
  %i2, %w2 = moe.route %l top 2 order softmax_then_topk renormalize null_experts 2 : tensor<?x8xf32>
  return %w0, %w1, %w2 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
}

// -----

// All groups empty: the grouped matmuls are zeros and never read the weights.
// CHECK-LABEL: func @empty_groups
// CHECK-DAG: %[[DW:.*]] = arith.constant dense<0.000000e+00> : tensor<4x64x32xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[DIM:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[ROWS:.*]] = tensor.splat %[[ZERO]][%[[DIM]]] : tensor<?x32xf32>
// CHECK-NOT: moe.gmm
// CHECK-NOT: moe.tgmm
// CHECK: return %[[ROWS]], %[[DW]]
func.func @empty_groups(%rows: tensor<?x64xf32>, %w: tensor<4x64x32xf32>, %dh: tensor<?x32xf32>) -> (tensor<?x32xf32>, tensor<4x64x32xf32>) {
  %sizes = arith.constant dense<0> : tensor<4xi32>
  %0 = moe.gmm %rows, %w, %sizes : tensor<?x64xf32>, tensor<4x64x32xf32>, tensor<4xi32>
  %1 = moe.tgmm %rows, %dh, %sizes : tensor<?x64xf32>, tensor<?x32xf32>, tensor<4xi32>
  return %0, %1 : tensor<?x32xf32>, tensor<4x64x32xf32>
}

// -----

// CHECK-LABEL: func @nonempty_groups_kept
// CHECK: moe.gmm
func.func @nonempty_groups_kept(%rows: tensor<?x64xf32>, %w: tensor<4x64x32xf32>) -> tensor<?x32xf32> {
  %sizes = arith.constant dense<[0, 0, 3, 0]> : tensor<4xi32>
  %0 = moe.gmm %rows, %w, %sizes : tensor<?x64xf32>, tensor<4x64x32xf32>, tensor<4xi32>
  return %0 : tensor<?x32xf32>
}

// -----

// Two halves of one gate|up tensor are the fused form.
// CHECK-LABEL: func @swiglu_halves
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[A:.*]] = moe.swiglu %arg0 : tensor<?x32xf32>
// CHECK: return %[[A]]
func.func @swiglu_halves(%h: tensor<?x32xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %h, %c0 : tensor<?x32xf32>
  %g = tensor.extract_slice %h[0, 0] [%rows, 16] [1, 1] : tensor<?x32xf32> to tensor<?x16xf32>
  %u = tensor.extract_slice %h[0, 16] [%rows, 16] [1, 1] : tensor<?x32xf32> to tensor<?x16xf32>
  %a = moe.swiglu %g, %u : tensor<?x16xf32>, tensor<?x16xf32>
  return %a : tensor<?x16xf32>
}

// -----

// Swapped halves (up first) are a different function: kept.
// CHECK-LABEL: func @swiglu_swapped_halves
// CHECK: moe.swiglu %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>
func.func @swiglu_swapped_halves(%h: tensor<8x32xf32>) -> tensor<8x16xf32> {
  %g = tensor.extract_slice %h[0, 16] [8, 16] [1, 1] : tensor<8x32xf32> to tensor<8x16xf32>
  %u = tensor.extract_slice %h[0, 0] [8, 16] [1, 1] : tensor<8x32xf32> to tensor<8x16xf32>
  %a = moe.swiglu %g, %u : tensor<8x16xf32>, tensor<8x16xf32>
  return %a : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func @scale_by_one
// CHECK-NOT: moe.scale_rows
// CHECK: return %arg0
func.func @scale_by_one(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %0 = moe.scale_rows %a, %one : tensor<8x16xf32>, tensor<8xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Collectives over a single shard move nothing; over two they stay.
shard.grid @mesh(shape = 1x2) {moe.axes = ["data", "expert"]}
// CHECK-LABEL: func @single_shard
// CHECK-NOT: moe.psum %arg0 over @mesh ["data"]
// CHECK-NOT: moe.all_gather
// CHECK-NOT: moe.reduce_scatter
// CHECK: %[[E:.*]] = moe.psum %arg0 over @mesh ["expert"]
// CHECK: return %arg0, %arg0, %arg0, %[[E]]
func.func @single_shard(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = moe.psum %x over @mesh ["data"] : tensor<8x4xf32>
  %1 = moe.all_gather %x over @mesh ["data"] dim 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  %2 = moe.reduce_scatter %x over @mesh ["data"] dim 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  %3 = moe.psum %x over @mesh ["expert"] : tensor<8x4xf32>
  return %0, %1, %2, %3 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
