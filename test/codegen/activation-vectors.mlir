// RUN: moe-opt %s -moe-lower-to-loops -split-input-file | FileCheck %s

// moe.swiglu and moe.swiglu_grad lower to loops over rows (parallel) and 16
// outputs at a time: 16-lane loads of gate and up (a plain load inside the
// row, masked lanes at its end), the activation on vectors, a masked
// 16-lane store. Halves of one [R, 2M] input: up M columns after gate.

// CHECK-LABEL: func @swiglu_halves
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: vector.load {{.*}} : memref<?x40xbf16, strided<[?, 1], offset: ?>>, vector<16xbf16>
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.maskedstore {{.*}} : memref<?x20xbf16>, vector<16xi1>, vector<16xbf16>
func.func @swiglu_halves(%h: tensor<?x40xbf16>) -> tensor<?x20xbf16> {
  %a = moe.swiglu %h : tensor<?x40xbf16>
  return %a : tensor<?x20xbf16>
}

// -----

// GPT-OSS's interleaved columns: 32 input columns a vector of outputs,
// deinterleaved; the gradient interleaved back and stored as two vectors.
// CHECK-LABEL: func @swiglu_grad_interleaved
// CHECK: scf.parallel
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK: arith.minimumf {{.*}} : vector<16xf32>
// CHECK: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23]
// CHECK: vector.shuffle {{.*}} [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31]
// CHECK-COUNT-2: vector.maskedstore {{.*}} : memref<?x48xf32>, vector<16xi1>, vector<16xf32>
func.func @swiglu_grad_interleaved(%da: tensor<?x24xf32>, %h: tensor<?x48xf32>) -> tensor<?x48xf32> {
  %dh = moe.swiglu_grad %da, %h activation gpt_oss interleaved : tensor<?x24xf32>, tensor<?x48xf32>
  return %dh : tensor<?x48xf32>
}

// -----

// Gate and up apart: each gradient into its own buffer.
// CHECK-LABEL: func @swiglu_grad_two_inputs
// CHECK: %[[DG:.*]] = memref.alloc() {{.*}}: memref<8x12xf32>
// CHECK: %[[DU:.*]] = memref.alloc() {{.*}}: memref<8x12xf32>
// CHECK: vector.maskedstore %[[DG]][%{{.*}}, %[[COL:.*]]], {{.*}} : memref<8x12xf32>, vector<16xi1>, vector<16xf32>
// CHECK: vector.maskedstore %[[DU]][%{{.*}}, %[[COL]]], {{.*}} : memref<8x12xf32>, vector<16xi1>, vector<16xf32>
// CHECK: return
func.func @swiglu_grad_two_inputs(%da: tensor<8x12xf32>, %g: tensor<8x12xf32>, %u: tensor<8x12xf32>)
    -> (tensor<8x12xf32>, tensor<8x12xf32>) {
  %dg, %du = moe.swiglu_grad %da, %g, %u : tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>
  return %dg, %du : tensor<8x12xf32>, tensor<8x12xf32>
}

// -----

// The gradient of halves in bf16: gate's columns below M = 20, up's at
// m + 20 below 40, each gradient stored there, rounded.
// CHECK-LABEL: func @swiglu_grad_halves_bf16
// CHECK: %[[M:.*]] = arith.constant 20 : index
// CHECK: %[[DH:.*]] = memref.alloc({{.*}}) {{.*}}: memref<?x40xbf16>
// CHECK: scf.for %[[V:.*]] =
// CHECK: %[[GATE:.*]] = arith.muli %[[V]], %c16{{.*}} : index
// CHECK: arith.addi %[[GATE]], %[[M]] : index
// CHECK: math.exp
// CHECK: %[[UP:.*]] = arith.addi %[[GATE]], %[[M]] : index
// CHECK: %[[LIMIT:.*]] = arith.muli %[[M]], %c2{{.*}} : index
// CHECK: vector.maskedstore %[[DH]][%{{.*}}, %[[GATE]]], {{.*}} : memref<?x40xbf16>, vector<16xi1>, vector<16xbf16>
// CHECK: arith.subi %[[LIMIT]], %[[UP]]
// CHECK: vector.maskedstore %[[DH]][%{{.*}}, %[[UP]]], {{.*}} : memref<?x40xbf16>, vector<16xi1>, vector<16xbf16>
func.func @swiglu_grad_halves_bf16(%da: tensor<?x20xbf16>, %h: tensor<?x40xbf16>) -> tensor<?x40xbf16> {
  %dh = moe.swiglu_grad %da, %h : tensor<?x20xbf16>, tensor<?x40xbf16>
  return %dh : tensor<?x40xbf16>
}
