// RUN: moe-opt %s -split-input-file -verify-diagnostics
// moe.block's keywords after the operands: any order, each once, `top`
// required; a wrong keyword or value is named with what is accepted.

func.func @twice(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{'renormalize' is given twice}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) renormalize top 2 renormalize : tensor<?x64xf32>
  return
}

// -----

func.func @unknown_keyword(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{unknown keyword 'sorting'; the keywords after the operands are: top, scoring, order, renormalize, null_experts, null_policy, null_fraction, groups, topk_groups, group_score, routed_scaling, pack_strategy, combine_strategy, preweight, weight_input, activation, alpha, limit, interleaved, family}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 sorting softmax : tensor<?x64xf32>
  return
}

// -----

func.func @no_top(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expected 'top K' (the keywords after the operands, in any order: top, scoring,}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) renormalize : tensor<?x64xf32>
  return
}

// -----

func.func @bad_enum(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{'softmin' is not a scoring; one of: softmax, sigmoid}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 scoring softmin : tensor<?x64xf32>
  return
}

// -----

func.func @bad_family(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{'llama2' is not a family; one of: mixtral, qwen2_moe,}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) family llama2 top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @float_expected(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expected floating point literal}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 routed_scaling fast : tensor<?x64xf32>
  return
}

// -----

// A knob in the attribute dictionary is checked as the keyword form is.
func.func @knob_in_dictionary(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{'groups' failed to satisfy constraint: 64-bit signless integer attribute}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 {groups = "x"} : tensor<?x64xf32>
  return
}
