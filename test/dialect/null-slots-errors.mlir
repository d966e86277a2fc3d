// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @fraction_range(%i: tensor<4x2xi32>, %w: tensor<4x2xf32>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{null fraction (1.50) must be in [0, 1]}}
  %a, %b = moe.null_slots %i, %w, %u fraction 1.5 experts 8 : tensor<4x2xi32>, tensor<4x2xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @draws_slots(%i: tensor<4x2xi32>, %w: tensor<4x2xf32>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{slots of draws (3) does not match slots of ids (2)}}
  %a, %b = moe.null_slots %i, %w, %u fraction 0.5 experts 8 : tensor<4x2xi32>, tensor<4x2xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @weights_tokens(%i: tensor<4x2xi32>, %w: tensor<5x2xf32>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{token count of weights (5) does not match token count of ids (4)}}
  %a, %b = moe.null_slots %i, %w, %u fraction 0.5 experts 8 : tensor<4x2xi32>, tensor<5x2xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @experts(%i: tensor<4x2xi32>, %w: tensor<4x2xf32>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{experts (0) must be positive}}
  %a, %b = moe.null_slots %i, %w, %u fraction 0.5 experts 0 : tensor<4x2xi32>, tensor<4x2xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @dynamic_k(%i: tensor<4x?xi32>, %w: tensor<4x?xf32>, %u: tensor<4x?xf32>) {
  // expected-error @+1 {{top-k (ids dimension 1) must be static}}
  %a, %b = moe.null_slots %i, %w, %u fraction 0.5 experts 8 : tensor<4x?xi32>, tensor<4x?xf32>, tensor<4x?xf32>
  return
}

// -----

func.func @draws_element(%i: tensor<4x2xi32>, %w: tensor<4x2xf32>, %u: tensor<4x2xbf16>) {
  // expected-error @+1 {{operand #2 must be 2D tensor of 32-bit float values}}
  %a, %b = moe.null_slots %i, %w, %u fraction 0.5 experts 8 : tensor<4x2xi32>, tensor<4x2xf32>, tensor<4x2xbf16>
  return
}

// -----

// The block: draws and fraction together, draws shaped [T, K].
func.func @block_draws_without_fraction(%x: tensor<4x8xf32>, %l: tensor<4x4xf32>, %u: tensor<4x2xf32>, %w13: tensor<4x8x6xf32>, %w2: tensor<4x3x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{null_draws(...) and null_fraction are given together or not at all}}
  %y = moe.block %x logits(%l : tensor<4x4xf32>) null_draws(%u : tensor<4x2xf32>) gate_up(%w13 : tensor<4x8x6xf32>) down(%w2 : tensor<4x3x8xf32>) top 2 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @block_fraction_without_draws(%x: tensor<4x8xf32>, %l: tensor<4x4xf32>, %w13: tensor<4x8x6xf32>, %w2: tensor<4x3x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{null_draws(...) and null_fraction are given together or not at all}}
  %y = moe.block %x logits(%l : tensor<4x4xf32>) gate_up(%w13 : tensor<4x8x6xf32>) down(%w2 : tensor<4x3x8xf32>) top 2 null_fraction 0.5 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @block_draws_slots(%x: tensor<4x8xf32>, %l: tensor<4x4xf32>, %u: tensor<4x3xf32>, %w13: tensor<4x8x6xf32>, %w2: tensor<4x3x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{slots of null_draws (3) does not match top-k (2)}}
  %y = moe.block %x logits(%l : tensor<4x4xf32>) null_draws(%u : tensor<4x3xf32>) gate_up(%w13 : tensor<4x8x6xf32>) down(%w2 : tensor<4x3x8xf32>) top 2 null_fraction 0.5 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @block_fraction_range(%x: tensor<4x8xf32>, %l: tensor<4x4xf32>, %u: tensor<4x2xf32>, %w13: tensor<4x8x6xf32>, %w2: tensor<4x3x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{null fraction (-0.50) must be in [0, 1]}}
  %y = moe.block %x logits(%l : tensor<4x4xf32>) null_draws(%u : tensor<4x2xf32>) gate_up(%w13 : tensor<4x8x6xf32>) down(%w2 : tensor<4x3x8xf32>) top 2 null_fraction -0.5 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// take_until_null applies to drawn nulls too, so the block accepts it with a
// fraction and no null experts; without either it is refused.
func.func @block_policy_without_nulls(%x: tensor<4x8xf32>, %l: tensor<4x4xf32>, %w13: tensor<4x8x6xf32>, %w2: tensor<4x3x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{null_policy take_until_null has no effect without null_experts or null_fraction}}
  %y = moe.block %x logits(%l : tensor<4x4xf32>) gate_up(%w13 : tensor<4x8x6xf32>) down(%w2 : tensor<4x3x8xf32>) top 2 null_policy take_until_null : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
