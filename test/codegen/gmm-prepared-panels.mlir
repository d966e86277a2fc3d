// The FMA kind reading weights packed at load time (moe-prepare-weights):
// each task chooses at run time between one register tile of rows (mr = 2
// here), which reads the prepared panels in the tile and fetches ahead,
// and more, which reads f32 panels in place and widens bf16 ones into the
// worker's f32 block once for all its tiles.
// RUN: moe-opt %s -moe-lower-to-loops -split-input-file | FileCheck %s

// bf16 panels: the one-tile branch is a tile of exactly the task's rows
// (mr = 2: two FMAs a depth step, in a loop of full tiles that runs once
// or not at all; then 1 in a switch on the rows left, one FMA a depth
// step; none for no rows). Each reads the
// task's panels front to back (panels outside, depth blocks inside),
// loads vector<16xbf16> rows, widens them, and prefetches ahead in the
// block seen as one run of values (4 panels x 64 x 16), clamped to its
// end. The other branch copies each depth block into the f32 scratch,
// which its tiles read, and fetches the depth block they read next: the
// task's next one, or past its last (depth 64) the first of the block the
// worker likely takes next (GmmTask's next group and column block), each
// depth step at a stride through it, clamped to its end, into L2
// (locality 2: prefetcht1).
// CHECK-LABEL: func.func @bf16_panels
// CHECK:         %[[SCRATCH:.*]] = memref.alloc() {{.*}} : memref<4x32x16xf32>
// CHECK:         %[[ONE:.*]] = arith.cmpi slt, %{{.*}}, %c3{{(_[0-9]+)?}} : index
// CHECK:         scf.if %[[ONE]] {
// CHECK-NEXT:      arith.subi
// CHECK:           arith.remsi %{{.*}}, %c2
// CHECK:           scf.for %{{.*}} step %c2
// CHECK:             memref.collapse_shape
// CHECK:                 memref.prefetch
// CHECK:                 arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK-COUNT-2:         vector.fma
// CHECK-NOT:             vector.fma
// CHECK:                 scf.yield
// CHECK:           scf.index_switch
// CHECK-NEXT:      case 1 {
// CHECK:             %[[BLOCK:.*]] = memref.collapse_shape %[[PANELS:[^ ]*]] {{\[\[}}0, 1, 2]] : memref<4x64x16xbf16, {{.*}}> into memref<4096xbf16, {{.*}}>
// CHECK:             scf.for %[[PI:[^ ]*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:               scf.for %{{.*}} = %{{.*}} to %c64{{(_[0-9]+)?}} step %c32
// CHECK:                 arith.addi %{{.*}}, %c1024{{(_[0-9]+)?}} : index
// CHECK:                 %[[FLAT:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:            memref.prefetch %[[BLOCK]][%[[FLAT]]]
// CHECK:                 vector.load %[[PANELS]][%[[PI]], {{.*}}] : memref<4x64x16xbf16, {{.*}}>, vector<16xbf16>
// CHECK-NEXT:            arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK:                 vector.fma
// CHECK-NOT:             vector.fma
// CHECK:                 scf.yield
// CHECK:           default {
// CHECK-NEXT:      }
// CHECK:           %[[IN:.*]] = arith.cmpi slt, %[[NEXT:.*]], %c64{{(_[0-9]+)?}} : index
// CHECK-NEXT:      %[[G:.*]] = arith.select %[[IN]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[CB:.*]] = arith.select %[[IN]], %{{.*}}, %{{.*}} : index
// CHECK:           %[[D:.*]] = arith.select %[[IN]], %[[NEXT]], %c0{{(_[0-9]+)?}} : index
// CHECK:           memref.subview %{{.*}}[%[[G]], %{{.*}}, %{{.*}}, %{{.*}}] [1, 4, 64, 16]
// CHECK:           %[[AHEAD:.*]] = memref.collapse_shape {{.*}} : memref<4x64x16xbf16, {{.*}}> into memref<4096xbf16, {{.*}}>
// CHECK-NOT:       memref.prefetch
// CHECK:           vector.load %{{.*}} : memref<4x64x16xbf16, {{.*}}>, vector<16xbf16>
// CHECK:           arith.extf
// CHECK-NEXT:      vector.store %{{.*}}, %[[SCRATCH]]
// CHECK:           scf.for %[[K:[^ ]*]] = {{.*}} iter_args
// CHECK-NEXT:        %[[STEP:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK-NEXT:        %[[AT:.*]] = arith.addi %{{.*}}, %[[STEP]] : index
// CHECK-NEXT:        %[[CLAMPED:.*]] = arith.minsi %[[AT]], %{{.*}} : index
// CHECK-NEXT:        memref.prefetch %[[AHEAD]][%[[CLAMPED]]], read, locality<2>, data
// CHECK:             vector.load %[[SCRATCH]]
// CHECK:         return
func.func @bf16_panels(%x: tensor<?x64xbf16>, %p: tensor<2x4x64x16xbf16>, %s: tensor<2xi32>) -> tensor<?x40xbf16> {
  %w = tensor.empty() : tensor<2x64x40xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x4x64x16xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 32, nc = 64, mc = 8>} : tensor<?x64xbf16>, tensor<2x64x40xbf16>, tensor<2xi32>
  return %y : tensor<?x40xbf16>
}

