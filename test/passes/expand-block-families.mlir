// RUN: moe-opt %s -moe-expand-block -split-input-file | FileCheck %s

// GPT-OSS: the router bias on every row of the logits, the softmax over the
// K chosen, the expert biases on the gmms (the kernels add them in their
// epilogues), the clamped activation over interleaved gate/up columns, the
// weights applied after the down bias (combine).
// CHECK-LABEL: func.func @gpt_oss
// CHECK:   %[[L:.*]] = linalg.matmul
// CHECK:   %[[B:.*]] = linalg.broadcast ins(%arg2 : tensor<8xf32>) outs({{.*}} : tensor<?x8xf32>) dimensions = [0]
// CHECK:   %[[LB:.*]] = arith.addf %[[L]], %[[B]] : tensor<?x8xf32>
// CHECK:   %[[IDS:.*]], %[[W:.*]] = moe.route %[[LB]] top 2 : tensor<?x8xf32>
// CHECK:   %[[ROWS:.*]], %{{.*}}, %[[PERM:.*]], %[[SIZES:.*]] = moe.pack %arg0, %[[IDS]], %[[W]] experts 8
// CHECK:   %[[H:.*]] = moe.gmm %[[ROWS]], %arg3, %[[SIZES]] bias(%arg4 : tensor<8x96xf32>)
// CHECK:   %[[A:.*]] = moe.swiglu %[[H]] activation gpt_oss alpha 1.500000e+00 limit 6.000000e+00 interleaved : tensor<?x96xf32>
// CHECK:   %[[O:.*]] = moe.gmm %[[A]], %arg5, %[[SIZES]] bias(%arg6 : tensor<8x64xf32>)
// CHECK:   moe.combine %[[O]], %[[PERM]], %[[W]] : tensor<?x64xf32>
func.func @gpt_oss(%x: tensor<?x64xf32>, %r: tensor<64x8xf32>, %rb: tensor<8xf32>, %w13: tensor<8x64x96xf32>, %b13: tensor<8x96xf32>, %w2: tensor<8x48x64xf32>, %b2: tensor<8x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%r : tensor<64x8xf32>) router_bias(%rb : tensor<8xf32>) gate_up(%w13 : tensor<8x64x96xf32>) gate_up_bias(%b13 : tensor<8x96xf32>) down(%w2 : tensor<8x48x64xf32>) down_bias(%b2 : tensor<8x64xf32>) top 2 activation gpt_oss alpha 1.5 limit 6.0 interleaved family gpt_oss : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// DeepSeek-V3: the routing knobs move to moe.route as they are; the shared
// expert (n_shared_experts x M wide) is the ungated SwiGLU MLP.
// CHECK-LABEL: func.func @deepseek_v3
// CHECK:   moe.route %{{.*}} selection_bias(%arg2 : tensor<16xf32>) top 4 scoring sigmoid order softmax_then_topk renormalize groups 4 topk_groups 2 group_score top2_sum routed_scaling 2.500000e+00
// CHECK:   moe.swiglu %{{.*}} : tensor<?x64xf32>
// CHECK-NOT: moe.sigmoid
func.func @deepseek_v3(%x: tensor<?x64xf32>, %r: tensor<64x16xf32>, %sb: tensor<16xf32>, %w13: tensor<16x64x64xf32>, %w2: tensor<16x32x64xf32>, %sw13: tensor<64x64xf32>, %sw2: tensor<32x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%r : tensor<64x16xf32>) selection_bias(%sb : tensor<16xf32>) gate_up(%w13 : tensor<16x64x64xf32>) down(%w2 : tensor<16x32x64xf32>) shared_gate_up(%sw13 : tensor<64x64xf32>) shared_down(%sw2 : tensor<32x64xf32>) top 4 scoring sigmoid order softmax_then_topk renormalize groups 4 topk_groups 2 group_score top2_sum routed_scaling 2.5 family deepseek_v3 : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// Qwen2-MoE: the shared expert's output times sigmoid(x @ w_gate), a row
// scale per token.
// CHECK-LABEL: func.func @qwen2_moe
// CHECK:   %[[Z:.*]] = linalg.matmul ins(%arg0, %arg6 : tensor<?x64xf32>, tensor<64x1xf32>)
// CHECK:   %[[ZC:.*]] = tensor.collapse_shape %[[Z]] {{\[\[}}0, 1]] : tensor<?x1xf32> into tensor<?xf32>
// CHECK:   %[[G:.*]] = moe.sigmoid %[[ZC]] : tensor<?xf32>
// CHECK:   %[[S:.*]] = moe.scale_rows %{{.*}}, %[[G]] : tensor<?x64xf32>, tensor<?xf32>
// CHECK:   arith.addf %{{.*}}, %[[S]]
func.func @qwen2_moe(%x: tensor<?x64xf32>, %r: tensor<64x8xf32>, %w13: tensor<8x64x64xf32>, %w2: tensor<8x32x64xf32>, %sw13: tensor<64x64xf32>, %sw2: tensor<32x64xf32>, %g: tensor<64x1xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%r : tensor<64x8xf32>) gate_up(%w13 : tensor<8x64x64xf32>) down(%w2 : tensor<8x32x64xf32>) shared_gate_up(%sw13 : tensor<64x64xf32>) shared_down(%sw2 : tensor<32x64xf32>) shared_gate(%g : tensor<64x1xf32>) top 2 order softmax_then_topk family qwen2_moe : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// Llama-4: the weight scales the expert's input rows; combine sums the
// expert outputs unweighted.
// CHECK-LABEL: func.func @llama4
// CHECK:   %[[IDS:.*]], %[[W:.*]] = moe.route %{{.*}} top 1 scoring sigmoid
// CHECK:   %[[ROWS:.*]], %[[SW:.*]], %[[PERM:.*]], %[[SIZES:.*]] = moe.pack
// CHECK:   %[[IN:.*]] = moe.scale_rows %[[ROWS]], %[[SW]]
// CHECK:   moe.gmm %[[IN]], %arg2, %[[SIZES]]
// CHECK:   moe.combine %{{.*}}, %[[PERM]], %[[W]] preweighted
func.func @llama4(%x: tensor<?x64xf32>, %r: tensor<64x8xf32>, %w13: tensor<8x64x64xf32>, %w2: tensor<8x32x64xf32>, %sw13: tensor<64x64xf32>, %sw2: tensor<32x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x router(%r : tensor<64x8xf32>) gate_up(%w13 : tensor<8x64x64xf32>) down(%w2 : tensor<8x32x64xf32>) shared_gate_up(%sw13 : tensor<64x64xf32>) shared_down(%sw2 : tensor<32x64xf32>) top 1 scoring sigmoid weight_input family llama4 : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
