// RUN: moe-opt %s -moe-attach-target=cpu=sapphirerapids -moe-select-lowering -moe-lower-to-loops -split-input-file | FileCheck %s
// RUN: moe-opt %s -moe-attach-target=cpu=sapphirerapids -moe-select-lowering=gmm-strategy=microkernel-fma -moe-lower-to-loops -split-input-file | FileCheck %s --check-prefix=FMA
// RUN: moe-opt %s -split-input-file -pass-pipeline="builtin.module(moe-to-llvm{target-cpu=sapphirerapids gmm-strategy=microkernel-amx})" | FileCheck %s --check-prefix=LLVM

// bf16 operands on a target with AMX (sapphirerapids, pinned: the test runs
// on any host): the kernel asks the kernel (Linux) for the AMX tile state
// once per call and, per group, runs AMX tasks (groups of 16 rows or more,
// when granted) or, for the rest, the AVX512_BF16 dot products
// (gmm-avx512bf16.mlir). An AMX task packs the weight
// block into row-pair (VNNI) tiles unless it already holds it, packs its
// rows (through the pack's gather) unless it holds them (256 rows at most:
// the packed weight block shares L2 with them), and computes
// blocks of 2x2 accumulator tiles over the depth: each accumulator starts
// from a zero tile of its own (one tile_zero for all four became copies
// through the stack), the four operand tiles are loaded before the four
// products (so that they take four registers), and each block goes through
// one half of a two-block scratch to the fused SwiGLU epilogue, which runs
// ceil(32 / steps) rows per depth step of the next block (here a depth of
// two steps: 16 rows a step, straight-line, none left after the steps)
// and, for the last block, after the blocks.
// The task is a function of its own, never inlined: LLVM configures and
// releases the tile registers in the prologue and epilogue of a function
// that uses them, which must run only once the run-time check chose AMX (a
// CPU without it stops on them).
// CHECK-LABEL: llvm.func @syscall(i64, ...) -> i64
// CHECK-LABEL: func.func private @moe_amx_task_0
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK:   vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
// CHECK:   arith.cmpi ne
// CHECK:   scf.if
// CHECK:     vector.store {{.*}} : memref<16x2x16x32xbf16>, vector<32xbf16>
// CHECK-NOT: amx.tile_zero
// CHECK-COUNT-4: amx.tile_load {{.*}} : memref<64x16xf32> into !amx.tile<16x16xf32>
// CHECK:   scf.for {{.*}} iter_args
// CHECK-COUNT-4: amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK-COUNT-4: amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-COUNT-16: math.exp {{.*}} : vector<16xf32>
// CHECK-NOT: {{scf.for|math.exp}}
// CHECK:     scf.yield
// CHECK:   memref.subview {{.*}} : memref<2x32x32xf32> to memref<32x32xf32
// CHECK-COUNT-4: amx.tile_store
// CHECK-NOT: math.exp
// CHECK:   scf.for
// CHECK:     vector.load {{.*}} : memref<2x32x32xf32>, vector<16xf32>
// CHECK:     math.exp {{.*}} : vector<16xf32>
// Each row stored fetches into L2 the line row r + 64 (the same column pair,
// two row pairs on) will store, when the task has that row: one line, which
// holds the pair's 16 bf16 columns (half a line).
// CHECK:     vector.maskedstore %[[OUT:.*]][%[[ROW:.*]], %{{.*}}], {{.*}} : memref<?x20xbf16>
// CHECK:     %[[AHEAD:.*]] = arith.addi %[[ROW]], %c64{{.*}} : index
// CHECK:     scf.if
// CHECK-NOT:   {{vector|scf|memref}}.
// CHECK:       memref.prefetch %[[OUT]][%[[AHEAD]], %{{.*}}], read, locality<2>, data : memref<?x20xbf16>
// CHECK-NEXT: }
// CHECK-LABEL: func @pack_gmm_swiglu_bf16
// CHECK-NOT: amx.
// CHECK-DAG: %[[SYS:.*]] = arith.constant 158 : i64
// CHECK-DAG: %[[PERM:.*]] = arith.constant 4131 : i64
// CHECK-DAG: %[[TILEDATA:.*]] = arith.constant 18 : i64
// CHECK: %[[RC:.*]] = llvm.call @syscall(%[[SYS]], %[[PERM]], %[[TILEDATA]]) vararg
// CHECK: %[[GRANTED:.*]] = arith.cmpi eq, %[[RC]]
// CHECK: scf.for
// CHECK:   arith.andi %[[GRANTED]]
// CHECK: scf.parallel
// CHECK:   scf.while
// CHECK:     func.call @moe_amx_task_0(
// CHECK:     } else {
// CHECK:       x86vector.avx512.dot
// FMA-LABEL: func @pack_gmm_swiglu_bf16
// FMA-NOT: amx.
// FMA-NOT: @syscall
// FMA: vector.fma
// LLVM-LABEL: llvm.func @moe_amx_task_0
// LLVM-SAME: passthrough = ["noinline"]
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// LLVM-LABEL: llvm.func @pack_gmm_swiglu_bf16
// LLVM-NOT: llvm.x86.t
// LLVM: llvm.call @moe_amx_task_0(
// LLVM-NOT: amx.
func.func @pack_gmm_swiglu_bf16(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                                %w13: tensor<6x64x40xbf16>) -> tensor<?x20xbf16> {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 6 : tensor<?x64xbf16>, tensor<?x2xi32>, tensor<?x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x64xbf16>, tensor<6x64x40xbf16>, tensor<6xi32>
  %a = moe.swiglu %h : tensor<?x40xbf16>
  return %a : tensor<?x20xbf16>
}

