// RUN: moe-opt %s -moe-generate-backward -split-input-file | FileCheck %s
// RUN: moe-opt %s -moe-generate-backward=loss=cotangent -split-input-file | FileCheck %s --check-prefix=COT

// The forward of the block (expanded), the loss mean(y^2), then the adjoints
// in reverse: combine (gather the token gradients, scale by the sorted
// weights pack made), the down gmm (rows: transposed weights; weights:
// tgmm), swiglu_grad, the up gmm, and pack (each token sums its K rows,
// unweighted). The logits get no gradient.
// CHECK-LABEL: func.func @block(
// CHECK-LABEL: func.func @block_forward_backward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x16xf32>, %[[L:.*]]: tensor<?x4xf32>, %[[W13:.*]]: tensor<4x16x24xf32>, %[[W2:.*]]: tensor<4x12x16xf32>)
// CHECK-SAME:    -> (tensor<f32>, tensor<?x16xf32>, tensor<4x16x24xf32>, tensor<4x12x16xf32>)
// CHECK-SAME:    attributes {moe.gradient_args = array<i64: 0, 2, 3>}
// CHECK:         %[[IDS:.*]], %[[W:.*]] = moe.route %[[L]] top 2
// CHECK:         %[[ROWS:.*]], %[[SW:.*]], %[[PERM:.*]], %[[SIZES:.*]] = moe.pack %[[X]], %[[IDS]], %[[W]]
// CHECK:         %[[H:.*]] = moe.gmm %[[ROWS]], %[[W13]], %[[SIZES]]
// CHECK:         %[[A:.*]] = moe.swiglu %[[H]]
// CHECK:         %[[OUT:.*]] = moe.gmm %[[A]], %[[W2]], %[[SIZES]]
// CHECK:         %[[Y:.*]] = moe.combine %[[OUT]], %[[PERM]], %[[W]]
// CHECK:         %[[SQ:.*]] = arith.mulf %[[Y]], %[[Y]]
// CHECK:         %[[SUM:.*]] = linalg.reduce ins(%[[SQ]]
// CHECK:         %[[LOSS:.*]] = arith.mulf %[[SUM]]
// CHECK:         %[[DY:.*]] = arith.mulf %[[Y]]
// CHECK:         %[[DYR:.*]] = moe.gather_rows %[[DY]], %[[PERM]] top 2
// CHECK:         %[[DOUT:.*]] = moe.scale_rows %[[DYR]], %[[SW]]
// CHECK:         %[[DA:.*]] = moe.gmm %[[DOUT]], %[[W2]], %[[SIZES]] transpose_rhs
// CHECK:         %[[DW2:.*]] = moe.tgmm %[[A]], %[[DOUT]], %[[SIZES]]
// CHECK:         %[[DH:.*]] = moe.swiglu_grad %[[DA]], %[[H]]
// CHECK:         %[[DROWS:.*]] = moe.gmm %[[DH]], %[[W13]], %[[SIZES]] transpose_rhs
// CHECK:         %[[DW13:.*]] = moe.tgmm %[[ROWS]], %[[DH]], %[[SIZES]]
// CHECK:         %[[DX:.*]] = moe.combine %[[DROWS]], %[[PERM]], %[[W]] preweighted
// CHECK:         return %[[LOSS]], %[[DX]], %[[DW13]], %[[DW2]]
// COT-LABEL: func.func @block_forward_backward(
// COT-SAME:    %{{.*}}: tensor<4x12x16xf32>, %[[DY:.*]]: tensor<?x16xf32>)
// COT-SAME:    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<4x16x24xf32>, tensor<4x12x16xf32>)
// COT:         %[[Y:.*]] = moe.combine
// COT-NOT:     linalg.reduce
// COT:         moe.gather_rows %[[DY]]
// COT:         return %[[Y]],
func.func @block(%x: tensor<?x16xf32>, %logits: tensor<?x4xf32>, %w13: tensor<4x16x24xf32>,
                 %w2: tensor<4x12x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%logits : tensor<?x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// The shared expert's matmuls: dA = dC B^T, dB = A^T dC (f32 accumulators,
// rounded to bf16), and the residual add sends dy to both branches. Private
// functions and functions without moe ops are left alone.
// CHECK-LABEL: func.func @shared_forward_backward(
// CHECK-SAME:    -> (tensor<f32>, tensor<8x16xbf16>, tensor<4x16x24xbf16>, tensor<4x12x16xbf16>, tensor<16x20xbf16>, tensor<10x16xbf16>)
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<10x16xbf16>)
// CHECK:         linalg.matmul
// CHECK:         arith.truncf {{.*}} : tensor<10x16xf32> to tensor<10x16xbf16>
// CHECK:         moe.swiglu_grad {{.*}} : tensor<8x10xf32>, tensor<8x20xf32>
// CHECK:         arith.truncf {{.*}} : tensor<16x20xf32> to tensor<16x20xbf16>
// CHECK:         moe.combine {{.*}} preweighted
// CHECK:         %[[DX:.*]] = arith.addf
// CHECK:         return %{{.*}}, %[[DX]],
// CHECK-NOT: func.func @helper_forward_backward
// CHECK-NOT: func.func @plain_forward_backward
func.func @shared(%x: tensor<8x16xbf16>, %logits: tensor<8x4xf32>, %w13: tensor<4x16x24xbf16>,
                  %w2: tensor<4x12x16xbf16>, %sw13: tensor<16x20xbf16>, %sw2: tensor<10x16xbf16>) -> tensor<8x16xbf16> {
  %y = moe.block %x logits(%logits : tensor<8x4xf32>) gate_up(%w13 : tensor<4x16x24xbf16>)
         down(%w2 : tensor<4x12x16xbf16>) shared_gate_up(%sw13 : tensor<16x20xbf16>)
         shared_down(%sw2 : tensor<10x16xbf16>) top 2 : tensor<8x16xbf16>
  return %y : tensor<8x16xbf16>
}
func.func private @helper(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %b = moe.swiglu %a : tensor<4x4xf32>
  %c = tensor.concat dim(1) %b, %b : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}
func.func @plain(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %a : tensor<4x4xf32>
}

// -----

// A matmul accumulating into a value that is itself differentiable: the
// initial accumulator gets dC as well.
// CHECK-LABEL: func.func @accumulate_forward_backward(
// CHECK-SAME:    -> (tensor<f32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-SAME:    attributes {moe.gradient_args = array<i64: 0, 1, 2>}
// CHECK:         %[[DM:.*]] = moe.swiglu_grad
// CHECK:         return %{{.*}}, %{{.*}}, %{{.*}}, %[[DM]] :
func.func @accumulate(%a: tensor<4x4xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = moe.swiglu %m : tensor<4x8xf32>
  return %s : tensor<4x4xf32>
}
