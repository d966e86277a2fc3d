// RUN: moe-opt %s -split-input-file -moe-quantize | FileCheck %s
// RUN: moe-opt %s -split-input-file -moe-quantize="mode=int8_routed weight-scales=expert" | FileCheck %s --check-prefix=ROUTED
// RUN: moe-opt %s -split-input-file -moe-quantize="mode=fake_int8" | FileCheck %s --check-prefix=FAKE
// RUN: moe-opt %s -split-input-file -moe-quantize="hoist-weights=false" | FileCheck %s --check-prefix=INLINE

// A block with a shared expert: expanded first, then every routed gmm and
// shared matmul quantized; the weights' quantization moves into
// @block_prepare_weights, the rest into @block_prepared, and @block calls
// both. The router (fixed logits here) is untouched.
func.func @block(%x: tensor<?x16xf32>, %logits: tensor<?x4xf32>, %w13: tensor<4x16x16xf32>,
                 %w2: tensor<4x8x16xf32>, %sw13: tensor<16x12xf32>, %sw2: tensor<6x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%logits : tensor<?x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>)
         down(%w2 : tensor<4x8x16xf32>) shared_gate_up(%sw13 : tensor<16x12xf32>)
         shared_down(%sw2 : tensor<6x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @block_prepare_weights
// CHECK-SAME: (%[[W13:.*]]: tensor<4x16x16xf32>, %[[W2:.*]]: tensor<4x8x16xf32>, %[[SW13:.*]]: tensor<16x12xf32>, %[[SW2:.*]]: tensor<6x16xf32>)
// CHECK-SAME: -> (tensor<4x16x16xi8>, tensor<4x16xf32>, tensor<4x8x16xi8>, tensor<4x16xf32>, tensor<1x16x12xi8>, tensor<1x12xf32>, tensor<1x6x16xi8>, tensor<1x16xf32>)
// CHECK: moe.quantize %[[W13]] per_channel : tensor<4x16x16xf32>
// CHECK: moe.quantize %[[W2]] per_channel
// CHECK: %[[E:.*]] = tensor.expand_shape %[[SW13]] {{\[\[}}0, 1], [2]] output_shape [1, 16, 12]
// CHECK: moe.quantize %[[E]] per_channel : tensor<1x16x12xf32>
// CHECK: tensor.expand_shape %[[SW2]]
// CHECK: moe.quantize
// CHECK: return

// CHECK-LABEL: func.func @block_prepared
// CHECK-SAME: (%[[X:.*]]: tensor<?x16xf32>, %[[L:.*]]: tensor<?x4xf32>, %[[Q13:.*]]: tensor<4x16x16xi8>, %[[S13:.*]]: tensor<4x16xf32>, %[[Q2:.*]]: tensor<4x8x16xi8>, %[[S2:.*]]: tensor<4x16xf32>, %[[SQ13:.*]]: tensor<1x16x12xi8>, %[[SS13:.*]]: tensor<1x12xf32>, %[[SQ2:.*]]: tensor<1x6x16xi8>, %[[SS2:.*]]: tensor<1x16xf32>)
// CHECK-NOT: moe.quantize
// The shared expert's group: every token (made where x is defined).
// CHECK: %[[T:.*]] = tensor.dim %[[X]]
// CHECK: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK: %[[ONE:.*]] = tensor.from_elements %[[T32]] : tensor<1xi32>
// CHECK: moe.route %[[L]]
// CHECK: %[[ROWS:.*]], %{{.*}}, %{{.*}}, %[[SIZES:.*]] = moe.pack %[[X]]
// CHECK: moe.gmm %[[ROWS]], %[[Q13]], %[[SIZES]] scales(%[[S13]] : tensor<4x16xf32>) : tensor<?x16xf32>, tensor<4x16x16xi8>, tensor<4xi32>
// CHECK: moe.gmm %{{.*}}, %[[Q2]], %[[SIZES]] scales(%[[S2]] : tensor<4x16xf32>)
// CHECK: moe.gmm %[[X]], %[[SQ13]], %[[ONE]] scales(%[[SS13]] : tensor<1x12xf32>)
// CHECK: moe.gmm %{{.*}}, %[[SQ2]], %{{.*}} scales(%[[SS2]] : tensor<1x16xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: return

// CHECK-LABEL: func.func @block(
// CHECK: %[[P:.*]]:8 = call @block_prepare_weights(%arg2, %arg3, %arg4, %arg5)
// CHECK: %[[Y:.*]] = call @block_prepared(%arg0, %arg1, %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[P]]#3, %[[P]]#4, %[[P]]#5, %[[P]]#6, %[[P]]#7)
// CHECK: return %[[Y]]

// int8_routed: the shared expert stays float (its weights stay arguments of
// the prepared function); one scale per expert.
// ROUTED-LABEL: func.func @block_prepare_weights
// ROUTED-SAME: -> (tensor<4x16x16xi8>, tensor<4xf32>, tensor<4x8x16xi8>, tensor<4xf32>)
// ROUTED-COUNT-2: moe.quantize %{{.*}} per_expert
// ROUTED-LABEL: func.func @block_prepared
// ROUTED-SAME: (%{{.*}}: tensor<?x16xf32>, %{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<16x12xf32>, %{{.*}}: tensor<6x16xf32>, %{{.*}}: tensor<4x16x16xi8>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4x8x16xi8>, %{{.*}}: tensor<4xf32>)
// ROUTED: scales(%{{.*}} : tensor<4xf32>)
// ROUTED: linalg.matmul
// ROUTED: linalg.matmul
// ROUTED-LABEL: func.func @block(
// ROUTED: call @block_prepare_weights(%arg2, %arg3)
// ROUTED: call @block_prepared(%arg0, %arg1, %arg4, %arg5,

// fake_int8: float kernels over fake-quantized rows and quantized-then-
// dequantized weights (prepared once too).
// FAKE-LABEL: func.func @block_prepare_weights
// FAKE-SAME: -> (tensor<4x16x16xf32>, tensor<4x8x16xf32>, tensor<16x12xf32>, tensor<6x16xf32>)
// FAKE: %[[Q:.*]], %[[S:.*]] = moe.quantize
// FAKE: moe.dequantize %[[Q]], %[[S]] : tensor<4x16x16xi8>, tensor<4x16xf32>
// FAKE: tensor.collapse_shape
// FAKE-LABEL: func.func @block_prepared
// FAKE: %[[F:.*]] = moe.fake_quant %{{.*}} : tensor<?x16xf32>
// FAKE: moe.gmm %[[F]], %{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<4x16x16xf32>, tensor<4xi32>
// FAKE: moe.fake_quant
// FAKE: moe.gmm
// FAKE: moe.fake_quant
// FAKE: linalg.matmul
// FAKE: moe.fake_quant
// FAKE: linalg.matmul

// hoist-weights=false (training): the quantization stays in the function.
// INLINE-NOT: prepare_weights
// INLINE-LABEL: func.func @block(
// INLINE: moe.quantize %arg2 per_channel
// INLINE: moe.gmm %{{.*}}, %{{.*}}, %{{.*}} scales
// INLINE-NOT: call

// -----

// bf16: the shared matmuls return f32, so their rows are widened first (the
// down projection's through the truncation of the activation) and the int8
// gmms return f32 too.
// CHECK-LABEL: func.func @shared_bf16_prepared
// CHECK: %[[X32:.*]] = arith.extf %arg0 : tensor<?x8xbf16> to tensor<?x8xf32>
// CHECK: moe.gmm %[[X32]], %{{.*}}, %{{.*}} scales(%{{.*}} : tensor<1x8xf32>) : tensor<?x8xf32>, tensor<1x8x8xi8>, tensor<1xi32>
// CHECK: %[[A:.*]] = arith.truncf
// CHECK: %[[A32:.*]] = arith.extf %[[A]] : tensor<?x4xbf16> to tensor<?x4xf32>
// CHECK: moe.gmm %[[A32]], %{{.*}}, %{{.*}} scales(%{{.*}} : tensor<1x8xf32>) : tensor<?x4xf32>, tensor<1x4x8xi8>, tensor<1xi32>
// CHECK-NOT: linalg.matmul
func.func @shared_bf16(%x: tensor<?x8xbf16>, %w: tensor<8x8xbf16>, %w2: tensor<4x8xbf16>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x8xbf16>
  %e = tensor.empty(%t) : tensor<?x8xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x8xbf16>, tensor<8x8xbf16>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  %a = moe.swiglu %h : tensor<?x8xf32>
  %a16 = arith.truncf %a : tensor<?x4xf32> to tensor<?x4xbf16>
  %e2 = tensor.empty(%t) : tensor<?x8xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = linalg.matmul ins(%a16, %w2 : tensor<?x4xbf16>, tensor<4x8xbf16>) outs(%init2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// A router matmul (feeding moe.route, not a swiglu) stays float; a private
// function is quantized but not split.
// CHECK-LABEL: func.func private @router
// CHECK: linalg.matmul
// CHECK: moe.quantize
// CHECK-NOT: call
func.func private @router(%x: tensor<?x8xf32>, %wr: tensor<8x4xf32>, %w: tensor<4x8x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%t) : tensor<?x4xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %logits = linalg.matmul ins(%x, %wr : tensor<?x8xf32>, tensor<8x4xf32>) outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
  %ids, %weights = moe.route %logits top 1 : tensor<?x4xf32>
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %weights experts 4 : tensor<?x8xf32>, tensor<?x1xi32>, tensor<?x1xf32>
  %h = moe.gmm %rows, %w, %sizes : tensor<?x8xf32>, tensor<4x8x8xf32>, tensor<4xi32>
  return %h : tensor<?x8xf32>
}
