// RUN: moe-opt %s -split-input-file -verify-diagnostics
//
// The families' expert variants on moe.swiglu, moe.swiglu_grad and moe.gmm
// (GPT-OSS's activation and interleaving, expert biases): every refusal.

func.func @interleaved_two_inputs(%g: tensor<4x8xf32>, %u: tensor<4x8xf32>) {
  // expected-error @+1 {{interleaved gate/up columns need one fused gate|up operand}}
  %a = moe.swiglu %g, %u interleaved : tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @alpha_on_swiglu(%h: tensor<4x8xf32>) {
  // expected-error @+1 {{alpha and limit apply to activation gpt_oss}}
  %a = moe.swiglu %h alpha 2.0 : tensor<4x8xf32>
  return
}

// -----

func.func @limit_negative(%h: tensor<4x8xf32>) {
  // expected-error @+1 {{activation gpt_oss needs a positive finite limit and a finite alpha, got limit -1.000000e+00 and alpha 1.702000e+00}}
  %a = moe.swiglu %h activation gpt_oss limit -1.0 : tensor<4x8xf32>
  return
}

// -----

func.func @grad_interleaved_two(%d: tensor<4x8xf32>, %g: tensor<4x8xf32>, %u: tensor<4x8xf32>) {
  // expected-error @+1 {{interleaved gate/up columns need one fused gate|up operand}}
  %dg, %du = moe.swiglu_grad %d, %g, %u activation gpt_oss interleaved : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @bias_transposed(%d: tensor<?x16xf32>, %w: tensor<4x8x16xf32>, %s: tensor<4xi32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{a bias is for the forward: transpose_rhs is not supported}}
  %o = moe.gmm %d, %w, %s bias(%b : tensor<4x8xf32>) transpose_rhs : tensor<?x16xf32>, tensor<4x8x16xf32>, tensor<4xi32>
  return
}

// -----

func.func @bias_experts(%x: tensor<?x8xf32>, %w: tensor<4x8x16xf32>, %s: tensor<4xi32>, %b: tensor<3x16xf32>) {
  // expected-error @+1 {{bias expert count (3) does not match rhs expert count (4)}}
  %o = moe.gmm %x, %w, %s bias(%b : tensor<3x16xf32>) : tensor<?x8xf32>, tensor<4x8x16xf32>, tensor<4xi32>
  return
}

// -----

func.func @bias_width(%x: tensor<?x8xf32>, %w: tensor<4x8x16xf32>, %s: tensor<4xi32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{bias width (8) does not match rhs output columns (dimension 2) (16)}}
  %o = moe.gmm %x, %w, %s bias(%b : tensor<4x8xf32>) : tensor<?x8xf32>, tensor<4x8x16xf32>, tensor<4xi32>
  return
}

// -----

func.func @bias_dynamic(%x: tensor<?x8xf32>, %w: tensor<4x8x16xf32>, %s: tensor<4xi32>, %b: tensor<?x16xf32>) {
  // expected-error @+1 {{bias must have a static shape, got 'tensor<?x16xf32>'}}
  %o = moe.gmm %x, %w, %s bias(%b : tensor<?x16xf32>) : tensor<?x8xf32>, tensor<4x8x16xf32>, tensor<4xi32>
  return
}
