// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_fused(%h: tensor<8x?xf32>) {
  // expected-error @+1 {{fused gate|up width must be static}}
  %0 = moe.swiglu %h : tensor<8x?xf32>
  return
}

// -----

func.func @odd_fused(%h: tensor<8x33xf32>) {
  // expected-error @+1 {{fused gate|up width (33) must be even: gate and up halves}}
  %0 = moe.swiglu %h : tensor<8x33xf32>
  return
}

// -----

func.func @three_inputs(%a: tensor<8x16xf32>) {
  // expected-error @+1 {{expects one fused gate|up operand or two (gate, up), got 3}}
  %0 = moe.swiglu %a, %a, %a : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @rows(%g: tensor<8x16xf32>, %u: tensor<9x16xf32>) {
  // expected-error @+1 {{gate row count (8) does not match up row count (9)}}
  %0 = moe.swiglu %g, %u : tensor<8x16xf32>, tensor<9x16xf32>
  return
}

// -----

func.func @widths(%g: tensor<8x16xf32>, %u: tensor<8x17xf32>) {
  // expected-error @+1 {{gate width (16) does not match up width (17)}}
  %0 = moe.swiglu %g, %u : tensor<8x16xf32>, tensor<8x17xf32>
  return
}

// -----

func.func @dynamic_width(%g: tensor<8x?xf32>, %u: tensor<8x?xf32>) {
  // expected-error @+1 {{gate width must be static}}
  %0 = moe.swiglu %g, %u : tensor<8x?xf32>, tensor<8x?xf32>
  return
}

// -----

func.func @elements(%g: tensor<8x16xf32>, %u: tensor<8x16xbf16>) {
  // expected-error @+1 {{gate element type 'f32' does not match up element type 'bf16'}}
  %0 = moe.swiglu %g, %u : tensor<8x16xf32>, tensor<8x16xbf16>
  return
}

// -----

func.func @scale_rows(%a: tensor<8x16xf32>, %s: tensor<7xf32>) {
  // expected-error @+1 {{input row count (8) does not match scale length (7)}}
  %0 = moe.scale_rows %a, %s : tensor<8x16xf32>, tensor<7xf32>
  return
}

// -----

func.func @scale_element(%a: tensor<8x16xf32>, %s: tensor<8xbf16>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of 32-bit float values}}
  %0 = moe.scale_rows %a, %s : tensor<8x16xf32>, tensor<8xbf16>
  return
}

// -----

func.func @grad_rows(%h: tensor<8x32xf32>, %g: tensor<7x16xf32>) {
  // expected-error @+1 {{grad row count (7) does not match input row count (8)}}
  %0 = moe.swiglu_grad %g, %h : tensor<7x16xf32>, tensor<8x32xf32>
  return
}

// -----

func.func @grad_width(%h: tensor<8x32xf32>, %g: tensor<8x32xf32>) {
  // expected-error @+1 {{grad width (32) does not match activation width (16)}}
  %0 = moe.swiglu_grad %g, %h : tensor<8x32xf32>, tensor<8x32xf32>
  return
}

// -----

func.func @grad_element(%h: tensor<8x32xf32>, %g: tensor<8x16xbf16>) {
  // expected-error @+1 {{grad element type 'bf16' does not match input element type 'f32'}}
  %0 = moe.swiglu_grad %g, %h : tensor<8x16xbf16>, tensor<8x32xf32>
  return
}

// -----

func.func @grad_inputs(%g: tensor<8x16xf32>, %u: tensor<9x16xf32>) {
  // expected-error @+1 {{gate row count (8) does not match up row count (9)}}
  %0:2 = moe.swiglu_grad %g, %g, %u : tensor<8x16xf32>, tensor<8x16xf32>, tensor<9x16xf32>
  return
}

// -----

// Zero operands can only be written in the generic form.
func.func @no_inputs() {
  // expected-error @+1 {{'moe.swiglu' op expects one fused gate|up operand or two (gate, up), got 0}}
  %0 = "moe.swiglu"() : () -> tensor<8x16xf32>
  return
}

// -----

func.func @grad_no_inputs(%g: tensor<8x16xf32>) {
  // expected-error @+1 {{expects one fused gate|up operand or two (gate, up), got 0}}
  "moe.swiglu_grad"(%g) : (tensor<8x16xf32>) -> ()
  return
}
