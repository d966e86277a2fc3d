// RUN: moe-opt %s -moe-attach-target=cpu=sapphirerapids -moe-select-lowering -moe-lower-to-loops | FileCheck %s
// RUN: moe-opt %s -pass-pipeline="builtin.module(moe-to-llvm{target-cpu=sapphirerapids})" | FileCheck %s --check-prefix=LLVM

// bf16 weight gradients on a target with AMX (sapphirerapids, pinned: the
// test runs on any host): the tile state asked for once, then either the
// AMX tasks or, where Linux refuses it, the AVX512_BF16 row pairs
// (tgmm-dot.mlir). The AMX tasks: workers taking (group, depth block)
// tasks from an atomic counter, each task a function of its own. A task
// packs lhs transposed (row pairs interleaved, 16 x 16 blocks of 32-bit
// pairs turned in registers) and, per column block, rhs as row pairs; then
// blocks of 2 x 2 accumulator tiles over the row pairs, each from its own
// zero tile (or, after a group's first chunk, from the task's partial
// sums), the four operand tiles loaded before the four products, and the
// previous block's rows stored during the steps.
// CHECK-LABEL: func.func private @moe_amx_task_0
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK:   vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
// CHECK:   vector.shuffle
// CHECK:   vector.store {{.*}} : memref<32x?x16x32xbf16>, vector<32xbf16>
// CHECK:   vector.store {{.*}} : memref<32x?x16x32xbf16>, vector<32xbf16>
// CHECK:   scf.if {{.*}} -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// CHECK-COUNT-4: amx.tile_load {{.*}} : memref<64x16xf32> into !amx.tile<16x16xf32>
// CHECK:   } else {
// CHECK-COUNT-4: amx.tile_load {{.*}} : memref<512x512xf32> into !amx.tile<16x16xf32>
// CHECK:   scf.for {{.*}} iter_args
// CHECK-COUNT-2: amx.tile_load {{.*}} : memref<32x?x16x32xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-2: amx.tile_load {{.*}} : memref<32x?x16x32xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-4: amx.tile_mulf
// CHECK:     arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK:     scf.yield
// CHECK-COUNT-4: amx.tile_store
// CHECK-LABEL: func @tgmm
// CHECK: %[[RC:.*]] = llvm.call @syscall
// CHECK: %[[GRANTED:.*]] = arith.cmpi eq, %[[RC]]
// CHECK: scf.if %[[GRANTED]] {
// CHECK:   scf.parallel
// CHECK:     scf.while
// CHECK:       memref.atomic_rmw addi
// CHECK:       func.call @moe_amx_task_0(
// CHECK: } else {
// CHECK:   x86vector.avx512.dot
// To LLVM on any host: the tile products and the tile stores into the
// scratch's half in the outlined function, none in the caller.
// LLVM-LABEL: llvm.func @moe_amx_task_0
// LLVM-SAME: passthrough = ["noinline"]
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// LLVM-LABEL: llvm.func @tgmm
// LLVM-NOT: llvm.x86.t
// LLVM: llvm.call @moe_amx_task_0(
// LLVM-NOT: llvm.x86.t
func.func @tgmm(%lhs: tensor<?x300xbf16>, %rhs: tensor<?x600xbf16>, %sizes: tensor<4xi32>) -> tensor<4x300x600xbf16> {
  %0 = moe.tgmm %lhs, %rhs, %sizes : tensor<?x300xbf16>, tensor<?x600xbf16>, tensor<4xi32>
  return %0 : tensor<4x300x600xbf16>
}
