// With weights packed at load time, an AMX task's row block holds as many
// rows as 1.25 MiB of packed (bf16) or quantized (int8) rows (a multiple
// of 32, from 256, the size before, to 640): each row block reads its
// expert's weights once more, so blocks are as large as L2 keeps beside a
// column pair of weights (AmxKernel.cpp, kRowBlockBytes). The cap shows in the row-block split
// (evenRowBlock) and, for bf16, in the worker's packed-rows buffer.
// RUN: moe-opt %s -moe-attach-target=cpu=sapphirerapids -moe-lower-to-loops -split-input-file | FileCheck %s

// H 2048 bf16: 4 KiB a row, 320 rows (20 tiles of 16).
// CHECK-LABEL: func.func @amx_bf16_depth_2048
// CHECK: arith.constant 320 : index
// CHECK: memref.alloc() {{.*}} : memref<20x64x16x32xbf16>
func.func @amx_bf16_depth_2048(%x: tensor<?x2048xbf16>, %p: tensor<2x2x1024x32xbf16>, %s: tensor<2xi32>) -> tensor<?x32xbf16> {
  %w = tensor.empty() : tensor<2x2048x32xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x2x1024x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"], mr = 2, nv = 2, kc = 16, nc = 64, mc = 4, packed_columns = 32, dot_rows = 12, amx_min_rows = 64>} : tensor<?x2048xbf16>, tensor<2x2048x32xbf16>, tensor<2xi32>
  return %y : tensor<?x32xbf16>
}

// -----

// A down projection's depth, M 1408: 2816 bytes a row, 448 rows.
// CHECK-LABEL: func.func @amx_bf16_depth_1408
// CHECK: arith.constant 448 : index
// CHECK: memref.alloc() {{.*}} : memref<28x44x16x32xbf16>
func.func @amx_bf16_depth_1408(%x: tensor<?x1408xbf16>, %p: tensor<2x2x704x32xbf16>, %s: tensor<2xi32>) -> tensor<?x32xbf16> {
  %w = tensor.empty() : tensor<2x1408x32xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x2x704x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"], mr = 2, nv = 2, kc = 16, nc = 64, mc = 4, packed_columns = 32, dot_rows = 12, amx_min_rows = 64>} : tensor<?x1408xbf16>, tensor<2x1408x32xbf16>, tensor<2xi32>
  return %y : tensor<?x32xbf16>
}

// -----

// int8 at H 2048: a quantized row is 33 lines (an odd count), 2112 bytes,
// so 608 rows.
// CHECK-LABEL: func.func @amx_int8_depth_2048
// CHECK: arith.constant 608 : index
func.func @amx_int8_depth_2048(%x: tensor<?x2048xbf16>, %p: tensor<2x2x512x64xi8>, %sc: tensor<2x32xf32>, %s: tensor<2xi32>) -> tensor<?x32xbf16> {
  %w = tensor.empty() : tensor<2x2048x32xi8>
  %y = moe.gmm %x, %w, %s scales(%sc : tensor<2x32xf32>) packed(%p : tensor<2x2x512x64xi8>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_vnni", "amx_int8"], mr = 4, nv = 2, kc = 16, nc = 64, mc = 8, packed_columns = 32, amx_min_rows = 1>} : tensor<?x2048xbf16>, tensor<2x2048x32xi8>, tensor<2xi32>
  return %y : tensor<?x32xbf16>
}

// -----

// A small depth: capped at 640 rows, so a hot expert stays several tasks.
// CHECK-LABEL: func.func @amx_bf16_depth_64
// CHECK: arith.constant 640 : index
// CHECK: memref.alloc() {{.*}} : memref<40x2x16x32xbf16>
func.func @amx_bf16_depth_64(%x: tensor<?x64xbf16>, %p: tensor<2x2x32x32xbf16>, %s: tensor<2xi32>) -> tensor<?x32xbf16> {
  %w = tensor.empty() : tensor<2x64x32xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x2x32x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"], mr = 2, nv = 2, kc = 16, nc = 64, mc = 4, packed_columns = 32, dot_rows = 12, amx_min_rows = 64>} : tensor<?x64xbf16>, tensor<2x64x32xbf16>, tensor<2xi32>
  return %y : tensor<?x32xbf16>
}

// -----

// A deeper row (D 4096, 8 KiB): 160 rows would hold, the floor is 256.
// CHECK-LABEL: func.func @amx_bf16_depth_4096
// CHECK: arith.constant 256 : index
// CHECK: memref.alloc() {{.*}} : memref<16x128x16x32xbf16>
func.func @amx_bf16_depth_4096(%x: tensor<?x4096xbf16>, %p: tensor<2x2x2048x32xbf16>, %s: tensor<2xi32>) -> tensor<?x32xbf16> {
  %w = tensor.empty() : tensor<2x4096x32xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x2x2048x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"], mr = 2, nv = 2, kc = 16, nc = 64, mc = 4, packed_columns = 32, dot_rows = 12, amx_min_rows = 64>} : tensor<?x4096xbf16>, tensor<2x4096x32xbf16>, tensor<2xi32>
  return %y : tensor<?x32xbf16>
}