// -----

// f32 operands have no AMX form: the FMA kernel only, no tile-state request.
// CHECK-LABEL: func @f32_gmm
// CHECK-NOT: amx.
// CHECK-NOT: @syscall
// CHECK: vector.fma
// LLVM-LABEL: llvm.func @f32_gmm
// LLVM-NOT: tdpbf16ps
func.func @f32_gmm(%rows: tensor<?x32xf32>, %w: tensor<4x32x24xf32>, %sizes: tensor<4xi32>) -> tensor<?x24xf32> {
  %h = moe.gmm %rows, %w, %sizes : tensor<?x32xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  return %h : tensor<?x24xf32>
}

// -----

// int8 weights: the rows quantized once before the tasks (signed, with their
// sums), then tdpbsud (signed rows, weights packed offset to unsigned) in the
// AMX task, and off AMX vpdpbusd where compiled in (the host's AVX512-VNNI,
// not checked here) or the exact i32 vector task; both scale in the epilogue.
// CHECK-LABEL: func.func private @moe_amx_task_0
// CHECK: arith.xori {{.*}} : vector<64xi8>
// CHECK: amx.tile_muli {{.*}}, {{.*}} zext, {{.*}} : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
// CHECK: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// Its f32 output: a row of a column pair is two lines, both fetched ahead,
// the second's column clamped to the output's last (emitted always; it
// matters where a pair's second line starts past the last column, as with
// 40 columns: 48 -> 39).
// CHECK: scf.if
// CHECK-NOT: {{vector|scf|memref}}.
// CHECK: memref.prefetch %[[OUT:.*]][%[[AHEAD:.*]], %[[COL:.*]]], read, locality<2>, data : memref<?x24xf32>
// CHECK:      %[[NEXT:.*]] = arith.addi %[[COL]], %c16{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]] = arith.minsi %[[NEXT]], %c23{{.*}} : index
// CHECK-NEXT: memref.prefetch %[[OUT]][%[[AHEAD]], %[[LAST]]], read, locality<2>, data : memref<?x24xf32>
// CHECK-LABEL: func @int8_gmm
// CHECK: math.roundeven {{.*}} : vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: func.call @moe_amx_task_0(
// LLVM-LABEL: llvm.func @moe_amx_task_0
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbsud.internal"
// LLVM-LABEL: llvm.func @int8_gmm
// LLVM-NOT: llvm.x86.t
func.func @int8_gmm(%rows: tensor<?x32xf32>, %q: tensor<4x32x24xi8>, %s: tensor<4x24xf32>, %sizes: tensor<4xi32>) -> tensor<?x24xf32> {
  %h = moe.gmm %rows, %q, %sizes scales(%s : tensor<4x24xf32>) : tensor<?x32xf32>, tensor<4x32x24xi8>, tensor<4xi32>
  return %h : tensor<?x24xf32>
}

// -----

// The quantized rows lie an odd number of 64-byte lines apart: at a depth of
// 128 (two lines) a row takes three, so the 32 rows of a tile pair fall in
// 32 different L1 sets (two lines apart they fell in two sets, more lines
// than a set has ways); the tiles load them in place at that stride.
// CHECK-LABEL: func.func private @moe_amx_task_0
// CHECK-SAME: memref<?x192xi8>
// CHECK: amx.tile_load %{{.*}} : memref<?x192xi8> into !amx.tile<16x64xi8>
// CHECK-LABEL: func @int8_deep
// CHECK: memref.alloc(%{{.*}}) {{.*}}: memref<?x192xi8>
// LLVM-LABEL: llvm.func @moe_amx_task_0
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbsud.internal"
func.func @int8_deep(%rows: tensor<?x128xf32>, %q: tensor<4x128x24xi8>, %s: tensor<4x24xf32>, %sizes: tensor<4xi32>) -> tensor<?x24xf32> {
  %h = moe.gmm %rows, %q, %sizes scales(%s : tensor<4x24xf32>) : tensor<?x128xf32>, tensor<4x128x24xi8>, tensor<4xi32>
  return %h : tensor<?x24xf32>
}
