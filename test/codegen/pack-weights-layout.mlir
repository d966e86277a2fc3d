// moe.pack_weights' lowering against the op's formula, computed by
// Inputs/pack_weights_layout.py from the description alone: int8 quads
// (W + 128, depth padded to 64s) alone, of a gate and an up weight, and of a
// fused w13; f32 panels of a gate and an up weight, in runs of 16 and of 8
// (gate_up_unit 16: 8 gate, 8 up columns a panel) of two weights and of a
// fused w13; and bf16 panels (bf16 weights keep their element), plain and in
// runs of 8. Plain vector code: any
// host runs it (the kernels that read the layout need VNNI or AMX for the
// quads; test/moec/prepare-weights-int8.mlir runs them).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/pack_weights_layout.py make %t
// RUN: moec run %s --entry quads --input %t/quads-w0.npy --output-dir %t/quads > /dev/null
// RUN: moec run %s --entry quads_gate_up --input %t/quads_gate_up-w0.npy --input %t/quads_gate_up-w1.npy --output-dir %t/quads_gate_up > /dev/null
// RUN: moec run %s --entry quads_fused --input %t/quads_fused-w0.npy --output-dir %t/quads_fused > /dev/null
// RUN: moec run %s --entry panels_gate_up --input %t/panels_gate_up-w0.npy --input %t/panels_gate_up-w1.npy --output-dir %t/panels_gate_up > /dev/null
// RUN: moec run %s --entry panels_split --input %t/panels_split-w0.npy --input %t/panels_split-w1.npy --output-dir %t/panels_split > /dev/null
// RUN: moec run %s --entry panels_split_fused --input %t/panels_split_fused-w0.npy --output-dir %t/panels_split_fused > /dev/null
// RUN: moec run %s --entry panels_bf16 --input %t/panels_bf16-w0.npy --output-dir %t/panels_bf16 > /dev/null
// RUN: moec run %s --entry panels_split_bf16 --input %t/panels_split_bf16-w0.npy --input %t/panels_split_bf16-w1.npy --output-dir %t/panels_split_bf16 > /dev/null
// RUN: %python %S/Inputs/pack_weights_layout.py check %t | FileCheck %s
// CHECK: quads: int8[2, 4, 32, 64] as the formula gives
// CHECK: quads_gate_up: int8[2, 8, 32, 64] as the formula gives
// CHECK: quads_fused: int8[2, 6, 32, 64] as the formula gives
// CHECK: panels_gate_up: float32[2, 4, 20, 32] as the formula gives
// CHECK: panels_split: float32[2, 6, 20, 16] as the formula gives
// CHECK: panels_split_fused: float32[2, 6, 9, 16] as the formula gives
// CHECK: panels_bf16: float32[2, 2, 20, 32] as the formula gives
// CHECK: panels_split_bf16: float32[2, 6, 20, 16] as the formula gives

func.func @quads(%w: tensor<2x100x40xi8>) -> tensor<2x4x32x64xi8> {
  %p = moe.pack_weights %w {lanes = 4, tile_columns = 16, block_columns = 32} : tensor<2x100x40xi8> -> tensor<2x4x32x64xi8>
  return %p : tensor<2x4x32x64xi8>
}
func.func @quads_gate_up(%g: tensor<2x100x40xi8>, %u: tensor<2x100x40xi8>) -> tensor<2x8x32x64xi8> {
  %p = moe.pack_weights %g, %u {lanes = 4, tile_columns = 16, block_columns = 64, gate_up_unit = 32} : tensor<2x100x40xi8>, tensor<2x100x40xi8> -> tensor<2x8x32x64xi8>
  return %p : tensor<2x8x32x64xi8>
}
func.func @quads_fused(%w13: tensor<2x70x80xi8>) -> tensor<2x6x32x64xi8> {
  %p = moe.pack_weights %w13 {lanes = 4, tile_columns = 16, block_columns = 32, gate_up_unit = 32} : tensor<2x70x80xi8> -> tensor<2x6x32x64xi8>
  return %p : tensor<2x6x32x64xi8>
}
func.func @panels_gate_up(%g: tensor<2x20x40xf32>, %u: tensor<2x20x40xf32>) -> tensor<2x4x20x32xf32> {
  %p = moe.pack_weights %g, %u {lanes = 1, tile_columns = 32, block_columns = 64, gate_up_unit = 32} : tensor<2x20x40xf32>, tensor<2x20x40xf32> -> tensor<2x4x20x32xf32>
  return %p : tensor<2x4x20x32xf32>
}
func.func @panels_split(%g: tensor<2x20x37xf32>, %u: tensor<2x20x37xf32>) -> tensor<2x6x20x16xf32> {
  %p = moe.pack_weights %g, %u {lanes = 1, tile_columns = 16, block_columns = 48, gate_up_unit = 16} : tensor<2x20x37xf32>, tensor<2x20x37xf32> -> tensor<2x6x20x16xf32>
  return %p : tensor<2x6x20x16xf32>
}
func.func @panels_split_fused(%w13: tensor<2x9x74xf32>) -> tensor<2x6x9x16xf32> {
  %p = moe.pack_weights %w13 {lanes = 1, tile_columns = 16, block_columns = 32, gate_up_unit = 16} : tensor<2x9x74xf32> -> tensor<2x6x9x16xf32>
  return %p : tensor<2x6x9x16xf32>
}
func.func @panels_bf16(%w: tensor<2x20x40xbf16>) -> tensor<2x2x20x32xbf16> {
  %p = moe.pack_weights %w {lanes = 1, tile_columns = 32, block_columns = 64} : tensor<2x20x40xbf16> -> tensor<2x2x20x32xbf16>
  return %p : tensor<2x2x20x32xbf16>
}
func.func @panels_split_bf16(%g: tensor<2x20x37xbf16>, %u: tensor<2x20x37xbf16>) -> tensor<2x6x20x16xbf16> {
  %p = moe.pack_weights %g, %u {lanes = 1, tile_columns = 16, block_columns = 48, gate_up_unit = 16} : tensor<2x20x37xbf16>, tensor<2x20x37xbf16> -> tensor<2x6x20x16xbf16>
  return %p : tensor<2x6x20x16xbf16>
}
