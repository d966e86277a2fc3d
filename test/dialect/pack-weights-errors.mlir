// moe.pack_weights and a gmm's packed(...) operand: each layout error.
// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @wrong_result(%w: tensor<4x64x40xbf16>) {
  // expected-error @+1 {{the layout packs into 'tensor<4x4x32x32xbf16>', not 'tensor<4x4x64x32xbf16>'}}
  %p = moe.pack_weights %w {lanes = 2, tile_columns = 16, block_columns = 32} : tensor<4x64x40xbf16> -> tensor<4x4x64x32xbf16>
  return
}

// -----

func.func @pairs_of_f32(%w: tensor<4x64x40xf32>) {
  // expected-error @+1 {{lanes must be 1 (panels, of float weights), 2 (bf16 pairs, of bf16 weights) or 4 (int8 quads, of int8 weights)}}
  %p = moe.pack_weights %w {lanes = 2, tile_columns = 16, block_columns = 32} : tensor<4x64x40xf32> -> tensor<4x4x32x32xf32>
  return
}

// -----

func.func @wide_pair_tiles(%w: tensor<4x64x40xbf16>) {
  // expected-error @+1 {{tile_columns must be a positive multiple of 16 (16 with lanes 2 or 4)}}
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
  // expected-error @+1 {{gate_up_unit must be a multiple of tile_columns and of 32 (or 16 with lanes 1) that divides block_columns}}
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
  // expected-error @+1 {{packed weights are for the forward: not with transpose_rhs}}
  %0 = moe.gmm %dy, %w, %s packed(%p : tensor<4x2x64x32xf32>) transpose_rhs : tensor<?x64xf32>, tensor<4x40x64xf32>, tensor<4xi32>
  return
}

// -----

func.func @packed_experts(%x: tensor<?x64xf32>, %w: tensor<4x64x40xf32>, %p: tensor<3x2x64x32xf32>, %s: tensor<4xi32>) {
  // expected-error @+1 {{packed weights' expert count (3) does not match rhs expert count (4)}}
  %0 = moe.gmm %x, %w, %s packed(%p : tensor<3x2x64x32xf32>) : tensor<?x64xf32>, tensor<4x64x40xf32>, tensor<4xi32>
  return
}

// -----

func.func @quads_of_bf16(%w: tensor<4x64x40xbf16>) {
  // expected-error @+1 {{int8 weights pack with lanes 4 (quads), and only they}}
  %p = moe.pack_weights %w {lanes = 4, tile_columns = 16, block_columns = 32} : tensor<4x64x40xbf16> -> tensor<4x4x16x64xbf16>
  return
}

// -----

func.func @int8_as_pairs(%w: tensor<4x64x40xi8>) {
  // expected-error @+1 {{int8 weights pack with lanes 4 (quads), and only they}}
  %p = moe.pack_weights %w {lanes = 2, tile_columns = 16, block_columns = 32} : tensor<4x64x40xi8> -> tensor<4x4x32x32xi8>
  return
}

// -----

// Quads: the depth (100) padded to 64s (128), four to a row.
func.func @quads_depth(%w: tensor<4x100x40xi8>) {
  // expected-error @+1 {{the layout packs into 'tensor<4x4x32x64xi8>', not 'tensor<4x4x25x64xi8>'}}
  %p = moe.pack_weights %w {lanes = 4, tile_columns = 16, block_columns = 32} : tensor<4x100x40xi8> -> tensor<4x4x25x64xi8>
  return
}

// -----

func.func @int8_reads_float_packed(%x: tensor<?x64xf32>, %w: tensor<4x64x40xi8>, %sc: tensor<4xf32>, %p: tensor<4x4x32x32xbf16>, %s: tensor<4xi32>) {
  // expected-error @+1 {{packed weights 'tensor<4x4x32x32xbf16>' do not match rhs 'tensor<4x64x40xi8>': int8 weights pack into i8 quads, float weights into float}}
  %0 = moe.gmm %x, %w, %s scales(%sc : tensor<4xf32>) packed(%p : tensor<4x4x32x32xbf16>) : tensor<?x64xf32>, tensor<4x64x40xi8>, tensor<4xi32>
  return
}

// -----

func.func @float_reads_int8_packed(%x: tensor<?x64xf32>, %w: tensor<4x64x40xf32>, %p: tensor<4x4x16x64xi8>, %s: tensor<4xi32>) {
  // expected-error @+1 {{packed weights 'tensor<4x4x16x64xi8>' do not match rhs 'tensor<4x64x40xf32>': int8 weights pack into i8 quads, float weights into float}}
  %0 = moe.gmm %x, %w, %s packed(%p : tensor<4x4x16x64xi8>) : tensor<?x64xf32>, tensor<4x64x40xf32>, tensor<4xi32>
  return
}

// -----

// Runs of 24 would split a 16-column vector between gate and up.
func.func @unit_48(%w: tensor<4x64x40xf32>) {
  // expected-error @+1 {{gate_up_unit must be a multiple of tile_columns and of 32 (or 16 with lanes 1) that divides block_columns}}
  %p = moe.pack_weights %w {lanes = 1, tile_columns = 16, block_columns = 96, gate_up_unit = 48} : tensor<4x64x40xf32> -> tensor<4x6x64x16xf32>
  return
}

// -----

// Half-vector runs are the FMA (lanes 1) panels' alone: the pair and quad kinds read
// gate and up tiles of 16 columns.
func.func @unit_16_pairs(%w: tensor<4x64x40xbf16>) {
  // expected-error @+1 {{gate_up_unit must be a multiple of tile_columns and of 32 (or 16 with lanes 1) that divides block_columns}}
  %p = moe.pack_weights %w {lanes = 2, tile_columns = 16, block_columns = 32, gate_up_unit = 16} : tensor<4x64x40xbf16> -> tensor<4x4x32x32xbf16>
  return
}

// -----

// Panels keep the weights' element: bf16 weights pack into bf16 panels.
func.func @bf16_panels_as_f32(%w: tensor<4x64x40xbf16>) {
  // expected-error @+1 {{the layout packs into 'tensor<4x3x64x16xbf16>', not 'tensor<4x3x64x16xf32>'}}
  %p = moe.pack_weights %w {lanes = 1, tile_columns = 16, block_columns = 16} : tensor<4x64x40xbf16> -> tensor<4x3x64x16xf32>
  return
}

