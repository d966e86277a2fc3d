// The f32 tgmm keeps the lhs panels of a group's first chunks for all the
// column blocks of a task, as many as the target's L2 holds beside 256 KiB
// for the rest, at most 8, plus one spare slot for the chunks past them
// (TgmmMicrokernel.cpp, heldChunksFor); with room for none there is only
// the spare, on the stack, packed for every column block.
// RUN: moe-opt %s -split-input-file -moe-lower-to-loops | FileCheck %s

// A 1 MiB L2: 8 held chunks and the spare, on the heap, inside the
// worker (one allocation a worker, before it takes tasks).
// CHECK-LABEL: func.func @l2_1mib
// CHECK: scf.parallel
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<9x32x82x8xf32>
// CHECK: scf.while
// CHECK: memref.atomic_rmw
module attributes {moe.target = #moe.target<cpu = "znver4", features = ["avx2", "fma", "avx512f"], vector_registers = 32, l1_bytes = 49152, l2_bytes = 1048576>} {
func.func @l2_1mib(%a: tensor<?x2048xf32>, %b: tensor<?x256xf32>, %s: tensor<60xi32>) -> tensor<60x2048x256xf32> {
  %0 = moe.tgmm %a, %b, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"]>} : tensor<?x2048xf32>, tensor<?x256xf32>, tensor<60xi32>
  return %0 : tensor<60x2048x256xf32>
}
}

// -----

// A 512 KiB L2: 3 held chunks (84 KiB each) and the spare.
// CHECK-LABEL: func.func @l2_512kib
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x32x82x8xf32>
// CHECK: arith.minsi %{{.*}}, %c3
module attributes {moe.target = #moe.target<cpu = "znver2", features = ["avx2", "fma"], vector_registers = 16, l1_bytes = 32768, l2_bytes = 524288>} {
func.func @l2_512kib(%a: tensor<?x2048xf32>, %b: tensor<?x256xf32>, %s: tensor<60xi32>) -> tensor<60x2048x256xf32> {
  %0 = moe.tgmm %a, %b, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"]>} : tensor<?x2048xf32>, tensor<?x256xf32>, tensor<60xi32>
  return %0 : tensor<60x2048x256xf32>
}
}

// -----

// A 256 KiB L2: none held; the one slot on the stack, its lhs packed in
// every column block (no condition on the column block).
// CHECK-LABEL: func.func @l2_256kib
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<1x32x82x8xf32>
// CHECK-NOT: memref.alloc() {{.*}}x32x82x8xf32>
// CHECK-NOT: arith.ori
// CHECK: return
module attributes {moe.target = #moe.target<cpu = "haswell", features = ["avx2", "fma"], vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144>} {
func.func @l2_256kib(%a: tensor<?x2048xf32>, %b: tensor<?x256xf32>, %s: tensor<60xi32>) -> tensor<60x2048x256xf32> {
  %0 = moe.tgmm %a, %b, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"]>} : tensor<?x2048xf32>, tensor<?x256xf32>, tensor<60xi32>
  return %0 : tensor<60x2048x256xf32>
}
}
