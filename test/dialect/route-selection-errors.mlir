// RUN: moe-opt %s -split-input-file -verify-diagnostics
//
// The families' routing knobs (selection bias, group-limited selection,
// routed scaling) on moe.route and moe.route_grad: every refusal.

func.func @scaling_zero(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{routed_scaling (0.000000e+00) must be a positive finite number}}
  %i, %w = moe.route %l top 2 routed_scaling 0.0 : tensor<4x8xf32>
  return
}

// -----

func.func @groups_zero(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{groups (0) must be at least 1}}
  %i, %w = moe.route %l top 2 order softmax_then_topk groups 0 : tensor<4x8xf32>
  return
}

// -----

func.func @topk_groups_without_groups(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{topk_groups (2) has no effect without groups (> 1)}}
  %i, %w = moe.route %l top 2 topk_groups 2 : tensor<4x8xf32>
  return
}

// -----

func.func @group_score_without_groups(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{group_score top2_sum has no effect without groups (> 1)}}
  %i, %w = moe.route %l top 2 group_score top2_sum : tensor<4x8xf32>
  return
}

// -----

func.func @groups_need_scores_order(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{group-limited selection chooses by scores: it needs order softmax_then_topk}}
  %i, %w = moe.route %l top 2 groups 2 topk_groups 1 : tensor<4x8xf32>
  return
}

// -----

func.func @bias_needs_scores_order(%l: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{a selection bias chooses by scores: it needs order softmax_then_topk}}
  %i, %w = moe.route %l selection_bias(%b : tensor<8xf32>) top 2 : tensor<4x8xf32>
  return
}

// -----

func.func @groups_with_nulls(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{group-limited selection does not combine with null_experts}}
  %i, %w = moe.route %l top 2 order softmax_then_topk null_experts 2 groups 2 : tensor<4x8xf32>
  return
}

// -----

func.func @bias_length(%l: tensor<4x8xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{selection_bias length (6) does not match router columns (8)}}
  %i, %w = moe.route %l selection_bias(%b : tensor<6xf32>) top 2 scoring sigmoid order softmax_then_topk : tensor<4x8xf32>
  return
}

// -----

func.func @groups_divide(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{groups (3) must divide the 8 router columns}}
  %i, %w = moe.route %l top 2 order softmax_then_topk groups 3 : tensor<4x8xf32>
  return
}

// -----

func.func @topk_groups_range(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{topk_groups (5) must be in [1, 4] (groups)}}
  %i, %w = moe.route %l top 2 order softmax_then_topk groups 4 topk_groups 5 : tensor<4x8xf32>
  return
}

// -----

func.func @k_past_kept_groups(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{top-k (5) exceeds the 4 experts of the 2 kept groups of 2}}
  %i, %w = moe.route %l top 5 order softmax_then_topk groups 4 topk_groups 2 : tensor<4x8xf32>
  return
}

// -----

func.func @top2_sum_singletons(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{group_score top2_sum needs groups of at least 2 experts, got 1}}
  %i, %w = moe.route %l top 2 order softmax_then_topk groups 8 topk_groups 2 group_score top2_sum : tensor<4x8xf32>
  return
}

// -----

func.func @route_grad_groups_order(%dw: tensor<4x2xf32>, %l: tensor<4x8xf32>) {
  // expected-error @+1 {{group-limited selection chooses by scores: it needs order softmax_then_topk}}
  %g = moe.route_grad %dw, %l groups 2 : tensor<4x2xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @selection_bias_element(%l: tensor<4x8xf32>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of 32-bit float values}}
  %i, %w = moe.route %l selection_bias(%b : tensor<8xbf16>) top 2 order softmax_then_topk : tensor<4x8xf32>
  return
}

// -----

func.func @bias_dynamic(%l: tensor<4x8xf32>, %b: tensor<?xf32>) {
  // expected-error @+1 {{selection_bias length must be static (one value per router column)}}
  %i, %w = moe.route %l selection_bias(%b : tensor<?xf32>) top 2 null_experts 2 : tensor<4x8xf32>
  return
}
