// moe.tgmm on bf16 operands with kernels = ["avx512bf16_dot"] (what
// moe-select-lowering picks with AVX512_BF16): the sum runs over rows, so
// the packs pair rows r and r + 1. The rhs panel (bf16, [sub-block][pair]
// [column, row of the pair]) interleaves the two rows' 16 columns; the lhs
// panel holds each depth value's two rows as one i32, which the tile
// broadcasts. A missing second row (an odd chunk) and columns past N read
// zeros (masked loads). A tile step is a row pair: 4 panel vectors, 6
// broadcast pairs, 24 vdpbf16ps into f32 accumulators. Chunks of up to 160
// rows (80 pairs), blocks of 512 columns (8 tiles of 64) x 192 depth values.
// RUN: moe-opt %s -moe-lower-to-loops | FileCheck %s

module attributes {moe.target = #moe.target<cpu = "znver4", features = ["avx2", "fma", "avx512f", "avx512bf16"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
// CHECK-LABEL: func.func @tgmm_bf16
// CHECK:         %[[LHS:.*]] = bufferization.to_buffer %arg0
// CHECK:         %[[RHS:.*]] = bufferization.to_buffer %arg1
// CHECK:         %[[PANEL:.*]] = memref.alloca() {{.*}} : memref<8x80x128xbf16>
// CHECK-NEXT:    %[[BLOCK:.*]] = memref.alloca() {{.*}} : memref<192x512xf32>
// CHECK-NEXT:    %[[PAIRS:.*]] = memref.alloca() {{.*}} : memref<1x32x82x8xi32>
// The chunk: at most 160 rows, as row pairs.
// CHECK:         arith.divsi %{{.*}}, %c160
// CHECK:         %[[NPAIRS:.*]] = arith.divsi %{{.*}}, %c2
// CHECK:         scf.for %[[P:.*]] = %c0{{.*}} to %[[NPAIRS]] step
// CHECK:           %[[SECOND:.*]] = arith.cmpi slt
// CHECK:           %[[X0:.*]] = vector.maskedload %[[RHS]][%[[R0:.*]], %{{.*}}], %[[M:.*]], %{{.*}} : {{.*}}, vector<16xbf16>
// CHECK:           %[[M1:.*]] = arith.select %[[SECOND]], %[[M]], %{{.*}} : vector<16xi1>
// CHECK-NEXT:      %[[X1:.*]] = vector.maskedload %[[RHS]][%[[R1:.*]], %{{.*}}], %[[M1]], %{{.*}} : {{.*}}, vector<16xbf16>
// CHECK-NEXT:      %[[XX:.*]] = vector.interleave %[[X0]], %[[X1]] : vector<16xbf16> -> vector<32xbf16>
// CHECK:           vector.store %{{.*}}, %[[PANEL]][%{{.*}}, %[[P]], %{{.*}}] : memref<8x80x128xbf16>, vector<32xbf16>
// CHECK:           %[[Y0:.*]] = vector.maskedload %[[LHS]][%[[R0]], %{{.*}}]{{.*}} vector<8xbf16>
// CHECK:           %[[Y1:.*]] = vector.maskedload %[[LHS]][%[[R1]], %{{.*}}]{{.*}} vector<8xbf16>
// CHECK-NEXT:      %[[YY:.*]] = vector.interleave %[[Y0]], %[[Y1]] : vector<8xbf16> -> vector<16xbf16>
// CHECK-NEXT:      %[[Y32:.*]] = vector.bitcast %[[YY]] : vector<16xbf16> to vector<8xi32>
// CHECK-NEXT:      vector.store %[[Y32]], %[[PAIRS]][%{{.*}}, %{{.*}}, %[[P]], %c0{{.*}}] : memref<1x32x82x8xi32>, vector<8xi32>
// The tiles.
// CHECK:         scf.for %[[Q:.*]] = %c0{{.*}} to %{{.*}} step %c1{{.*}} iter_args
// CHECK-COUNT-4:   vector.load %[[PANEL]][%{{.*}}, %[[Q]], %{{.*}}] : memref<8x80x128xbf16>, vector<32xbf16>
// CHECK:           %[[PAIR:.*]] = memref.load %[[PAIRS]][%{{.*}}, %{{.*}}, %[[Q]], %{{.*}}] : memref<1x32x82x8xi32>
// CHECK-NEXT:      %[[SPLAT:.*]] = vector.broadcast %[[PAIR]] : i32 to vector<16xi32>
// CHECK-NEXT:      %[[A:.*]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<32xbf16>
// CHECK-NEXT:      x86vector.avx512.dot %{{.*}}, %[[A]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-23:  x86vector.avx512.dot
// CHECK-NOT:       arith.extf
// CHECK:           scf.yield
// CHECK:         vector.store %{{.*}}, %[[BLOCK]]
func.func @tgmm_bf16(%x: tensor<?x64xbf16>, %dy: tensor<?x40xbf16>, %s: tensor<2xi32>) -> tensor<2x64x40xbf16> {
  %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"]>} : tensor<?x64xbf16>, tensor<?x40xbf16>, tensor<2xi32>
  return %dw : tensor<2x64x40xbf16>
}
}
