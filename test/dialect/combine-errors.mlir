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

// -----

func.func @scatter_slots_lengths(%v: tensor<8xf32>, %perm: tensor<6xi32>, %w: tensor<3x2xf32>) {
  // expected-error @+1 {{values length (8) does not match permutation length (6)}}
  %d = moe.scatter_slots %v, %perm, %w : tensor<8xf32>, tensor<6xi32>, tensor<3x2xf32>
  return
}

// -----

func.func @scatter_slots_dynamic_k(%v: tensor<8xf32>, %perm: tensor<8xi32>, %w: tensor<4x?xf32>) {
  // expected-error @+1 {{top-k (like dimension 1) must be static}}
  %d = moe.scatter_slots %v, %perm, %w : tensor<8xf32>, tensor<8xi32>, tensor<4x?xf32>
  return
}
