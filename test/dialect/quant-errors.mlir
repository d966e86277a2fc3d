// The int8 ops' verifiers: every wrong scale, type and form is refused with
// a message naming it.
// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @int8_without_scales(%x: tensor<?x64xf32>, %q: tensor<6x64x32xi8>, %s: tensor<6xi32>) {
  // expected-error @+1 {{int8 weights need their scales}}
  %0 = moe.gmm %x, %q, %s : tensor<?x64xf32>, tensor<6x64x32xi8>, tensor<6xi32>
  return
}

// -----

func.func @scales_on_float(%x: tensor<?x64xf32>, %w: tensor<6x64x32xf32>, %s: tensor<6xi32>, %sc: tensor<6xf32>) {
  // expected-error @+1 {{scales are for int8 weights; rhs is 'tensor<6x64x32xf32>'}}
  %0 = moe.gmm %x, %w, %s scales(%sc : tensor<6xf32>) : tensor<?x64xf32>, tensor<6x64x32xf32>, tensor<6xi32>
  return
}

// -----

func.func @int8_transposed(%x: tensor<?x32xf32>, %q: tensor<6x64x32xi8>, %s: tensor<6xi32>, %sc: tensor<6xf32>) {
  // expected-error @+1 {{int8 weights are for the forward: transpose_rhs is not supported}}
  %0 = moe.gmm %x, %q, %s scales(%sc : tensor<6xf32>) transpose_rhs : tensor<?x32xf32>, tensor<6x64x32xi8>, tensor<6xi32>
  return
}

// -----

func.func @scale_experts(%x: tensor<?x64xf32>, %q: tensor<6x64x32xi8>, %s: tensor<6xi32>, %sc: tensor<5xf32>) {
  // expected-error @+1 {{scale expert count (5) does not match weight expert count (6)}}
  %0 = moe.gmm %x, %q, %s scales(%sc : tensor<5xf32>) : tensor<?x64xf32>, tensor<6x64x32xi8>, tensor<6xi32>
  return
}

// -----

func.func @scale_channels(%x: tensor<?x64xf32>, %q: tensor<6x64x32xi8>, %s: tensor<6xi32>, %sc: tensor<6x64xf32>) {
  // expected-error @+1 {{scale channel count (dimension 1) (64) does not match weight output columns (dimension 2) (32)}}
  %0 = moe.gmm %x, %q, %s scales(%sc : tensor<6x64xf32>) : tensor<?x64xf32>, tensor<6x64x32xi8>, tensor<6xi32>
  return
}

// -----

func.func @int8_lhs(%x: tensor<?x64xi8>, %q: tensor<6x64x32xi8>, %s: tensor<6xi32>, %sc: tensor<6xf32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type values}}
  %0 = moe.gmm %x, %q, %s scales(%sc : tensor<6xf32>) : tensor<?x64xi8>, tensor<6x64x32xi8>, tensor<6xi32>
  return
}

// -----

func.func @quantize_dynamic(%w: tensor<?x64x32xf32>) {
  // expected-error @+1 {{weights must have a static shape, got 'tensor<?x64x32xf32>'}}
  %q, %s = moe.quantize %w per_expert : tensor<?x64x32xf32>
  return
}

// -----

func.func @quantize_rows(%x: tensor<8x64xf32>) {
  // expected-error @+1 {{operand #0 must be 3D tensor of 32-bit float or bfloat16 type values}}
  %q, %s = moe.quantize %x per_expert : tensor<8x64xf32>
  return
}

// -----

func.func @quantize_granularity(%w: tensor<6x64x32xf32>) {
  // expected-error @+1 {{expected}}
  %q, %s = moe.quantize %w per_row : tensor<6x64x32xf32>
  return
}

// -----

func.func @dequantize_scales(%q: tensor<6x64x32xi8>, %sc: tensor<6x16xf32>) {
  // expected-error @+1 {{scale channel count (dimension 1) (16) does not match weight output columns (dimension 2) (32)}}
  %0 = moe.dequantize %q, %sc : tensor<6x64x32xi8>, tensor<6x16xf32>
  return
}

// -----

func.func @dequantize_rank(%q: tensor<6x64x32xi8>, %sc: tensor<6x64x32xf32>) {
  // expected-error @+1 {{operand #1 must be 1D/2D tensor of 32-bit float values}}
  %0 = moe.dequantize %q, %sc : tensor<6x64x32xi8>, tensor<6x64x32xf32>
  return
}

// -----

func.func @fake_quant_type(%x: tensor<8x64xi32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type values}}
  %0 = moe.fake_quant %x : tensor<8x64xi32>
  return
}
