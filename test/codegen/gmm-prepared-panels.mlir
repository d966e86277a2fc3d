// The FMA kind reading weights packed at load time (moe-prepare-weights):
// each depth block chooses at run time between a task of one register tile
// of rows (mr = 2 here), which reads the prepared panels in the tile and
// fetches ahead, and a task of more, which reads f32 panels in place and
// widens bf16 ones into the worker's f32 block once for all its tiles.
// RUN: moe-opt %s -moe-lower-to-loops -split-input-file | FileCheck %s

// bf16 panels: the one-tile branch loads vector<16xbf16> rows of the
// prepared panels, widens them and prefetches a row clamped to D - 1 = 63;
// the other copies the depth block into the f32 scratch, which its tiles
// read.
// CHECK-LABEL: func.func @bf16_panels
// CHECK:         %[[SCRATCH:.*]] = memref.alloc() {{.*}} : memref<4x32x16xf32>
// CHECK:         scf.for %[[PC:.*]] =
// CHECK:           %[[ONE:.*]] = arith.cmpi slt, %{{.*}}, %c3{{(_[0-9]+)?}} : index
// CHECK:           scf.if %[[ONE]] {
// CHECK:             arith.minsi %{{.*}}, %c63{{(_[0-9]+)?}} : index
// CHECK:             memref.prefetch %[[PANELS:[^\[]*]][
// CHECK:             vector.load %[[PANELS]][{{.*}}] : memref<4x64x16xbf16, {{.*}}>, vector<16xbf16>
// CHECK:             arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK-NOT:         memref.prefetch
// CHECK:             vector.load %{{.*}} : memref<4x64x16xbf16, {{.*}}>, vector<16xbf16>
// CHECK:             arith.extf
// CHECK-NEXT:        vector.store %{{.*}}, %[[SCRATCH]]
// CHECK-NOT:         memref.prefetch
// CHECK:             vector.load %[[SCRATCH]]
// CHECK-NOT:         memref.prefetch
// CHECK:         return
func.func @bf16_panels(%x: tensor<?x64xbf16>, %p: tensor<2x4x64x16xbf16>, %s: tensor<2xi32>) -> tensor<?x40xbf16> {
  %w = tensor.empty() : tensor<2x64x40xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x4x64x16xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 32, nc = 64, mc = 8>} : tensor<?x64xbf16>, tensor<2x64x40xbf16>, tensor<2xi32>
  return %y : tensor<?x40xbf16>
}

// -----

// f32 panels: both branches read them in place; only the one-tile branch
// prefetches, and no scratch block is allocated.
// CHECK-LABEL: func.func @f32_panels
// CHECK-NOT:     memref<4x32x16xf32>
// CHECK:         %[[ONE:.*]] = arith.cmpi slt, %{{.*}}, %c3{{(_[0-9]+)?}} : index
// CHECK:         scf.if %[[ONE]] {
// CHECK:           memref.prefetch
// CHECK:           vector.load %{{.*}} : memref<4x64x16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT:       memref.prefetch
// CHECK:           vector.load %{{.*}} : memref<4x64x16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT:       memref.prefetch
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
