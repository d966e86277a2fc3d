// RUN: moe-opt %s -moe-generate-backward=routing-grad=true -split-input-file | FileCheck %s
// RUN: moe-opt %s -moe-generate-backward -split-input-file | FileCheck %s --check-prefix=FIXED

// routing-grad: combine's slot gradients (each slot's expert row dotted with
// its token's gradient, back to token order), then route_grad with route's
// attributes; the logits' gradient is returned after x's.
// CHECK-LABEL: func.func @logits_forward_backward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x16xf32>, %[[L:.*]]: tensor<?x6xf32>,
// CHECK-SAME:    -> (tensor<f32>, tensor<?x16xf32>, tensor<?x6xf32>, tensor<4x16x24xf32>, tensor<4x12x16xf32>)
// CHECK-SAME:    attributes {moe.gradient_args = array<i64: 0, 1, 2, 3>}
// CHECK:         %[[IDS:.*]], %[[W:.*]] = moe.route %[[L]] top 2 scoring sigmoid renormalize null_experts 2
// CHECK:         moe.swiglu
// CHECK:         %[[OUT:.*]] = moe.gmm
// CHECK:         moe.combine %[[OUT]], %[[PERM:[a-z0-9_]+]], %[[W]]
// CHECK:         %[[DYR:.*]] = moe.gather_rows %{{.*}}, %[[PERM]] top 2
// CHECK:         %[[DOT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[DYR]], %[[OUT]] :
// CHECK:         %[[DW:.*]] = moe.scatter_slots %[[DOT]], %[[PERM]], %[[W]]
// CHECK:         %[[DL:.*]] = moe.route_grad %[[DW]], %[[L]] scoring sigmoid renormalize null_experts 2 {moe.adjoint} : tensor<?x2xf32>, tensor<?x6xf32>
// CHECK:         return %{{.*}}, %{{.*}}, %[[DL]],
// Without the option the routing is fixed and the logits get nothing.
// FIXED-LABEL: func.func @logits_forward_backward(
// FIXED-SAME:    attributes {moe.gradient_args = array<i64: 0, 2, 3>}
// FIXED-NOT:     moe.scatter_slots
// FIXED-NOT:     moe.route_grad
// FIXED:         return
func.func @logits(%x: tensor<?x16xf32>, %logits: tensor<?x6xf32>, %w13: tensor<4x16x24xf32>,
                  %w2: tensor<4x12x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%logits : tensor<?x6xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 scoring sigmoid renormalize null_experts 2
         : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// preweight: the scale_rows before the down projection gives the sorted
// weights their gradient (the activation row dotted with its gradient),
// pack scatters it back to token order; the router weight's gradient comes
// through the logits' matmul (x^T dlogits), and x gets dlogits router^T too.
// CHECK-LABEL: func.func @router_forward_backward(
// CHECK-SAME:    -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>, tensor<4x16x24xf32>, tensor<4x12x16xf32>)
// CHECK-SAME:    attributes {moe.gradient_args = array<i64: 0, 1, 2, 3>}
// CHECK:         %[[LOGITS:.*]] = linalg.matmul
// CHECK:         %[[IDS:.*]], %[[W:.*]] = moe.route %[[LOGITS]] top 2 order softmax_then_topk
// CHECK:         %{{.*}}, %[[SW:[a-z0-9_]+]], %[[PERM:[a-z0-9_]+]], %{{.*}} = moe.pack
// CHECK:         %[[A:.*]] = moe.swiglu
// CHECK:         moe.scale_rows %[[A]], %[[SW]]
// CHECK:         moe.combine {{.*}} preweighted
// CHECK-NOT:     moe.scatter_slots
// CHECK:         %[[DSW:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[A]] :
// CHECK:         %[[DW:.*]] = moe.scatter_slots %[[DSW]], %[[PERM]], %[[W]]
// CHECK-NOT:     moe.scatter_slots
// CHECK:         moe.route_grad %[[DW]], %[[LOGITS]] order softmax_then_topk {moe.adjoint} : tensor<8x2xf32>, tensor<8x4xf32>
// CHECK:         linalg.matmul
// CHECK:         linalg.matmul
// CHECK:         return
func.func @router(%x: tensor<8x16xf32>, %router: tensor<16x4xf32>, %w13: tensor<4x16x24xf32>,
                  %w2: tensor<4x12x16xf32>) -> tensor<8x16xf32> {
  %y = moe.block %x router(%router : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 order softmax_then_topk preweight : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