// -----

// f32 panels: both branches read them in place, and no scratch block is
// allocated. The one-tile branch (its tiles of 1 and 2 rows) fetches its
// own block ahead, the other the next depth block.
// CHECK-LABEL: func.func @f32_panels
// CHECK-NOT:     memref<4x32x16xf32>
// CHECK:         %[[ONE:.*]] = arith.cmpi slt, %{{.*}}, %c3{{(_[0-9]+)?}} : index
// The fetch runs 2 KiB (512 values) ahead in the task's block, clamped
// to its last value (the task's panels x 64 x 16, minus one).
// CHECK:         scf.if %[[ONE]] {
// CHECK:           scf.for %{{.*}} step %c2
// CHECK:             memref.prefetch
// CHECK:           scf.index_switch
// CHECK:           case 1 {
// CHECK:             %[[BLOCK:.*]] = memref.collapse_shape {{.*}} : memref<4x64x16xf32, {{.*}}> into memref<4096xf32, {{.*}}>
// CHECK:             %[[VALUES:.*]] = arith.muli %[[PANELS:.*]], %c1024 : index
// CHECK-NEXT:        %[[LAST:.*]] = arith.subi %[[VALUES]], %c1{{(_[0-9]+)?}} : index
// CHECK:                 arith.addi %{{.*}}, %c512 : index
// CHECK:                 %[[AT:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK-NEXT:            memref.prefetch %[[BLOCK]][%[[AT]]]
// CHECK:           default {
// CHECK-NEXT:      }
// CHECK:           arith.cmpi slt, %{{.*}}, %c64
// CHECK-NEXT:      arith.select
// CHECK:           %[[AHEAD:.*]] = memref.collapse_shape {{.*}} : memref<4x64x16xf32, {{.*}}> into memref<4096xf32, {{.*}}>
// CHECK:             memref.prefetch %[[AHEAD]]
// CHECK-NEXT:        arith.addi
// CHECK-NEXT:        arith.constant
// CHECK-NEXT:        vector.load %{{.*}} : memref<4x64x16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT:       memref<4x32x16xf32>
// CHECK:         return
func.func @f32_panels(%x: tensor<?x64xf32>, %p: tensor<2x4x64x16xf32>, %s: tensor<2xi32>) -> tensor<?x40xf32> {
  %w = tensor.empty() : tensor<2x64x40xf32>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x4x64x16xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 32, nc = 64, mc = 8>} : tensor<?x64xf32>, tensor<2x64x40xf32>, tensor<2xi32>
  return %y : tensor<?x40xf32>
}

// -----

// Row blocks of one register tile (mc = mr): every task is one tile, so
// there is no choice, and no scratch block even for bf16 panels.
// CHECK-LABEL: func.func @one_tile_blocks
// CHECK-NOT:     memref<4x32x16xf32>
// CHECK-NOT:     scf.if
// CHECK:         arith.remsi %{{.*}}, %c2
// CHECK-NOT:     scf.if
// CHECK:         scf.for %{{.*}} step %c2
// CHECK:         memref.prefetch
// CHECK:         arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK:         scf.index_switch
// CHECK:         memref.prefetch
// CHECK:         arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK-NOT:     memref<4x32x16xf32>
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @one_tile_blocks(%x: tensor<?x64xbf16>, %p: tensor<2x4x64x16xbf16>, %s: tensor<2xi32>) -> tensor<?x40xbf16> {
  %w = tensor.empty() : tensor<2x64x40xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x4x64x16xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 32, nc = 64, mc = 2>} : tensor<?x64xbf16>, tensor<2x64x40xbf16>, tensor<2xi32>
  return %y : tensor<?x40xbf16>
}
