// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_weights(%rows: tensor<?x64xf32>, %w: tensor<?x64x32xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{rhs (expert weights) must have a static shape, got 'tensor<?x64x32xf32>'}}
  %0 = moe.gmm %rows, %w, %s : tensor<?x64xf32>, tensor<?x64x32xf32>, tensor<6xi32>
  return
}

// -----

func.func @contraction(%rows: tensor<?x64xf32>, %w: tensor<6x32x128xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{lhs contraction size (64) does not match rhs contraction size (dimension 1) (32)}}
  %0 = moe.gmm %rows, %w, %s : tensor<?x64xf32>, tensor<6x32x128xf32>, tensor<6xi32>
  return
}

// -----

func.func @contraction_transposed(%rows: tensor<?x64xf32>, %w: tensor<6x64x32xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{lhs contraction size (64) does not match rhs contraction size (dimension 2, transposed) (32)}}
  %0 = moe.gmm %rows, %w, %s transpose_rhs : tensor<?x64xf32>, tensor<6x64x32xf32>, tensor<6xi32>
  return
}

// -----

func.func @groups(%rows: tensor<?x64xf32>, %w: tensor<6x64x32xf32>, %s: tensor<5xi32>) {
  // expected-error @+1 {{group count (5) does not match rhs expert count (6)}}
  %0 = moe.gmm %rows, %w, %s : tensor<?x64xf32>, tensor<6x64x32xf32>, tensor<5xi32>
  return
}

// -----

func.func @mixed_elements(%rows: tensor<?x64xbf16>, %w: tensor<6x64x32xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{lhs element type 'bf16' does not match rhs element type 'f32'}}
  %0 = moe.gmm %rows, %w, %s : tensor<?x64xbf16>, tensor<6x64x32xf32>, tensor<6xi32>
  return
}

// -----

func.func @sizes_element(%rows: tensor<?x64xf32>, %w: tensor<6x64x32xf32>, %s: tensor<6xi64>) {
  // expected-error @+1 {{operand #2 must be 1D tensor of 32-bit signless integer values}}
  %0 = moe.gmm %rows, %w, %s : tensor<?x64xf32>, tensor<6x64x32xf32>, tensor<6xi64>
  return
}

// -----

func.func @tgmm_rows(%a: tensor<8x64xf32>, %b: tensor<9x32xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{lhs row count (8) does not match rhs row count (9)}}
  %0 = moe.tgmm %a, %b, %s : tensor<8x64xf32>, tensor<9x32xf32>, tensor<6xi32>
  return
}

// -----

func.func @tgmm_dynamic_groups(%a: tensor<8x64xf32>, %b: tensor<8x32xf32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{group count must be static}}
  %0 = moe.tgmm %a, %b, %s : tensor<8x64xf32>, tensor<8x32xf32>, tensor<?xi32>
  return
}

// -----

func.func @tgmm_dynamic_lhs(%a: tensor<8x?xf32>, %b: tensor<8x32xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{lhs column count must be static}}
  %0 = moe.tgmm %a, %b, %s : tensor<8x?xf32>, tensor<8x32xf32>, tensor<6xi32>
  return
}

// -----

func.func @tgmm_dynamic_rhs(%a: tensor<8x64xf32>, %b: tensor<8x?xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{rhs column count must be static}}
  %0 = moe.tgmm %a, %b, %s : tensor<8x64xf32>, tensor<8x?xf32>, tensor<6xi32>
  return
}

// -----

func.func @tgmm_elements(%a: tensor<8x64xf32>, %b: tensor<8x32xbf16>, %s: tensor<6xi32>) {
  // expected-error @+1 {{lhs element type 'f32' does not match rhs element type 'bf16'}}
  %0 = moe.tgmm %a, %b, %s : tensor<8x64xf32>, tensor<8x32xbf16>, tensor<6xi32>
  return
}

// -----

func.func @shared_groups_zero(%a: tensor<8x64xf32>, %b: tensor<6x64x32xf32>, %s: tensor<6xi32>) {
  // expected-error @+1 {{'moe.shared_groups' must be a positive integer on a moe.gmm}}
  %0 = moe.gmm %a, %b, %s {moe.shared_groups = 0 : i64} : tensor<8x64xf32>, tensor<6x64x32xf32>, tensor<6xi32>
  return
}

// -----

func.func @shared_groups_elsewhere(%a: tensor<8x64xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'moe.shared_groups' must be a positive integer on a moe.gmm}}
  %0 = moe.scale_rows %a, %s {moe.shared_groups = 1 : i64} : tensor<8x64xf32>, tensor<8xf32>
  return
}
