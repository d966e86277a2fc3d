// RUN: moe-opt %s -moe-generate-backward -split-input-file -verify-diagnostics
// RUN: not moe-opt %s -moe-generate-backward=loss=hinge 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not moe-opt %s -moe-generate-backward=functions=missing 2>&1 | FileCheck %s --check-prefix=MISSING

// LOSS: moe-opt: for the --loss option: must be mean-square or cotangent (got 'hinge')
// MISSING: error: moe-generate-backward: no function @missing

// expected-error @+1 {{moe-generate-backward: @two must return one [tokens, hidden] tensor, the block output}}
func.func @two(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %b = moe.swiglu %a : tensor<4x4xf32>
  %c = tensor.concat dim(1) %b, %b : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %c, %c : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// An op on the gradient's path without a rule is named, at its location.
func.func @product(%a: tensor<4x4xf32>) -> tensor<4x2xf32> {
  %b = moe.swiglu %a : tensor<4x4xf32>
  // expected-error @+1 {{moe-generate-backward: no adjoint rule for 'arith.mulf'}}
  %c = arith.mulf %b, %b : tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

// The name the backward would take is in use: refused, nothing replaced.
// expected-error @+1 {{moe-generate-backward: @taken_forward_backward exists already}}
func.func @taken(%a: tensor<4x4xf32>) -> tensor<4x2xf32> {
  %b = moe.swiglu %a : tensor<4x4xf32>
  return %b : tensor<4x2xf32>
}
func.func private @taken_forward_backward(%a: tensor<4x4xf32>) -> tensor<4x2xf32>
