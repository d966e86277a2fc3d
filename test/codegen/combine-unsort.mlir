// moe.combine's unsort strategy: the permutation inverted once, then each
// token (in parallel) sums its K rows in slot order, 16 columns at a time
// in registers, and stores the sums once in the output's type: no f32
// buffer zeroed first and no second pass to round it. A slot no row fills
// (inverse < 0: a null or dropped route) adds nothing. The hidden size's
// last 40 % 16 columns go one at a time. The scatter strategy still sums
// into an f32 buffer in row order.
// RUN: moe-opt %s -moe-lower-to-loops -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @combine_bf16
// CHECK:         %[[ROWS:.*]] = bufferization.to_buffer %arg0
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x40xbf16>
// CHECK-NOT:     memref<?x40xf32>
// CHECK:         %[[INVERSE:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?xindex>
// CHECK:         scf.parallel (%[[T:.*]]) =
// CHECK:           %[[R0:.*]] = memref.load %[[INVERSE]]
// CHECK-NEXT:      %[[LIVE0:.*]] = arith.cmpi sge, %[[R0]], %c0
// CHECK:           %[[W0:.*]] = memref.load %{{.*}}[%[[T]], %c0{{.*}}] : memref<?x2xf32
// CHECK-NEXT:      %[[C0:.*]] = vector.broadcast %[[W0]] : f32 to vector<16xf32>
// CHECK:           %[[R1:.*]] = memref.load %[[INVERSE]]
// CHECK-NEXT:      %[[LIVE1:.*]] = arith.cmpi sge, %[[R1]], %c0
// CHECK:           %[[C1:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:           scf.for %[[H:.*]] = %c0{{.*}} to %[[WHOLE:.*]] step %c16
// CHECK:             %[[S0:.*]] = scf.if %[[LIVE0]] -> (vector<16xf32>) {
// CHECK-NEXT:          %[[X0:.*]] = vector.load %{{.*}}[%[[R0]], %[[H]]] : {{.*}}, vector<16xbf16>
// CHECK-NEXT:          %[[Y0:.*]] = arith.extf %[[X0]] : vector<16xbf16> to vector<16xf32>
// CHECK-NEXT:          %[[P0:.*]] = arith.mulf %[[C0]], %[[Y0]] : vector<16xf32>
// CHECK-NEXT:          %[[A0:.*]] = arith.addf %[[ZERO:.*]], %[[P0]] : vector<16xf32>
// CHECK-NEXT:          scf.yield %[[A0]]
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %[[ZERO]]
// CHECK:             %[[S1:.*]] = scf.if %[[LIVE1]] -> (vector<16xf32>) {
// CHECK:               arith.mulf %[[C1]]
// CHECK-NEXT:          %[[A1:.*]] = arith.addf %[[S0]], %{{.*}} : vector<16xf32>
// CHECK-NEXT:          scf.yield %[[A1]]
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %[[S0]]
// CHECK:             %[[B:.*]] = arith.truncf %[[S1]] : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT:        vector.store %[[B]], %[[OUT]][%[[T]], %[[H]]]
// CHECK:           scf.for %{{.*}} = %[[WHOLE]] to %c40
// CHECK:             scf.if %[[LIVE0]] -> (f32)
// CHECK:             scf.if %[[LIVE1]] -> (f32)
// CHECK:             arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT:     scf.parallel
// CHECK:         return
func.func @combine_bf16(%d: tensor<?x40xbf16>, %perm: tensor<?xi32>, %w: tensor<?x2xf32>) -> tensor<?x40xbf16> {
  %y = moe.combine %d, %perm, %w : tensor<?x40xbf16>, tensor<?xi32>, tensor<?x2xf32>
  return %y : tensor<?x40xbf16>
}

// -----

// Preweighted rows: each slot's coefficient is 1.
// CHECK-LABEL: func.func @combine_preweighted
// CHECK:         scf.parallel
// CHECK-NOT:       memref.load %arg2
// CHECK:           vector.broadcast %cst{{.*}} : f32 to vector<16xf32>
// CHECK:           vector.load {{.*}} vector<16xf32>
// CHECK:         return
func.func @combine_preweighted(%d: tensor<?x32xf32>, %perm: tensor<?xi32>, %w: tensor<?x2xf32>) -> tensor<?x32xf32> {
  %y = moe.combine %d, %perm, %w preweighted : tensor<?x32xf32>, tensor<?xi32>, tensor<?x2xf32>
  return %y : tensor<?x32xf32>
}

// -----

// CHECK-LABEL: func.func @combine_scatter
// CHECK:         %[[ACC:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x40xf32>
// CHECK:         linalg.fill {{.*}} outs(%[[ACC]]
// CHECK:         scf.for
// CHECK:         scf.parallel
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
func.func @combine_scatter(%d: tensor<?x40xbf16>, %perm: tensor<?xi32>, %w: tensor<?x2xf32>) -> tensor<?x40xbf16> {
  %y = moe.combine %d, %perm, %w strategy scatter : tensor<?x40xbf16>, tensor<?xi32>, tensor<?x2xf32>
  return %y : tensor<?x40xbf16>
}
