// The AVX512_BF16 dot kind on transposed weights [E, N, D] (the backward's
// gmm of the rows' gradient): a packed tile's 16 columns are 16 weight
// rows, and its row for depth pair kp holds each one's kp-th pair, a 32-bit
// value. The worker packs its block 16 depth pairs at a time: 16 masked
// loads of 32 bf16 (a weight row's 16 pairs; rows past N and depth past D
// read zeros, the row clamped to N - 1), a 16 x 16 transpose of 32-bit
// values in four rounds of 16 two-source shuffles (round s exchanges bit s
// of the row and lane indices: the first pairs lanes one apart, the last
// takes halves), and 16 stores of a packed row. Each step first fetches
// the next tile's 16 weight rows at its own depth (the hardware prefetcher
// takes up a tile's 16 new streams only after their first misses). Then
// the usual tiles: vdpbf16ps on the packed rows.
// RUN: moe-opt %s -moe-lower-to-loops | FileCheck %s

// CHECK-LABEL: func.func @dot_transposed
// CHECK:         %[[W:.*]] = bufferization.to_buffer %arg1
// CHECK:         %[[BLOCK:.*]] = memref.alloc() {{.*}} : memref<4x32x32xbf16>
// CHECK:         scf.for
// CHECK:           %[[LAST:.*]] = arith.subi %{{.*}}, %c1{{(_[0-9]+)?}} : index
// CHECK:           scf.for
// CHECK:             %[[SEVENTEENTH:.*]] = arith.addi %[[COL:[0-9a-z_]+]], %c16{{(_[0-9]+)?}} : index
// CHECK-NEXT:        %[[NEXT:.*]] = arith.minsi %[[SEVENTEENTH]], %[[LAST]] : index
// CHECK-NEXT:        memref.prefetch %[[W]][%{{.*}}, %[[NEXT]], %[[D0:[0-9a-z_]+]]], read, locality<3>, data
// CHECK-COUNT-15:    memref.prefetch %[[W]][%{{.*}}, %{{.*}}, %[[D0]]], read, locality<3>, data
// CHECK-NOT:         memref.prefetch
// CHECK:             %[[ROW:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK-NEXT:        %[[FIRST:.*]] = vector.maskedload %[[W]][%{{.*}}, %[[ROW]], %[[D0]]], %{{.*}} : memref<2x40x64xbf16, {{.*}}>, vector<32xi1>, vector<32xbf16> into vector<32xbf16>
// CHECK-NEXT:        %[[PAIRS:.*]] = vector.bitcast %[[FIRST]] : vector<32xbf16> to vector<16xi32>
// CHECK-COUNT-15:    vector.maskedload %[[W]]
// CHECK:             vector.shuffle %[[PAIRS]], %{{.*}} [0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30]
// CHECK-NEXT:        vector.shuffle %[[PAIRS]], %{{.*}} [1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31]
// CHECK-COUNT-61:    vector.shuffle
// CHECK-NEXT:        vector.shuffle {{.*}} [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK-NOT:         vector.shuffle
// CHECK-COUNT-16:    vector.store %{{.*}}, %[[BLOCK]]
// CHECK:         x86vector.avx512.dot
func.func @dot_transposed(%dy: tensor<?x64xbf16>, %w: tensor<2x40x64xbf16>, %s: tensor<2xi32>) -> tensor<?x40xbf16> {
  %dx = moe.gmm %dy, %w, %s transpose_rhs {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"], mr = 6, nv = 4, kc = 16, nc = 64, mc = 12, packed_columns = 64, dot_rows = 12>} : tensor<?x64xbf16>, tensor<2x40x64xbf16>, tensor<2xi32>
  return %dx : tensor<?x40xbf16>
}
