// moe-prepare-weights: each public function's gmm weights packed once, in
// @f_prepare_weights, and @f_prepared reading them; @f stays as it was.
// The layouts follow the lowering (znver4: AVX512_BF16 pairs in blocks of
// packed_columns for bf16, FMA panels of nr = 64 columns in blocks of nc
// for f32). A second run changes nothing.
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-prepare-weights | FileCheck %s
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-prepare-weights -moe-prepare-weights | FileCheck %s
// Haswell (AVX2): FMA panels of one vector (nr = 16), 8 gate and 8 up
// columns each (gate_up_unit 16), for the bf16 two-gmm SwiGLU and the fused w13;
// bf16 ones stay bf16.
// RUN: moe-opt %s -moe-attach-target=cpu=haswell -moe-select-lowering -moe-prepare-weights | FileCheck %s --check-prefix=HSW
// HSW-LABEL: func.func @bf16_two_gmms_prepare_weights(
// HSW:         moe.pack_weights %{{.*}}, %{{.*}} {block_columns = 80 : i64, gate_up_unit = 16 : i64, lanes = 1 : i64, tile_columns = 16 : i64} : tensor<6x64x40xbf16>, tensor<6x64x40xbf16> -> tensor<6x5x64x16xbf16>
// HSW-LABEL: func.func @f32_fused_prepare_weights(
// HSW:         moe.pack_weights %{{.*}} {block_columns = 160 : i64, gate_up_unit = 16 : i64, lanes = 1 : i64, tile_columns = 16 : i64} : tensor<2x64x160xf32> -> tensor<2x10x64x16xf32>

// A bf16 SwiGLU over two gmms (w1, w3): one pack of both, gate and up
// tiles alternating (gate_up_unit 32); the down projection's alone. The
// gmms of @f_prepared read them, their rhs an empty tensor of the weights'
// type: @f_prepared takes none of the raw weights.
// CHECK-LABEL: func.func @bf16_two_gmms(
// CHECK-NOT:     packed(
// CHECK:         return
// CHECK-LABEL: func.func @bf16_two_gmms_prepare_weights(
// CHECK-SAME:      %[[W1:.*]]: tensor<6x64x40xbf16>, %[[W3:.*]]: tensor<6x64x40xbf16>, %[[W2:.*]]: tensor<6x40x64xbf16>)
// CHECK-SAME:      -> (tensor<6x6x32x32xbf16>, tensor<6x4x32x32xbf16>) attributes {moe.weight_arguments = array<i64: 3, 4, 5>}
// CHECK:         %[[P13:.*]] = moe.pack_weights %[[W1]], %[[W3]] {block_columns = 96 : i64, gate_up_unit = 32 : i64, lanes = 2 : i64, tile_columns = 16 : i64}
// CHECK:         %[[P2:.*]] = moe.pack_weights %[[W2]] {block_columns = 64 : i64, lanes = 2 : i64, tile_columns = 16 : i64}
// CHECK:         return %[[P13]], %[[P2]]
// CHECK-LABEL: func.func @bf16_two_gmms_prepared(
// CHECK-SAME:      %{{.*}}: tensor<?x64xbf16>, %{{.*}}: tensor<?x2xi32>, %{{.*}}: tensor<?x2xf32>, %[[Q13:.*]]: tensor<6x6x32x32xbf16>, %[[Q2:.*]]: tensor<6x4x32x32xbf16>)
// CHECK-SAME:      attributes {moe.kept_arguments = array<i64: 0, 1, 2>}
// CHECK-DAG:     %[[E1:.*]] = tensor.empty() : tensor<6x64x40xbf16>
// CHECK-DAG:     %[[E3:.*]] = tensor.empty() : tensor<6x64x40xbf16>
// CHECK:         moe.gmm %{{.*}}, %[[E1]], %{{.*}} packed(%[[Q13]] : tensor<6x6x32x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"]
// CHECK:         moe.gmm %{{.*}}, %[[E3]], %{{.*}} {moe.lowering
// CHECK:         moe.swiglu
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<6x40x64xbf16>
// CHECK:         moe.gmm %{{.*}}, %[[E2]], %{{.*}} packed(%[[Q2]] : tensor<6x4x32x32xbf16>)
func.func @bf16_two_gmms(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                         %w1: tensor<6x64x40xbf16>, %w3: tensor<6x64x40xbf16>,
                         %w2: tensor<6x40x64xbf16>) -> tensor<?x64xbf16> {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 6 : tensor<?x64xbf16>, tensor<?x2xi32>, tensor<?x2xf32>
  %g = moe.gmm %rows, %w1, %sizes : tensor<?x64xbf16>, tensor<6x64x40xbf16>, tensor<6xi32>
  %u = moe.gmm %rows, %w3, %sizes : tensor<?x64xbf16>, tensor<6x64x40xbf16>, tensor<6xi32>
  %a = moe.swiglu %g, %u : tensor<?x40xbf16>, tensor<?x40xbf16>
  %d = moe.gmm %a, %w2, %sizes : tensor<?x40xbf16>, tensor<6x40x64xbf16>, tensor<6xi32>
  return %d : tensor<?x64xbf16>
}

