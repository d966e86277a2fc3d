// RUN: moe-opt %s -moe-lower-to-loops -split-input-file -verify-diagnostics

func.func @unexpanded(%x: tensor<?x16xf32>, %l: tensor<?x4xf32>, %w13: tensor<4x16x24xf32>, %w2: tensor<4x12x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{moe.block must be expanded before lowering (run -moe-expand-block first, or the moe-to-llvm pipeline)}}
  %y = moe.block %x logits(%l : tensor<?x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>) down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

shard.grid @mesh(shape = ?) {moe.axes = ["expert"]}
func.func @dynamic_grid(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'moe.psum' op runs on a grid with a dynamic axis size; the sharded runtime needs every axis size at compile time}}
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
func.func @integer_sum(%x: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'moe.psum' op has no sharded-runtime lowering for a sum of 'i32'}}
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
func.func @dynamic_capacity(%rows: tensor<8x4xf32>, %send: tensor<2xi32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'moe.all_to_all' op needs a static received row count (the capacity) to be lowered}}
  %r, %c = moe.all_to_all %rows, %send over @mesh ["expert"] : tensor<8x4xf32>, tensor<2xi32> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// Packed weights in another layout than the lowering's (FMA panels of nv 4
// = 64 columns, blocks of nc 64): refused before anything is lowered.
func.func @packed_other_layout(%x: tensor<?x64xf32>, %w: tensor<2x64x40xf32>, %p: tensor<2x1x64x32xf32>, %s: tensor<2xi32>) -> tensor<?x40xf32> {
  // expected-error @+1 {{its packed weights are 'tensor<2x1x64x32xf32>', but its lowering reads 'tensor<2x1x64x64xf32>' (lanes 1, tile_columns 64, block_columns 64, gate_up_unit 0)}}
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x1x64x32xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60>} : tensor<?x64xf32>, tensor<2x64x40xf32>, tensor<2xi32>
  return %y : tensor<?x40xf32>
}

// -----

// bf16 weights in f32 panels (the FMA layout before panels kept the
// weights' element): refused, not read as the wrong element.
func.func @packed_bf16_as_f32(%x: tensor<?x64xbf16>, %w: tensor<2x64x40xbf16>, %p: tensor<2x1x64x64xf32>, %s: tensor<2xi32>) -> tensor<?x40xbf16> {
  // expected-error @+1 {{its packed weights are 'tensor<2x1x64x64xf32>', but its lowering reads 'tensor<2x1x64x64xbf16>' (lanes 1, tile_columns 64, block_columns 64, gate_up_unit 0)}}
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x1x64x64xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60>} : tensor<?x64xbf16>, tensor<2x64x40xbf16>, tensor<2xi32>
  return %y : tensor<?x40xbf16>
}

// -----

// FMA beside AMX: two layouts, so no packed one.
func.func @packed_two_layouts(%x: tensor<?x64xbf16>, %w: tensor<2x64x40xbf16>, %p: tensor<2x4x32x32xbf16>, %s: tensor<2xi32>) -> tensor<?x40xbf16> {
  // expected-error @+1 {{its weights are packed, but the kinds of its lowering read no one packed layout (run moe-prepare-weights after moe-select-lowering)}}
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x4x32x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma", "amx_bf16"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 64, amx_min_rows = 16>} : tensor<?x64xbf16>, tensor<2x64x40xbf16>, tensor<2xi32>
  return %y : tensor<?x40xbf16>
}

// -----

// The reference loops read rhs, which a packed gmm's need not hold.
func.func @packed_reference(%x: tensor<?x64xf32>, %p: tensor<2x1x64x64xf32>, %s: tensor<2xi32>) -> tensor<?x40xf32> {
  %w = tensor.empty() : tensor<2x64x40xf32>
  // expected-error @+1 {{its weights are packed, but it has no #moe.gmm_lowering whose kernels read them (its rhs need not hold the weights; run moe-prepare-weights after moe-select-lowering)}}
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x1x64x64xf32>) : tensor<?x64xf32>, tensor<2x64x40xf32>, tensor<2xi32>
  return %y : tensor<?x40xf32>
}
