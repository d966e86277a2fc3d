// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @logits_rank(%l: tensor<4x8x2xf32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type values}}
  %i, %w = moe.route %l top 2 : tensor<4x8x2xf32>
  return
}

// -----

func.func @logits_element(%l: tensor<4x8xf16>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type values}}
  %i, %w = moe.route %l top 2 : tensor<4x8xf16>
  return
}

// -----

func.func @dynamic_experts(%l: tensor<4x?xf32>) {
  // expected-error @+1 {{router logits must have a static expert dimension}}
  %i, %w = moe.route %l top 2 : tensor<4x?xf32>
  return
}

// -----

func.func @negative_nulls(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{null_experts (-1) must not be negative}}
  %i, %w = moe.route %l top 2 null_experts -1 : tensor<4x8xf32>
  return
}

// -----

func.func @all_null(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{null_experts (8) leaves no real expert among 8 router columns}}
  %i, %w = moe.route %l top 2 null_experts 8 : tensor<4x8xf32>
  return
}

// -----

func.func @k_zero(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{top-k (0) must be in [1, 8] (router columns)}}
  %i, %w = moe.route %l top 0 : tensor<4x8xf32>
  return
}

// -----

func.func @k_too_large(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{top-k (9) must be in [1, 8] (router columns)}}
  %i, %w = moe.route %l top 9 : tensor<4x8xf32>
  return
}

// -----

func.func @policy_without_nulls(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{null_policy take_until_null has no effect without null_experts}}
  %i, %w = moe.route %l top 2 null_policy take_until_null : tensor<4x8xf32>
  return
}

// -----

func.func @unknown_scoring(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'scoring' [softmax, sigmoid]}}
  %i, %w = moe.route %l top 2 scoring relu : tensor<4x8xf32>
  return
}

// -----

func.func @negative_k(%l: tensor<4x8xf32>) {
  // expected-error @+1 {{top-k (-1) must be in [1, 8] (router columns)}}
  %i, %w = moe.route %l top -1 : tensor<4x8xf32>
  return
}

// -----

// moe.route_grad checks what moe.route checks, and the gradient's shape.
func.func @route_grad_tokens(%dw: tensor<4x2xf32>, %l: tensor<5x8xf32>) {
  // expected-error @+1 {{token count of weights_grad (4) does not match token count of logits (5)}}
  %d = moe.route_grad %dw, %l : tensor<4x2xf32>, tensor<5x8xf32>
  return
}

// -----

func.func @route_grad_k(%dw: tensor<4x9xf32>, %l: tensor<4x8xf32>) {
  // expected-error @+1 {{top-k (9) must be in [1, 8] (router columns)}}
  %d = moe.route_grad %dw, %l : tensor<4x9xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @route_grad_dynamic_k(%dw: tensor<4x?xf32>, %l: tensor<4x8xf32>) {
  // expected-error @+1 {{top-k (weights_grad dimension 1) must be static}}
  %d = moe.route_grad %dw, %l : tensor<4x?xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @route_grad_nulls(%dw: tensor<4x2xf32>, %l: tensor<4x8xf32>) {
  // expected-error @+1 {{null_experts (8) leaves no real expert among 8 router columns}}
  %d = moe.route_grad %dw, %l null_experts 8 : tensor<4x2xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @route_grad_bf16_weights_grad(%dw: tensor<4x2xbf16>, %l: tensor<4x8xf32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float values}}
  %d = moe.route_grad %dw, %l : tensor<4x2xbf16>, tensor<4x8xf32>
  return
}

// -----

// The generic form reaches type inference before the verifier: an
// unranked operand must give an error, not a crash.
func.func @route_grad_unranked(%dw: tensor<4x2xf32>, %l: tensor<*xf32>) {
  // expected-error @+1 {{operand #1 must be 2D tensor of 32-bit float or bfloat16 type values}}
  %d = "moe.route_grad"(%dw, %l) : (tensor<4x2xf32>, tensor<*xf32>) -> tensor<4x8xf32>
  return
}
