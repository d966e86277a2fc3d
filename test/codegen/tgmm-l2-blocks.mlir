// RUN: moe-opt %s -moe-select-lowering -moe-lower-to-loops -split-input-file | FileCheck %s

// The f32 tgmm's task block (kDepthBlock depth values x its columns, an f32
// accumulator on the worker's stack) follows the target's L2: 128 columns
// in a 1 MiB L2 (256 were slower on an AMD EPYC), 256 in 2 MiB (a Sapphire
// Rapids: the two weight gradients of T 4096 top-8 6-10% faster than with
// 128); the panels hold the block's sub-blocks of one tile's columns each
// (2 or 4 of 64).
// CHECK-LABEL: func @one_mib
// CHECK: memref.alloca() {{.*}} : memref<2x80x64xf32>
// CHECK: memref.alloca() {{.*}} : memref<192x128xf32>
module attributes {moe.target = #moe.target<cpu = "znver4", features = ["avx2", "fma", "avx512f", "avx512bf16", "avx512vnni"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @one_mib(%a: tensor<600x2048xf32>, %b: tensor<600x1408xf32>, %s: tensor<8xi32>) -> tensor<8x2048x1408xf32> {
    %o = moe.tgmm %a, %b, %s : tensor<600x2048xf32>, tensor<600x1408xf32>, tensor<8xi32>
    return %o : tensor<8x2048x1408xf32>
  }
}

// -----

// CHECK-LABEL: func @two_mib
// CHECK: memref.alloca() {{.*}} : memref<4x80x64xf32>
// CHECK: memref.alloca() {{.*}} : memref<192x256xf32>
module attributes {moe.target = #moe.target<cpu = "sapphirerapids", features = ["avx2", "fma", "avx512f", "avx512bf16", "avx512vnni"], vector_registers = 32, l1_bytes = 49152, l2_bytes = 2097152>} {
  func.func @two_mib(%a: tensor<600x2048xf32>, %b: tensor<600x1408xf32>, %s: tensor<8xi32>) -> tensor<8x2048x1408xf32> {
    %o = moe.tgmm %a, %b, %s : tensor<600x2048xf32>, tensor<600x1408xf32>, tensor<8xi32>
    return %o : tensor<8x2048x1408xf32>
  }
}

// -----

// AVX2's 6 x 1 tile (16 registers) keeps 128 columns in any L2 (not
// measured with 256).
// CHECK-LABEL: func @avx2_two_mib
// CHECK: memref.alloca() {{.*}} : memref<8x80x16xf32>
// CHECK: memref.alloca() {{.*}} : memref<192x128xf32>
module attributes {moe.target = #moe.target<cpu = "haswell", features = ["avx2", "fma"], vector_registers = 16, l1_bytes = 32768, l2_bytes = 2097152>} {
  func.func @avx2_two_mib(%a: tensor<600x2048xf32>, %b: tensor<600x1408xf32>, %s: tensor<8xi32>) -> tensor<8x2048x1408xf32> {
    %o = moe.tgmm %a, %b, %s : tensor<600x2048xf32>, tensor<600x1408xf32>, tensor<8xi32>
    return %o : tensor<8x2048x1408xf32>
  }
}
