// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-strategy=microkernel-avx512bf16 -moe-lower-to-loops -split-input-file | FileCheck %s
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-strategy=microkernel -moe-lower-to-loops -split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: moe-opt %s -split-input-file -pass-pipeline="builtin.module(moe-to-llvm{target-cpu=znver4 gmm-strategy=microkernel-avx512bf16})" | FileCheck %s --check-prefix=LLVM

// bf16 operands on AVX512_BF16 dot products: no AMX tile state asked for,
// the weight block packed into row-pair tiles (the layout vdpbf16ps reads),
// the task's rows read in place (an even depth) as 32-bit depth pairs, each
// pair broadcast to the 16 lanes and multiplied against 4 weight vectors,
// 6 rows x 4 = 24 accumulators, then the fused SwiGLU epilogue in bf16.
// Weights packed per call: a group's tasks are even blocks of up to 4 x
// dot_rows (192) rows, whole register tiles of 6: a worker packs each
// block it takes a task of, so fewer tasks a block, fewer packs.
// CHECK-NOT: @syscall
// CHECK-LABEL: func @pack_gmm_swiglu_bf16
// CHECK-NOT: amx.
// CHECK:     %[[BLOCKS:.*]] = arith.divsi %{{.*}}, %c192
// CHECK-NEXT: %[[ATLEAST1:.*]] = arith.maxsi %[[BLOCKS]], %c1
// CHECK:     arith.divsi %{{.*}}, %[[ATLEAST1]] : index
// CHECK:     %[[TILES:.*]] = arith.divsi %{{.*}}, %c6
// CHECK-NEXT: %[[WHOLE:.*]] = arith.muli %[[TILES]], %c6
// CHECK-NEXT: %[[STEP:.*]] = arith.maxsi %[[WHOLE]], %c6
// CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:       arith.muli %{{.*}}, %[[STEP]]
// CHECK: scf.parallel
// CHECK:   scf.while
// CHECK:       vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
// CHECK-NOT:   vector.bitcast {{.*}} : vector<32xbf16> to vector<16xi32>
// CHECK:       scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-4: vector.load {{.*}} : memref<{{.*}}xbf16>, vector<32xbf16>
// CHECK-NOT:     memref.load {{.*}} : memref<?xi32
// CHECK:         vector.load {{.*}} : memref<?x64xbf16{{.*}}>, vector<2xbf16>
// CHECK:         vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:         %[[PAIR:.*]] = vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK:         %[[A:.*]] = vector.bitcast %[[PAIR]] : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-4: x86vector.avx512.dot {{.*}}, %[[A]], {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-20: x86vector.avx512.dot
// CHECK-NOT:     x86vector.avx512.dot
// CHECK:       math.exp {{.*}} : vector<16xf32>
// CHECK:       arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-NOT:   vector.fma
// The default for znver4 (pinned) is the dot kind alone: the FMA tiles are
// not compiled in.
// DEFAULT-LABEL: func @pack_gmm_swiglu_bf16
// DEFAULT: x86vector.avx512.dot
// LLVM-LABEL: llvm.func @pack_gmm_swiglu_bf16
// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// LLVM-NOT: x86vector.
func.func @pack_gmm_swiglu_bf16(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                                %w13: tensor<6x64x40xbf16>) -> tensor<?x20xbf16> {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 6 : tensor<?x64xbf16>, tensor<?x2xi32>, tensor<?x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x64xbf16>, tensor<6x64x40xbf16>, tensor<6xi32>
  %a = moe.swiglu %h : tensor<?x40xbf16>
  return %a : tensor<?x20xbf16>
}

// -----

// An odd depth: a depth pair would read past its row, so the task's rows are
// packed as depth pairs, zero past D, and the products run over the padded
// depth. The worker's row pack holds a task's most rows (4 x dot_rows).
// CHECK-LABEL: func @odd_depth_bf16
// CHECK:       vector.bitcast {{.*}} : vector<32xbf16> to vector<16xi32>
// CHECK:       scf.for
// CHECK:         memref.load {{.*}} : memref<192x16xi32>
// CHECK:         vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK:         x86vector.avx512.dot
func.func @odd_depth_bf16(%rows: tensor<?x31xbf16>, %w: tensor<4x31x64xbf16>, %sizes: tensor<4xi32>) -> tensor<?x64xbf16> {
  %h = moe.gmm %rows, %w, %sizes : tensor<?x31xbf16>, tensor<4x31x64xbf16>, tensor<4xi32>
  return %h : tensor<?x64xbf16>
}

// -----

// f32 operands: no bf16 kinds, whatever the strategy.
// CHECK-LABEL: func @f32_gmm
// CHECK-NOT: x86vector.
// CHECK: vector.fma
// LLVM-LABEL: llvm.func @f32_gmm
// LLVM-NOT: dpbf16ps
func.func @f32_gmm(%rows: tensor<?x32xf32>, %w: tensor<4x32x24xf32>, %sizes: tensor<4xi32>) -> tensor<?x24xf32> {
  %h = moe.gmm %rows, %w, %sizes : tensor<?x32xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  return %h : tensor<?x24xf32>
}
