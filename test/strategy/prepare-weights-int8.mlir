// moe-prepare-weights on a block moe-quantize split already: the halves are
// merged back, the int8 weights quantized and then packed as quads (lanes
// 4; depth padded to 64s) in one new @f_prepare_weights, which returns the
// scales and the packs but not the int8 weights themselves; the new halves
// replace moe-quantize's and @f calls them. A second run changes nothing.
// AVX2 without VNNI (haswell) packs the same quads for int8_avx2. With the
// i32 vector kind (gmm-strategy=microkernel-fma: int8_vector reads the
// weights in place) nothing is packed and moe-quantize's halves stay.
// RUN: moe-opt %s -moe-quantize -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-prepare-weights | FileCheck %s
// RUN: moe-opt %s -moe-quantize -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-prepare-weights -moe-prepare-weights | FileCheck %s
// RUN: moe-opt %s -moe-quantize -moe-attach-target=cpu=haswell -moe-select-lowering -moe-prepare-weights | FileCheck %s --check-prefix=AVX2
// RUN: moe-opt %s -moe-quantize -moe-attach-target=cpu=skylake-avx512 -moe-select-lowering=gmm-strategy=microkernel-fma -moe-prepare-weights | FileCheck %s --check-prefix=VECTOR --implicit-check-not=moe.pack_weights

// CHECK-LABEL: func.func @block(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x64xf32>, %[[IDS:[^:]*]]: tensor<?x2xi32>, %[[W:[^:]*]]: tensor<?x2xf32>, %[[W1:[^:]*]]: tensor<6x64x40xf32>, %[[W3:[^:]*]]: tensor<6x64x40xf32>, %[[W2:[^:]*]]: tensor<6x40x64xf32>)
// CHECK-NEXT:    %[[P:.*]]:5 = call @block_prepare_weights(%[[W1]], %[[W3]], %[[W2]])
// CHECK-NEXT:    %[[Y:.*]] = call @block_prepared(%[[X]], %[[IDS]], %[[W]], %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[P]]#3, %[[P]]#4)
// CHECK-NEXT:    return %[[Y]]
// CHECK-NOT:   func.func @block_packing
// CHECK-LABEL: func.func @block_prepare_weights(
// CHECK-SAME:      -> (tensor<6x40xf32>, tensor<6x40xf32>, tensor<6x64xf32>, tensor<6x6x16x64xi8>, tensor<6x4x16x64xi8>) attributes {moe.weight_arguments = array<i64: 3, 4, 5>}
// CHECK:         %[[Q1:.*]], %[[S1:.*]] = moe.quantize %{{.*}} per_channel
// CHECK:         %[[Q3:.*]], %[[S3:.*]] = moe.quantize %{{.*}} per_channel
// CHECK:         %[[Q2:.*]], %[[S2:.*]] = moe.quantize %{{.*}} per_channel
// CHECK:         %[[P13:.*]] = moe.pack_weights %[[Q1]], %[[Q3]] {block_columns = 96 : i64, gate_up_unit = 32 : i64, lanes = 4 : i64, tile_columns = 16 : i64} : tensor<6x64x40xi8>, tensor<6x64x40xi8> -> tensor<6x6x16x64xi8>
// CHECK:         %[[P2:.*]] = moe.pack_weights %[[Q2]] {block_columns = 64 : i64, lanes = 4 : i64, tile_columns = 16 : i64} : tensor<6x40x64xi8> -> tensor<6x4x16x64xi8>
// CHECK:         return %[[S1]], %[[S3]], %[[S2]], %[[P13]], %[[P2]]
// CHECK-LABEL: func.func @block_prepared(
// CHECK-SAME:      %[[SS1:[^:]*]]: tensor<6x40xf32>, %[[SS3:[^:]*]]: tensor<6x40xf32>, %[[SS2:[^:]*]]: tensor<6x64xf32>, %[[PP13:[^:]*]]: tensor<6x6x16x64xi8>, %[[PP2:[^:]*]]: tensor<6x4x16x64xi8>)
// CHECK-SAME:      attributes {moe.kept_arguments = array<i64: 0, 1, 2>}
// CHECK-NOT:     moe.quantize
// CHECK:         moe.gmm {{.*}} scales(%[[SS1]] : tensor<6x40xf32>) packed(%[[PP13]] : tensor<6x6x16x64xi8>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_vnni"]
// CHECK:         moe.gmm {{.*}} scales(%[[SS3]] : tensor<6x40xf32>) {moe.lowering
// CHECK:         moe.swiglu
// CHECK:         moe.gmm {{.*}} scales(%[[SS2]] : tensor<6x64xf32>) packed(%[[PP2]] : tensor<6x4x16x64xi8>)

// AVX2-LABEL: func.func @block_prepare_weights(
// AVX2:         moe.pack_weights {{.*}}lanes = 4
// AVX2:         moe.pack_weights {{.*}}lanes = 4
// AVX2-LABEL: func.func @block_prepared(
// AVX2:         moe.gmm {{.*}} packed({{.*}}) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_avx2"]
// AVX2:         moe.gmm {{.*}} packed({{.*}}) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_avx2"]

// VECTOR-LABEL: func.func @block_prepare_weights(
// VECTOR-SAME:      -> (tensor<6x64x40xi8>, tensor<6x40xf32>, tensor<6x64x40xi8>, tensor<6x40xf32>, tensor<6x40x64xi8>, tensor<6x64xf32>)
// VECTOR-LABEL: func.func @block_prepared(
// VECTOR:         moe.gmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["int8_vector"]
// VECTOR-LABEL: func.func @block(
// VECTOR-NEXT:    call @block_prepare_weights
// VECTOR-NEXT:    call @block_prepared
func.func @block(%x: tensor<?x64xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                 %w1: tensor<6x64x40xf32>, %w3: tensor<6x64x40xf32>, %w2: tensor<6x40x64xf32>) -> tensor<?x64xf32> {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 6 : tensor<?x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>
  %g = moe.gmm %rows, %w1, %sizes : tensor<?x64xf32>, tensor<6x64x40xf32>, tensor<6xi32>
  %u = moe.gmm %rows, %w3, %sizes : tensor<?x64xf32>, tensor<6x64x40xf32>, tensor<6xi32>
  %a = moe.swiglu %g, %u : tensor<?x40xf32>, tensor<?x40xf32>
  %d = moe.gmm %a, %w2, %sizes : tensor<?x40xf32>, tensor<6x40x64xf32>, tensor<6xi32>
  return %d : tensor<?x64xf32>
}