// f32 with a fused w13 reached through a reshape: FMA panels, half gate
// and half up each (gate_up_unit = nr = 64); the reshape moves into the
// prepare function with the pack, which is all @f_prepared takes of the
// weights.
// CHECK-LABEL: func.func @f32_fused_prepare_weights(
// CHECK-SAME:      %{{.*}}: tensor<128x160xf32>) -> tensor<2x3x64x64xf32> attributes {moe.weight_arguments = array<i64: 1>}
// CHECK:         tensor.expand_shape
// CHECK:         moe.pack_weights %{{.*}} {block_columns = 192 : i64, gate_up_unit = 64 : i64, lanes = 1 : i64, tile_columns = 64 : i64} : tensor<2x64x160xf32> -> tensor<2x3x64x64xf32>
// CHECK-LABEL: func.func @f32_fused_prepared(
// CHECK-SAME:      %{{.*}}: tensor<?x64xf32>, %{{.*}}: tensor<2x{{[0-9]+}}x64x64xf32>)
// CHECK-SAME:      attributes {moe.kept_arguments = array<i64: 0>}
// CHECK-NOT:     tensor.expand_shape
// CHECK:         tensor.empty() : tensor<2x64x160xf32>
// CHECK:         packed(
func.func @f32_fused(%rows: tensor<?x64xf32>, %flat: tensor<128x160xf32>) -> tensor<?x80xf32> {
  %w13 = tensor.expand_shape %flat [[0, 1], [2]] output_shape [2, 64, 160] : tensor<128x160xf32> into tensor<2x64x160xf32>
  %sizes = arith.constant dense<[3, 4]> : tensor<2xi32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x64xf32>, tensor<2x64x160xf32>, tensor<2xi32>
  %a = moe.swiglu %h : tensor<?x160xf32>
  return %a : tensor<?x80xf32>
}

// int8 weights given as arguments: quads for the VNNI kind (depth 32
// padded to 64, four to a row), beside the f32 panels of the float gmm;
// the scales stay @f_prepared's.
// CHECK-LABEL: func.func @int8_prepare_weights(
// CHECK-SAME:      %[[Q:.*]]: tensor<4x32x24xi8>, %[[W2:.*]]: tensor<4x24x32xf32>) -> (tensor<4x2x16x64xi8>, tensor<4x1x24x64xf32>) attributes {moe.weight_arguments = array<i64: 1, 3>}
// CHECK:         moe.pack_weights %[[Q]] {block_columns = 32 : i64, lanes = 4 : i64, tile_columns = 16 : i64} : tensor<4x32x24xi8> -> tensor<4x2x16x64xi8>
// CHECK:         moe.pack_weights %[[W2]] {block_columns = 64 : i64, lanes = 1 : i64, tile_columns = 64 : i64}
// CHECK-LABEL: func.func @int8_prepared(
// CHECK-SAME:      %{{.*}}: tensor<?x32xf32>, %[[S:.*]]: tensor<4x24xf32>, %{{.*}}: tensor<4xi32>, %[[PQ:.*]]: tensor<4x2x16x64xi8>, %{{.*}}: tensor<4x1x24x64xf32>)
// CHECK-SAME:      attributes {moe.kept_arguments = array<i64: 0, 2, 4>}
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x32x24xi8>
// CHECK:         moe.gmm %{{.*}}, %[[E]], %{{.*}} scales(%[[S]] : tensor<4x24xf32>) packed(%[[PQ]] : tensor<4x2x16x64xi8>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_vnni"]

// Not prepared: a function that trains (its tgmm: the weights change every
// step), a private one.
// CHECK-NOT: func.func @trains_prepare_weights
// CHECK-NOT: func.func @private_prepare_weights
func.func @trains(%x: tensor<?x64xf32>, %w: tensor<2x64x32xf32>, %dy: tensor<?x32xf32>, %sizes: tensor<2xi32>)
    -> (tensor<?x32xf32>, tensor<2x64x32xf32>) {
  %y = moe.gmm %x, %w, %sizes : tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<2xi32>
  %dw = moe.tgmm %x, %dy, %sizes : tensor<?x64xf32>, tensor<?x32xf32>, tensor<2xi32>
  return %y, %dw : tensor<?x32xf32>, tensor<2x64x32xf32>
}
func.func @int8(%rows: tensor<?x32xf32>, %w: tensor<4x32x24xi8>, %s: tensor<4x24xf32>, %w2: tensor<4x24x32xf32>,
                %sizes: tensor<4xi32>) -> tensor<?x32xf32> {
  %h = moe.gmm %rows, %w, %sizes scales(%s : tensor<4x24xf32>) : tensor<?x32xf32>, tensor<4x32x24xi8>, tensor<4xi32>
  %o = moe.gmm %h, %w2, %sizes : tensor<?x24xf32>, tensor<4x24x32xf32>, tensor<4xi32>
  return %o : tensor<?x32xf32>
}
func.func private @private(%x: tensor<?x64xf32>, %w: tensor<2x64x32xf32>, %sizes: tensor<2xi32>) -> tensor<?x32xf32> {
  %y = moe.gmm %x, %w, %sizes : tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<2xi32>
  return %y : tensor<?x32xf32>
}
