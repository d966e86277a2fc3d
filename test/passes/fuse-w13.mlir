// RUN: moe-opt %s -moe-fuse-w13 -split-input-file | FileCheck %s

// Two gmms over the same rows and groups feeding swiglu become one over the
// concatenated weights.
// CHECK-LABEL: func @baseline
// CHECK-SAME: (%[[ROWS:.*]]: tensor<?x16xf32>, %[[W1:.*]]: tensor<4x16x8xf32>, %[[W3:.*]]: tensor<4x16x8xf32>, %[[S:.*]]: tensor<4xi32>)
// CHECK: %[[W13:.*]] = tensor.concat dim(2) %[[W1]], %[[W3]] : (tensor<4x16x8xf32>, tensor<4x16x8xf32>) -> tensor<4x16x16xf32>
// CHECK: %[[H:.*]] = moe.gmm %[[ROWS]], %[[W13]], %[[S]] : tensor<?x16xf32>, tensor<4x16x16xf32>, tensor<4xi32>
// CHECK: %[[A:.*]] = moe.swiglu %[[H]] : tensor<?x16xf32>
// CHECK-NOT: moe.gmm
// CHECK: return %[[A]]
func.func @baseline(%rows: tensor<?x16xf32>, %w1: tensor<4x16x8xf32>, %w3: tensor<4x16x8xf32>, %s: tensor<4xi32>) -> tensor<?x8xf32> {
  %g = moe.gmm %rows, %w1, %s : tensor<?x16xf32>, tensor<4x16x8xf32>, tensor<4xi32>
  %u = moe.gmm %rows, %w3, %s : tensor<?x16xf32>, tensor<4x16x8xf32>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x8xf32>, tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

// Constant weights are concatenated at compile time.
// CHECK-LABEL: func @constant_weights
// CHECK: %[[W13:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 5.000000e+00, 6.000000e+00], [3.000000e+00, 4.000000e+00, 7.000000e+00, 8.000000e+00]]]> : tensor<1x2x4xf32>
// CHECK-NOT: tensor.concat
// CHECK: moe.gmm %arg0, %[[W13]]
func.func @constant_weights(%rows: tensor<?x2xf32>, %s: tensor<1xi32>) -> tensor<?x2xf32> {
  %w1 = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
  %w3 = arith.constant dense<[[[5.0, 6.0], [7.0, 8.0]]]> : tensor<1x2x2xf32>
  %g = moe.gmm %rows, %w1, %s : tensor<?x2xf32>, tensor<1x2x2xf32>, tensor<1xi32>
  %u = moe.gmm %rows, %w3, %s : tensor<?x2xf32>, tensor<1x2x2xf32>, tensor<1xi32>
  %a = moe.swiglu %g, %u : tensor<?x2xf32>, tensor<?x2xf32>
  return %a : tensor<?x2xf32>
}

// -----

// Not fused: different rows, or a half read elsewhere (a backward needs it).
// CHECK-LABEL: func @kept
// CHECK-COUNT-4: moe.gmm
func.func @kept(%r1: tensor<?x16xf32>, %r2: tensor<?x16xf32>, %w1: tensor<4x16x8xf32>, %w3: tensor<4x16x8xf32>, %s: tensor<4xi32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %g = moe.gmm %r1, %w1, %s : tensor<?x16xf32>, tensor<4x16x8xf32>, tensor<4xi32>
  %u = moe.gmm %r2, %w3, %s : tensor<?x16xf32>, tensor<4x16x8xf32>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x8xf32>, tensor<?x8xf32>
  %g2 = moe.gmm %r1, %w1, %s : tensor<?x16xf32>, tensor<4x16x8xf32>, tensor<4xi32>
  %u2 = moe.gmm %r1, %w3, %s : tensor<?x16xf32>, tensor<4x16x8xf32>, tensor<4xi32>
  %b = moe.swiglu %g2, %u2 : tensor<?x8xf32>, tensor<?x8xf32>
  return %a, %b, %g2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// int8 gate and up (after moe-quantize) are left as they are.
// CHECK-LABEL: func @int8
// CHECK-COUNT-2: moe.gmm
// CHECK: moe.swiglu %{{.*}}, %{{.*}} :
func.func @int8(%rows: tensor<?x16xf32>, %q1: tensor<4x16x8xi8>, %q3: tensor<4x16x8xi8>, %s1: tensor<4xf32>, %s3: tensor<4xf32>, %s: tensor<4xi32>) -> tensor<?x8xf32> {
  %g = moe.gmm %rows, %q1, %s scales(%s1 : tensor<4xf32>) : tensor<?x16xf32>, tensor<4x16x8xi8>, tensor<4xi32>
  %u = moe.gmm %rows, %q3, %s scales(%s3 : tensor<4xf32>) : tensor<?x16xf32>, tensor<4x16x8xi8>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x8xf32>, tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
