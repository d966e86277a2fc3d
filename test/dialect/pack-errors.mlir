// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @tokens_x_ids(%x: tensor<8x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{token count of x (8) does not match token count of ids (4)}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 : tensor<8x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @tokens_weights_ids(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<5x2xf32>) {
  // expected-error @+1 {{token count of weights (5) does not match token count of ids (4)}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<5x2xf32>
  return
}

// -----

func.func @topk_weights_ids(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{top-k of weights (3) does not match top-k of ids (2)}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x3xf32>
  return
}

// -----

func.func @dynamic_topk(%x: tensor<4x64xf32>, %ids: tensor<4x?xi32>, %w: tensor<4x?xf32>) {
  // expected-error @+1 {{top-k (ids dimension 1) must be static}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 : tensor<4x64xf32>, tensor<4x?xi32>, tensor<4x?xf32>
  return
}

// -----

func.func @dynamic_hidden(%x: tensor<4x?xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{hidden size (x dimension 1) must be static}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 : tensor<4x?xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @ids_element(%x: tensor<4x64xf32>, %ids: tensor<4x2xi64>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{operand #1 must be 2D tensor of 32-bit signless integer values}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 : tensor<4x64xf32>, tensor<4x2xi64>, tensor<4x2xf32>
  return
}

// -----

func.func @no_experts(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{experts (0) must be at least 1}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 0 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @offset_out_of_range(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{expert offset (6) must be in [0, 6)}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 offset 6 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @local_past_end(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{local experts [4, 7) must be a non-empty range in [0, 6)}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 offset 4 local 3 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @local_empty(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{local experts [2, 2) must be a non-empty range in [0, 6)}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 offset 2 local 0 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @zero_capacity(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{capacity (0) must be positive}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 capacity 0 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @gather_rows_k(%src: tensor<4x64xf32>, %perm: tensor<8xi32>) {
  // expected-error @+1 {{top-k (0) must be at least 1}}
  %r = moe.gather_rows %src, %perm top 0 : tensor<4x64xf32>, tensor<8xi32>
  return
}

// -----

func.func @negative_capacity(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{capacity (-4) must be positive}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 6 capacity -4 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @negative_experts(%x: tensor<4x64xf32>, %ids: tensor<4x2xi32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{experts (-6) must be at least 1}}
  %r, %sw, %p, %s = moe.pack %x, %ids, %w experts -6 : tensor<4x64xf32>, tensor<4x2xi32>, tensor<4x2xf32>
  return
}

// -----

func.func @gather_rows_negative_k(%src: tensor<4x64xf32>, %perm: tensor<8xi32>) {
  // expected-error @+1 {{top-k (-2) must be at least 1}}
  %r = moe.gather_rows %src, %perm top -2 : tensor<4x64xf32>, tensor<8xi32>
  return
}
