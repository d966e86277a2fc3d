// RUN: moe-opt %s -moe-attach-target=cpu=skylake-avx512 -moe-select-lowering -moe-lower-to-loops -split-input-file | FileCheck %s
// RUN: echo "D=64,N=20,swiglu=1,bytes=4 mr=2,nv=2,kc=32,nc=32,mc=4 # test" > %t.table
// RUN: moe-opt %s -moe-attach-target=cpu=skylake-avx512 -moe-select-lowering=tuning-table=%t.table -moe-lower-to-loops -split-input-file | FileCheck %s --check-prefix=TABLE
// RUN: moe-opt %s -moe-attach-target=cpu=skylake-avx512 -moe-select-lowering="gmm-tiling=mr=3,nv=2,kc=16,nc=32,mc=9" -moe-lower-to-loops -split-input-file | FileCheck %s --check-prefix=OPTION

// The pack's gather moves into the gmm's row loads (the pack allocates no
// rows: tensor.empty stands for them) and the SwiGLU into its epilogue: one
// [R, 20] result, no [R, 40] hidden. Workers (one per OpenMP thread) take
// tasks from an atomic counter; each packs weight blocks into f32 panels
// and runs the register tile of vector FMAs.
// CHECK-LABEL: func.func private @omp_get_max_threads() -> i32
// CHECK-LABEL: func @pack_gmm_swiglu
// CHECK: tensor.empty(%{{.*}}) : tensor<?x64xf32>
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only : tensor<?x64xf32> to memref<?x64xf32, strided<[?, 1], offset: ?>>
// CHECK: %[[W:.*]] = bufferization.to_buffer %arg3 read_only : tensor<6x64x40xf32> to memref<6x64x40xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x20xf32>
// CHECK: call @omp_get_max_threads()
// CHECK: scf.parallel
// CHECK:   scf.while
// CHECK:     memref.atomic_rmw addi
// CHECK:   vector.maskedload %[[W]]
// CHECK:   memref.load %[[X]]
// CHECK:   vector.fma
// CHECK:   math.exp {{.*}} : vector<16xf32>
// CHECK:   vector.maskedstore %[[OUT]]
// CHECK-NOT: {{[ =] moe\.}}
// TABLE-LABEL: func @pack_gmm_swiglu
// TABLE: memref.alloc() {alignment = 64 : i64} : memref<1x32x32xf32>
// TABLE: memref.alloc() {alignment = 64 : i64} : memref<4x32xf32>
// TABLE: vector.fma
// OPTION-LABEL: func @pack_gmm_swiglu
// OPTION: memref.alloc() {alignment = 64 : i64} : memref<1x16x32xf32>
// OPTION: memref.alloc() {alignment = 64 : i64} : memref<9x32xf32>
func.func @pack_gmm_swiglu(%x: tensor<?x64xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                           %w13: tensor<6x64x40xf32>) -> tensor<?x20xf32> {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 6 : tensor<?x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x64xf32>, tensor<6x64x40xf32>, tensor<6xi32>
  %a = moe.swiglu %h : tensor<?x40xf32>
  return %a : tensor<?x20xf32>
}

// -----

// Gate and up as two gmms over the same rows (the baseline form): one kernel
// reads both weights; bf16 weights are widened once, when packed: 16
// columns at a time inside the weight, a block's last, partial run a lane
// at a time (no bf16 vector crosses the branch: LLVM would split it).
// CHECK-LABEL: func @two_gmms_one_kernel
// CHECK-DAG: %[[W1:.*]] = bufferization.to_buffer %arg1 read_only {{.*}} memref<4x32x24xbf16, strided<[?, ?, 1], offset: ?>>
// CHECK-DAG: %[[W3:.*]] = bufferization.to_buffer %arg2 read_only {{.*}} memref<4x32x24xbf16, strided<[?, ?, 1], offset: ?>>
// CHECK: vector.load %[[W1]]{{.*}} vector<16xbf16>
// CHECK-NEXT: arith.extf {{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK-NEXT: scf.yield {{.*}} : vector<16xf32>
// CHECK: memref.load %[[W1]]
// CHECK: vector.load %[[W3]]{{.*}} vector<16xbf16>
// CHECK: vector.fma
// CHECK: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-NOT: {{[ =] moe\.}}
func.func @two_gmms_one_kernel(%rows: tensor<?x32xbf16>, %w1: tensor<4x32x24xbf16>,
                               %w3: tensor<4x32x24xbf16>, %sizes: tensor<4xi32>) -> tensor<?x24xbf16> {
  %g = moe.gmm %rows, %w1, %sizes : tensor<?x32xbf16>, tensor<4x32x24xbf16>, tensor<4xi32>
  %u = moe.gmm %rows, %w3, %sizes : tensor<?x32xbf16>, tensor<4x32x24xbf16>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x24xbf16>, tensor<?x24xbf16>
  return %a : tensor<?x24xbf16>
}

// -----

// A gmm whose result is used twice keeps its output (no SwiGLU fusion: the
// SwiGLU is its own vector loop); the transposed gmm (the row gradient)
// keeps the reference loops.
// CHECK-LABEL: func @not_fused
// CHECK: vector.fma
// CHECK: memref.alloca
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK-NOT: {{[ =] moe\.}}
func.func @not_fused(%rows: tensor<?x16xf32>, %w13: tensor<4x16x24xf32>, %sizes: tensor<4xi32>)
    -> (tensor<?x16xf32>, tensor<?x12xf32>) {
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x16xf32>, tensor<4x16x24xf32>, tensor<4xi32>
  %dr = moe.gmm %h, %w13, %sizes transpose_rhs : tensor<?x24xf32>, tensor<4x16x24xf32>, tensor<4xi32>
  %a = moe.swiglu %h : tensor<?x24xf32>
  return %dr, %a : tensor<?x16xf32>, tensor<?x12xf32>
}

// -----

// The baseline form after a pack: both gmms read the one gather the pack's
// rows become, so they still fuse into one kernel with the SwiGLU.
// CHECK-LABEL: func @pack_two_gmms
// CHECK: tensor.empty(%{{.*}}) : tensor<?x32xf32>
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only : tensor<?x32xf32> to memref<?x32xf32, strided<[?, 1], offset: ?>>
// CHECK-COUNT-1: scf.parallel
// CHECK: memref.load %[[X]]
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK-NOT: scf.parallel
// CHECK-NOT: {{[ =] moe\.}}
func.func @pack_two_gmms(%x: tensor<?x32xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                         %w1: tensor<4x32x24xf32>, %w3: tensor<4x32x24xf32>) -> tensor<?x24xf32> {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 4 : tensor<?x32xf32>, tensor<?x2xi32>, tensor<?x2xf32>
  %g = moe.gmm %rows, %w1, %sizes : tensor<?x32xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  %u = moe.gmm %rows, %w3, %sizes : tensor<?x32xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x24xf32>, tensor<?x24xf32>
  return %a : tensor<?x24xf32>
}
