// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @rows_perm(%r: tensor<8x64xf32>, %p: tensor<7xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{row count (8) does not match permutation length (7)}}
  %0 = moe.combine %r, %p, %w : tensor<8x64xf32>, tensor<7xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @dynamic_topk(%r: tensor<8x64xf32>, %p: tensor<8xi32>, %w: tensor<4x?xf32>) {
  // expected-error @+1 {{top-k (weights dimension 1) must be static}}
  %0 = moe.combine %r, %p, %w : tensor<8x64xf32>, tensor<8xi32>, tensor<4x?xf32>
  return
}

// -----

func.func @dynamic_hidden(%r: tensor<8x?xf32>, %p: tensor<8xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{hidden size (rows dimension 1) must be static}}
  %0 = moe.combine %r, %p, %w : tensor<8x?xf32>, tensor<8xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @unknown_strategy(%r: tensor<8x64xf32>, %p: tensor<8xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'strategy' [unsort, scatter]}}
  %0 = moe.combine %r, %p, %w strategy gather : tensor<8x64xf32>, tensor<8xi32>, tensor<4x2xf32>
  return
}
