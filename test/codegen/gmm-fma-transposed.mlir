// The fma kind on transposed weights [E, N, D] (the backward's gmm of the
// rows' gradient, f32): a panel vector's 16 columns are 16 weight rows. The
// worker packs its block eight rows at a time, 8 depth values a step: eight
// loads of 8 contiguous values (rows past N clamped to N - 1, and zeroed),
// an 8 x 8 transpose as 24 shuffles, eight stores of 8 packed columns. Each
// step first fetches the next eight rows' values at its own depth: a row's
// part of a block is kc values, too short a stream for the hardware
// prefetcher to ramp up on before the loop turns to those rows.
// RUN: moe-opt %s -moe-lower-to-loops | FileCheck %s

// CHECK-LABEL: func.func @fma_transposed
// CHECK:         %[[W:.*]] = bufferization.to_buffer %arg1
// CHECK:         %[[LAST:.*]] = arith.subi %c40{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}} : index
// CHECK:         %[[FIRST:.*]] = arith.addi %[[COL:[0-9a-z_]+]], %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT:    %[[ROW0:.*]] = arith.minsi %[[FIRST]], %[[LAST]] : index
// CHECK:         %[[NINTH:.*]] = arith.addi %[[COL]], %c8{{(_[0-9]+)?}} : index
// CHECK-NEXT:    %[[NEXT0:.*]] = arith.minsi %[[NINTH]], %[[LAST]] : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK-NEXT:      %[[D:.*]] = arith.addi
// CHECK-NEXT:      memref.prefetch %[[W]][%{{.*}}, %[[NEXT0]], %[[D]]], read, locality<3>, data
// CHECK-COUNT-7:   memref.prefetch %[[W]][%{{.*}}, %{{.*}}, %[[D]]], read, locality<3>, data
// CHECK-NEXT:      vector.load %[[W]][%{{.*}}, %[[ROW0]], %[[D]]] : {{.*}}, vector<8xf32>
// CHECK-COUNT-7:   vector.load %[[W]][%{{.*}}, %{{.*}}, %[[D]]]
// CHECK-COUNT-24:  vector.shuffle
// CHECK-NOT:       vector.shuffle
// CHECK-COUNT-8:   vector.store
// CHECK:         vector.fma
func.func @fma_transposed(%dy: tensor<?x64xf32>, %w: tensor<2x40x64xf32>, %s: tensor<2xi32>) -> tensor<?x40xf32> {
  %dx = moe.gmm %dy, %w, %s transpose_rhs {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 2, kc = 16, nc = 32, mc = 12>} : tensor<?x64xf32>, tensor<2x40x64xf32>, tensor<2xi32>
  return %dx : tensor<?x40xf32>
}
