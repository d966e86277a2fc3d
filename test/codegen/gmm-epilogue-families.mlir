// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-lower-to-loops -split-input-file | FileCheck %s
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-strategy=microkernel-amx -moe-lower-to-loops -split-input-file | FileCheck %s --check-prefix=PACKED

// GPT-OSS's experts in the gmm epilogue, on the FMA register tiles (f32):
// the bias of each accumulator's weight columns is added to its sums, the
// two vectors of a tile's interleaved gate/up columns are split into gate
// and up lanes (even, odd), and the clamped activation is applied before
// the one store of the activation: no [R, 2M] hidden, no separate pass over
// the rows for the bias.
// CHECK-LABEL: func @gate_up_bias_interleaved
// CHECK-NOT:   memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x96xf32>
// CHECK:       vector.fma
// The bias: a plain load inside the columns, a masked one for the last.
// CHECK:       vector.load %{{.*}} : memref<8x96xf32, strided<[?, 1], offset: ?>>, vector<16xf32>
// CHECK:       vector.maskedload %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<8x96xf32, strided<[?, 1], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:       vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK:       vector.shuffle %{{.*}}, %{{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK:       arith.minimumf
// CHECK:       math.exp
// CHECK:       vector.maskedstore %{{.*}} : memref<?x48xf32>
// CHECK-NOT:   moe.
// The packed tasks (AMX and AVX512_BF16 on bf16) do the same in their
// column-pair store.
// PACKED-LABEL: func @gate_up_bias_interleaved_bf16
// A bf16 bias: the last, partial run a lane at a time (no masked bf16 load,
// which AVX2 lacks).
// PACKED:       vector.load %{{.*}} : memref<8x96xbf16, strided<[?, 1], offset: ?>>, vector<16xbf16>
// PACKED:       memref.load %{{.*}} : memref<8x96xbf16, strided<[?, 1], offset: ?>>
// PACKED-NOT:   vector.maskedload %{{.*}} : memref<8x96xbf16
// PACKED:       vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// PACKED:       arith.minimumf
// PACKED:       vector.maskedstore %{{.*}} : memref<?x48xbf16>
func.func @gate_up_bias_interleaved(%rows: tensor<?x64xf32>, %w13: tensor<8x64x96xf32>, %b13: tensor<8x96xf32>, %sizes: tensor<8xi32>) -> tensor<?x48xf32> {
  %h = moe.gmm %rows, %w13, %sizes bias(%b13 : tensor<8x96xf32>) : tensor<?x64xf32>, tensor<8x64x96xf32>, tensor<8xi32>
  %a = moe.swiglu %h activation gpt_oss interleaved : tensor<?x96xf32>
  return %a : tensor<?x48xf32>
}
func.func @gate_up_bias_interleaved_bf16(%rows: tensor<?x64xbf16>, %w13: tensor<8x64x96xbf16>, %b13: tensor<8x96xbf16>, %sizes: tensor<8xi32>) -> tensor<?x48xbf16> {
  %h = moe.gmm %rows, %w13, %sizes bias(%b13 : tensor<8x96xbf16>) : tensor<?x64xbf16>, tensor<8x64x96xbf16>, tensor<8xi32>
  %a = moe.swiglu %h activation gpt_oss interleaved : tensor<?x96xbf16>
  return %a : tensor<?x48xbf16>
}
