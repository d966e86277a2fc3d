// RUN: moe-opt %s -moe-attach-target=cpu=haswell -moe-select-lowering -moe-lower-to-loops -split-input-file | FileCheck %s
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-lower-to-loops -split-input-file | FileCheck %s --check-prefix=AVX512

// With AVX-512's 6 x 4 tile the sums go out through the cache, from the
// registers of the last chunk's tiles (file comment of
// TgmmMicrokernel.cpp: streamed, they stalled on the memory), for every
// output here.
// A worker keeps the lhs panels of a group's first 8 chunks (and a spare
// slot) for all the column blocks of its task: a chunk's lhs is packed in
// the first column block, or in every one past the held chunks.
// AVX512-LABEL: func @streamed
// AVX512-NOT: extract_aligned_pointer_as_index
// AVX512: scf.parallel
// AVX512: %[[SLOTS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<9x32x82x8xf32>
// AVX512: memref.atomic_rmw addi
// AVX512: %[[CB:.*]] = arith.cmpi eq, %{{.*}}, %c0
// AVX512: %[[CHUNK:.*]] = arith.divsi
// AVX512: %[[SLOT:.*]] = arith.minsi %[[CHUNK]], %c8
// AVX512: %[[PAST:.*]] = arith.cmpi sge, %[[CHUNK]], %c8
// AVX512: %[[PACK:.*]] = arith.ori %[[CB]], %[[PAST]]
// AVX512: scf.if %[[PACK]]
// AVX512: vector.store %{{.*}}, %[[SLOTS]][%[[SLOT]], %{{.*}}, %{{.*}}, %c0{{.*}}] : memref<9x32x82x8xf32>, vector<8xf32>
// AVX512: memref.load %[[SLOTS]][%[[SLOT]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<9x32x82x8xf32>
// AVX512: vector.fma
// AVX512: vector.store {{.*}}, %alloc[{{.*}}] : memref<60x2048x256xf32>, vector<16xf32>
// AVX512-NOT: nontemporal
// AVX512-NOT: sfence

// The tgmm's sums go out from the register tiles of a group's last chunk
// (the block keeps them only between chunks), with streaming (non-temporal)
// stores where every vector is aligned (N a multiple of 16: checked
// statically, the output's start at run time) and the output outgrows the
// cores' L2s; a fence ends each task of such an output. Inside N otherwise
// plain stores; the last, partial column block masked. An empty group's
// tasks store zeros the same three ways. The tasks (a group's depth block,
// all its column blocks) come from the workers' counter.
// CHECK: func.func private @llvm.x86.sse.sfence()
// CHECK-LABEL: func @streamed
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<60x2048x256xf32>
// CHECK: %[[START:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: arith.remsi %[[START]], %c64
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: vector.store {{.*}}, %[[OUT]][{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<60x2048x256xf32>, vector<16xf32>
// CHECK: vector.store {{.*}}, %[[OUT]][{{.*}}] : memref<60x2048x256xf32>, vector<16xf32>
// CHECK: vector.maskedstore %[[OUT]]
// CHECK: arith.cmpi eq
// CHECK: vector.store %cst{{.*}}, %[[OUT]][{{.*}}] {alignment = 64 : i64, nontemporal = true}
// CHECK: vector.maskedstore %[[OUT]]
// CHECK: call @llvm.x86.sse.sfence() : () -> ()
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
func.func @streamed(%a: tensor<?x2048xf32>, %b: tensor<?x256xf32>, %s: tensor<60xi32>) -> tensor<60x2048x256xf32> {
  %0 = moe.tgmm %a, %b, %s : tensor<?x2048xf32>, tensor<?x256xf32>, tensor<60xi32>
  return %0 : tensor<60x2048x256xf32>
}

// -----

// bf16 outputs: AVX2's tile writes 16 values (half a line) of an output
// row, the other half by another tile much later: through the cache.
// CHECK-LABEL: func @bf16_half_lines
// CHECK-NOT: extract_aligned_pointer_as_index
// CHECK-NOT: nontemporal
// CHECK-NOT: sfence
// CHECK: return
func.func @bf16_half_lines(%a: tensor<?x2048xbf16>, %b: tensor<?x256xbf16>, %s: tensor<60xi32>) -> tensor<60x2048x256xbf16> {
  %0 = moe.tgmm %a, %b, %s : tensor<?x2048xbf16>, tensor<?x256xbf16>, tensor<60xi32>
  return %0 : tensor<60x2048x256xbf16>
}

// -----

// Rows of 300 floats put vectors off 64 bytes: no streaming, no fence.
// CHECK-LABEL: func @unaligned_rows
// CHECK-NOT: extract_aligned_pointer_as_index
// CHECK-NOT: nontemporal
// CHECK-NOT: sfence
// CHECK: return
func.func @unaligned_rows(%a: tensor<?x2048xf32>, %b: tensor<?x300xf32>, %s: tensor<60xi32>) -> tensor<60x2048x300xf32> {
  %0 = moe.tgmm %a, %b, %s : tensor<?x2048xf32>, tensor<?x300xf32>, tensor<60xi32>
  return %0 : tensor<60x2048x300xf32>
}

// -----

// An output the caches hold (8 KiB) is stored through them: the next op
// may read it from there.
// CHECK-LABEL: func @small
// CHECK-NOT: nontemporal
// CHECK-NOT: sfence
// CHECK: return
func.func @small(%a: tensor<?x16xf32>, %b: tensor<?x32xf32>, %s: tensor<4xi32>) -> tensor<4x16x32xf32> {
  %0 = moe.tgmm %a, %b, %s : tensor<?x16xf32>, tensor<?x32xf32>, tensor<4xi32>
  return %0 : tensor<4x16x32xf32>
}
