// RUN: moe-opt %s -moe-generate-backward=routing-grad=true -split-input-file | FileCheck %s

// GPT-OSS with gradients through the router: each expert bias gets the
// column sums of its group's rows of the output gradient (a tgmm of a
// column of ones, the grouped kernels' walk), the activation's gradient
// keeps its form (clamps, interleaving), and the router bias sums the
// logits' gradient over the tokens.
// CHECK-LABEL: func.func @gpt_oss_forward_backward(
// CHECK-SAME:    -> (tensor<f32>, tensor<?x64xf32>, tensor<64x8xf32>, tensor<8xf32>, tensor<8x64x96xf32>, tensor<8x96xf32>, tensor<8x48x64xf32>, tensor<8x64xf32>)
// CHECK:   %[[DB2:.*]] = moe.tgmm %{{.*}}, %{{.*}}, %{{.*}} {moe.adjoint} : tensor<?x1xf32>, tensor<?x64xf32>, tensor<8xi32>
// CHECK:   %[[B2:.*]] = tensor.collapse_shape %[[DB2]] {{\[\[}}0, 1], [2]] {moe.adjoint} : tensor<8x1x64xf32> into tensor<8x64xf32>
// CHECK:   moe.swiglu_grad %{{.*}}, %{{.*}} activation gpt_oss interleaved {moe.adjoint} : tensor<?x48xf32>, tensor<?x96xf32>
// CHECK:   %[[DB13:.*]] = moe.tgmm %{{.*}}, %{{.*}}, %{{.*}} {moe.adjoint} : tensor<?x1xf32>, tensor<?x96xf32>, tensor<8xi32>
// CHECK:   %[[B13:.*]] = tensor.collapse_shape %[[DB13]]
// CHECK:   %[[DL:.*]] = moe.route_grad
// CHECK:   %[[RB:.*]] = linalg.reduce ins(%[[DL]] : tensor<?x8xf32>) outs(%{{.*}} : tensor<8xf32>) dimensions = [0]
// CHECK:   return %{{.*}}, %{{.*}}, %{{.*}}, %[[RB]], %{{.*}}, %[[B13]], %{{.*}}, %[[B2]] :
func.func @gpt_oss(%x: tensor<?x64xf32>, %r: tensor<64x8xf32>, %rb: tensor<8xf32>, %w13: tensor<8x64x96xf32>, %b13: tensor<8x96xf32>, %w2: tensor<8x48x64xf32>, %b2: tensor<8x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%r : tensor<64x8xf32>) router_bias(%rb : tensor<8xf32>) gate_up(%w13 : tensor<8x64x96xf32>) gate_up_bias(%b13 : tensor<8x96xf32>) down(%w2 : tensor<8x48x64xf32>) down_bias(%b2 : tensor<8x64xf32>) top 2 activation gpt_oss interleaved family gpt_oss : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// DeepSeek-V3: the router's gradient with the selection made as the
// forward made it (bias, groups) and the routed scaling; the selection
// bias gets none (it chooses, it does not weight).
// CHECK-LABEL: func.func @deepseek_v3_forward_backward(
// CHECK-SAME:    -> (tensor<f32>, tensor<?x64xf32>, tensor<64x16xf32>, tensor<16x64x64xf32>, tensor<16x32x64xf32>)
// CHECK-SAME:    attributes {moe.gradient_args = array<i64: 0, 1, 3, 4>}
// CHECK:   moe.route_grad %{{.*}}, %{{.*}} selection_bias(%arg2 : tensor<16xf32>) scoring sigmoid order softmax_then_topk renormalize groups 4 topk_groups 2 group_score top2_sum routed_scaling 2.500000e+00
func.func @deepseek_v3(%x: tensor<?x64xf32>, %r: tensor<64x16xf32>, %sb: tensor<16xf32>, %w13: tensor<16x64x64xf32>, %w2: tensor<16x32x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%r : tensor<64x16xf32>) selection_bias(%sb : tensor<16xf32>) gate_up(%w13 : tensor<16x64x64xf32>) down(%w2 : tensor<16x32x64xf32>) top 4 scoring sigmoid order softmax_then_topk renormalize groups 4 topk_groups 2 group_score top2_sum routed_scaling 2.5 : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// Qwen2-MoE: the shared gate's gradient, always (it is a weight, not the
// routing): rowdot(d out, shared output) through the sigmoid's slope.
// CHECK-LABEL: func.func @qwen2_moe_forward_backward(
// CHECK:   %[[G:.*]] = moe.sigmoid %{{.*}} : tensor<?xf32>
// CHECK:   %[[OMS:.*]] = arith.subf %{{.*}}, %[[G]] {moe.adjoint} : tensor<?xf32>
// CHECK:   %[[SLOPE:.*]] = arith.mulf %[[G]], %[[OMS]] {moe.adjoint} : tensor<?xf32>
// CHECK:   arith.mulf %{{.*}}, %[[SLOPE]] {moe.adjoint} : tensor<?xf32>
func.func @qwen2_moe(%x: tensor<?x64xf32>, %r: tensor<64x8xf32>, %w13: tensor<8x64x64xf32>, %w2: tensor<8x32x64xf32>, %sw13: tensor<64x64xf32>, %sw2: tensor<32x64xf32>, %g: tensor<64x1xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%r : tensor<64x8xf32>) gate_up(%w13 : tensor<8x64x64xf32>) down(%w2 : tensor<8x32x64xf32>) shared_gate_up(%sw13 : tensor<64x64xf32>) shared_down(%sw2 : tensor<32x64xf32>) shared_gate(%g : tensor<64x1xf32>) top 2 order softmax_then_topk family qwen2_moe : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
