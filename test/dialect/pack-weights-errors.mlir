// moe.pack_weights and a gmm's packed(...) operand: each layout error.
// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @wrong_result(%w: tensor<4x64x40xbf16>) {
  // expected-error @+1 {{the layout packs into 'tensor<4x4x32x32xbf16>', not 'tensor<4x4x64x32xbf16>'}}
  %p = moe.pack_weights %w {lanes = 2, tile_columns = 16, block_columns = 32} : tensor<4x64x40xbf16> -> tensor<4x4x64x32xbf16>
  return
}

// -----

func.func @pairs_of_f32(%w: tensor<4x64x40xf32>) {
  // expected-error @+1 {{lanes must be 1 (f32 panels) or 2 (bf16 pairs, of bf16 weights)}}
  %p = moe.pack_weights %w {lanes = 2, tile_columns = 16, block_columns = 32} : tensor<4x64x40xf32> -> tensor<4x4x32x32xf32>
  return
}

// -----

func.func @wide_pair_tiles(%w: tensor<4x64x40xbf16>) {
  // expected-error @+1 {{tile_columns must be a positive multiple of 16 (16 with lanes 2)}}
  %p = moe.pack_weights %w {lanes = 2, tile_columns = 32, block_columns = 64} : tensor<4x64x40xbf16> -> tensor<4x2x32x64xbf16>
  return
}

// -----

func.func @block_not_tiles(%w: tensor<4x64x40xf32>) {
  // expected-error @+1 {{block_columns must be a positive multiple of tile_columns}}
  %p = moe.pack_weights %w {lanes = 1, tile_columns = 32, block_columns = 48} : tensor<4x64x40xf32> -> tensor<4x1x64x32xf32>
  return
}

// -----

func.func @up_without_unit(%g: tensor<4x64x40xf32>, %u: tensor<4x64x40xf32>) {
  // expected-error @+1 {{an up weight needs gate_up_unit (the SwiGLU's column runs)}}
  %p = moe.pack_weights %g, %u {lanes = 1, tile_columns = 32, block_columns = 64} : tensor<4x64x40xf32>, tensor<4x64x40xf32> -> tensor<4x4x64x32xf32>
  return
}

// -----

func.func @up_other_shape(%g: tensor<4x64x40xf32>, %u: tensor<4x64x48xf32>) {
  // expected-error @+1 {{gate and up must have the same type}}
  %p = moe.pack_weights %g, %u {lanes = 1, tile_columns = 32, block_columns = 64, gate_up_unit = 32} : tensor<4x64x40xf32>, tensor<4x64x48xf32> -> tensor<4x4x64x32xf32>
  return
}

// -----

func.func @odd_unit(%w: tensor<4x64x40xf32>) {
  // expected-error @+1 {{gate_up_unit must be a multiple of tile_columns and of 32 that divides block_columns}}
  %p = moe.pack_weights %w {lanes = 1, tile_columns = 16, block_columns = 96, gate_up_unit = 64} : tensor<4x64x40xf32> -> tensor<4x4x64x16xf32>
  return
}

// -----

func.func @odd_fused(%w: tensor<4x64x41xf32>) {
  // expected-error @+1 {{a fused gate/up weight needs an even column count}}
  %p = moe.pack_weights %w {lanes = 1, tile_columns = 32, block_columns = 64, gate_up_unit = 32} : tensor<4x64x41xf32> -> tensor<4x2x64x32xf32>
  return
}

// -----

func.func @packed_transposed(%dy: tensor<?x64xf32>, %w: tensor<4x40x64xf32>, %p: tensor<4x2x64x32xf32>, %s: tensor<4xi32>) {
  // expected-error @+1 {{packed weights are for the float forward: not with transpose_rhs or int8 weights}}
  %0 = moe.gmm %dy, %w, %s packed(%p : tensor<4x2x64x32xf32>) transpose_rhs : tensor<?x64xf32>, tensor<4x40x64xf32>, tensor<4xi32>
  return
}

// -----

func.func @packed_experts(%x: tensor<?x64xf32>, %w: tensor<4x64x40xf32>, %p: tensor<3x2x64x32xf32>, %s: tensor<4xi32>) {
  // expected-error @+1 {{packed weights' expert count (3) does not match rhs expert count (4)}}
  %0 = moe.gmm %x, %w, %s packed(%p : tensor<3x2x64x32xf32>) : tensor<?x64xf32>, tensor<4x64x40xf32>, tensor<4xi32>
  return
}
