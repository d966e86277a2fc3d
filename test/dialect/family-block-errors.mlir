// RUN: moe-opt %s -split-input-file -verify-diagnostics
//
// moe.block's family variants and the family attribute: every refusal.

func.func @router_bias_with_logits(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %l: tensor<?x4xf32>, %rb: tensor<4xf32>) {
  // expected-error @+1 {{router_bias(...) needs router(...) weights: fixed logits(...) carry their bias already}}
  %y = moe.block %x logits(%l : tensor<?x4xf32>) router_bias(%rb : tensor<4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @router_bias_length(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %rb: tensor<5xf32>) {
  // expected-error @+1 {{router_bias length (5) does not match router columns (4)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) router_bias(%rb : tensor<5xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @gate_up_bias_two(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %w1: tensor<4x16x8xf32>, %w3: tensor<4x16x8xf32>, %b: tensor<4x16xf32>) {
  // expected-error @+1 {{gate_up_bias(...) needs one fused gate_up weight [E, H, 2M]}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w1, %w3 : tensor<4x16x8xf32>, tensor<4x16x8xf32>) gate_up_bias(%b : tensor<4x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @gate_up_bias_width(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{gate_up_bias width (8) does not match 2 x mlp size of down weights (16)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) gate_up_bias(%b : tensor<4x8xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @gate_up_bias_element(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %b: tensor<4x16xbf16>) {
  // expected-error @+1 {{gate_up_bias element type 'bf16' does not match x element type 'f32'}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) gate_up_bias(%b : tensor<4x16xbf16>) down(%w2 : tensor<4x8x16xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @down_bias_width(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{down_bias width (8) does not match hidden size of x (16)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) down_bias(%b : tensor<4x8xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @interleaved_two(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %w1: tensor<4x16x8xf32>, %w3: tensor<4x16x8xf32>) {
  // expected-error @+1 {{interleaved gate/up columns need one fused gate_up weight [E, H, 2M]}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w1, %w3 : tensor<4x16x8xf32>, tensor<4x16x8xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 activation gpt_oss interleaved : tensor<?x16xf32>
  return
}

// -----

func.func @limit_on_swiglu(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{alpha and limit apply to activation gpt_oss}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 limit 5.0 : tensor<?x16xf32>
  return
}

// -----

func.func @weight_input_preweight(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{weight_input and preweight both say where the routing weight applies: give one}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 preweight weight_input : tensor<?x16xf32>
  return
}

// -----

func.func @shared_gate_without_shared(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %g: tensor<16x1xf32>) {
  // expected-error @+1 {{shared_gate(...) needs a shared expert}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) shared_gate(%g : tensor<16x1xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @shared_gate_columns(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %sw13: tensor<16x16xf32>, %sw2: tensor<8x16xf32>, %g: tensor<16x2xf32>) {
  // expected-error @+1 {{shared_gate columns (2) does not match one gate per token (1)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) shared_gate_up(%sw13 : tensor<16x16xf32>) shared_down(%sw2 : tensor<8x16xf32>) shared_gate(%g : tensor<16x2xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @block_groups_order(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{group-limited selection chooses by scores: it needs order softmax_then_topk}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 groups 2 : tensor<?x16xf32>
  return
}

// -----

func.func @family_mixtral_shared(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %sw13: tensor<16x16xf32>, %sw2: tensor<8x16xf32>) {
  // expected-error @+1 {{family mixtral needs no bias, groups, scaling or shared expert}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) shared_gate_up(%sw13 : tensor<16x16xf32>) shared_down(%sw2 : tensor<8x16xf32>) top 2 order softmax_then_topk renormalize family mixtral : tensor<?x16xf32>
  return
}

// -----

func.func @family_qwen2_ungated(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %sw13: tensor<16x16xf32>, %sw2: tensor<8x16xf32>) {
  // expected-error @+1 {{family qwen2_moe needs a shared expert gated by shared_gate(...)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) shared_gate_up(%sw13 : tensor<16x16xf32>) shared_down(%sw2 : tensor<8x16xf32>) top 2 order softmax_then_topk family qwen2_moe : tensor<?x16xf32>
  return
}

// -----

func.func @family_qwen3_order(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{family qwen3_moe needs scoring softmax and order softmax_then_topk}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 renormalize family qwen3_moe : tensor<?x16xf32>
  return
}

// -----

func.func @family_v2_top2(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{family deepseek_v2 needs groups scored by their max (group_score max)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 order softmax_then_topk groups 2 topk_groups 1 group_score top2_sum family deepseek_v2 : tensor<?x16xf32>
  return
}

// -----

func.func @family_v3_no_bias(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{family deepseek_v3 needs a selection_bias(...) (e_score_correction_bias)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 scoring sigmoid order softmax_then_topk family deepseek_v3 : tensor<?x16xf32>
  return
}

// -----

func.func @family_gpt_oss_no_biases(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{family gpt_oss needs router_bias(...) (or logits(...) that carry it), gate_up_bias(...) and down_bias(...)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 activation gpt_oss interleaved family gpt_oss : tensor<?x16xf32>
  return
}

// -----

func.func @family_llama4_output_weight(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{family llama4 needs weight_input (the weight scales the expert's input)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 scoring sigmoid family llama4 : tensor<?x16xf32>
  return
}

// -----

func.func @preweight_down_bias(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %b: tensor<4x16xf32>) {
  // expected-error @+1 {{preweight scales the activations before the down projection, whose down_bias must be weighted after it: drop preweight}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) down_bias(%b : tensor<4x16xf32>) top 2 preweight : tensor<?x16xf32>
  return
}

// -----

func.func @down_bias_dynamic(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>, %b: tensor<4x?xf32>) {
  // expected-error @+1 {{down_bias must have a static shape, got 'tensor<4x?xf32>'}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) down_bias(%b : tensor<4x?xf32>) top 2 : tensor<?x16xf32>
  return
}

// -----

func.func @scaling_undone_by_null_renormalize(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %u: tensor<?x2xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{renormalize with null_fraction renormalises the real weights after the nulling, which would undo routed_scaling: give one}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) null_draws(%u : tensor<?x2xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 2 renormalize null_fraction 0.5 routed_scaling 2.0 : tensor<?x16xf32>
  return
}

// -----

func.func @family_gpt_oss_scaling(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %rb: tensor<4xf32>, %w13: tensor<4x16x16xf32>, %b13: tensor<4x16xf32>, %w2: tensor<4x8x16xf32>, %b2: tensor<4x16xf32>) {
  // expected-error @+1 {{family gpt_oss needs no selection bias, groups, scaling, weight_input or shared expert}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) router_bias(%rb : tensor<4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) gate_up_bias(%b13 : tensor<4x16xf32>) down(%w2 : tensor<4x8x16xf32>) down_bias(%b2 : tensor<4x16xf32>) top 2 routed_scaling 2.0 activation gpt_oss interleaved family gpt_oss : tensor<?x16xf32>
  return
}

// -----

func.func @family_llama4_renormalize(%x: tensor<?x16xf32>, %r: tensor<16x4xf32>, %w13: tensor<4x16x16xf32>, %w2: tensor<4x8x16xf32>) {
  // expected-error @+1 {{family llama4 needs scoring sigmoid of the chosen logits (order topk_then_softmax, no renormalize)}}
  %y = moe.block %x router(%r : tensor<16x4xf32>) gate_up(%w13 : tensor<4x16x16xf32>) down(%w2 : tensor<4x8x16xf32>) top 1 scoring sigmoid renormalize weight_input family llama4 : tensor<?x16xf32>
  return
}
