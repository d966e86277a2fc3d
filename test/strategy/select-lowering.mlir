// The lowering strategy for several CPUs, on any host: moe-attach-target pins
// the CPU (a named CPU gets the default caches, 48 KiB L1 and 2 MiB L2, so
// the tiles do not depend on the machine running the test).
// RUN: moe-opt %s -moe-attach-target=cpu=sapphirerapids -moe-select-lowering | FileCheck %s --check-prefixes=TARGET-SPR,SPR
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering | FileCheck %s --check-prefixes=TARGET-ZEN4,ZEN4
// RUN: moe-opt %s -moe-attach-target=cpu=skylake-avx512 -moe-select-lowering | FileCheck %s --check-prefix=SKX
// RUN: moe-opt %s -moe-attach-target=cpu=haswell -moe-select-lowering | FileCheck %s --check-prefixes=TARGET-HSW,HSW
// RUN: moe-opt %s -moe-attach-target=cpu=sapphirerapids -moe-select-lowering=gmm-strategy=microkernel-fma | FileCheck %s --check-prefix=FMA
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-strategy=microkernel-amx | FileCheck %s --check-prefix=AMX
// RUN: moe-opt %s -moe-attach-target=cpu=haswell -moe-select-lowering=gmm-strategy=microkernel-amx | FileCheck %s --check-prefix=HSW-AMX
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-strategy=reference | FileCheck %s --check-prefix=REF
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering="gmm-tiling=mr=3,nv=2,kc=16,nc=32,mc=9" | FileCheck %s --check-prefix=OPTION
// RUN: echo "D=64,N=20,swiglu=1,bytes=2 mr=2,nv=2,kc=32,nc=32,mc=4 # test" > %t.table
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=tuning-table=%t.table | FileCheck %s --check-prefix=TABLE

// TARGET-SPR: module attributes {moe.target = #moe.target<cpu = "sapphirerapids", features = ["avx2", "fma", "avx512f", "avx512bf16", "avx512vnni", "amx-tile", "amx-bf16", "amx-int8"], vector_registers = 32, l1_bytes = 49152, l2_bytes = 2097152>}
// TARGET-ZEN4: module attributes {moe.target = #moe.target<cpu = "znver4", features = ["avx2", "fma", "avx512f", "avx512bf16", "avx512vnni"], vector_registers = 32, l1_bytes = 49152, l2_bytes = 2097152>}
// TARGET-HSW: module attributes {moe.target = #moe.target<cpu = "haswell", features = ["avx2", "fma"], vector_registers = 8, l1_bytes = 49152, l2_bytes = 2097152>}

// A bf16 pack -> gmm -> swiglu: the pack's rows become a gather_rows the
// kernel reads through, the SwiGLU goes into the epilogue. AMX (every group,
// at run time) beside the dot products where the CPU has both;
// the dot products alone on Zen 4; FMA over widened rows on Skylake-X and
// Haswell (one-vector tiles: AVX2 holds 8 16-lane vectors; the SwiGLU's gate
// and up columns share each vector's halves).
// SPR-LABEL: func @bf16_swiglu
// SPR: moe.gather_rows
// SPR: moe.gmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 64, amx_min_rows = 1, dot_rows = 48, fuse = ["gather", "swiglu"]>}
// ZEN4-LABEL: func @bf16_swiglu
// ZEN4: moe.gmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 64, dot_rows = 48, fuse = ["gather", "swiglu"]>}
// SKX-LABEL: func @bf16_swiglu
// SKX: moe.gmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, fuse = ["gather", "swiglu"]>}
// HSW-LABEL: func @bf16_swiglu
// HSW: moe.gmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 1, kc = 64, nc = 48, mc = 60, fuse = ["gather", "swiglu"]>}
// FMA-LABEL: func @bf16_swiglu
// FMA: kernels = ["fma"]
// AMX-LABEL: func @bf16_swiglu
// AMX: kernels = ["avx512bf16_dot", "amx_bf16"]
// REF-LABEL: func @bf16_swiglu
// REF-NOT: moe.gather_rows
// REF: moe.gmm %{{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["reference"]>}
// OPTION-LABEL: func @bf16_swiglu
// OPTION: mr = 3, nv = 2, kc = 16, nc = 32, mc = 9
// TABLE-LABEL: func @bf16_swiglu
// TABLE: mr = 2, nv = 2, kc = 32, nc = 32, mc = 4
func.func @bf16_swiglu(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                       %w13: tensor<6x64x40xbf16>) -> tensor<?x20xbf16> {
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 6 : tensor<?x64xbf16>, tensor<?x2xi32>, tensor<?x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x64xbf16>, tensor<6x64x40xbf16>, tensor<6xi32>
  %a = moe.swiglu %h : tensor<?x40xbf16>
  return %a : tensor<?x20xbf16>
}

// int8 weights: AMX-INT8 for every group where the CPU has it, beside
// VNNI; AVX2's vpmaddwd without VNNI (Skylake-X, Haswell); exact i32
// vectors when the strategy keeps to the FMA tiles.
// SPR-LABEL: func @int8_gmm
// SPR: kernels = ["int8_vnni", "amx_int8"], {{.*}}packed_columns = 32, amx_min_rows = 1>
// ZEN4-LABEL: func @int8_gmm
// ZEN4: kernels = ["int8_vnni"]
// SKX-LABEL: func @int8_gmm
// SKX: kernels = ["int8_avx2"], {{.*}}packed_columns =
// HSW-LABEL: func @int8_gmm
// HSW: kernels = ["int8_avx2"], {{.*}}packed_columns =
// HSW-AMX-LABEL: func @int8_gmm
// HSW-AMX: kernels = ["int8_avx2", "amx_int8"], {{.*}}amx_min_rows = 1>
// FMA-LABEL: func @int8_gmm
// FMA: kernels = ["int8_vector"]
// AMX-LABEL: func @int8_gmm
// AMX: kernels = ["int8_vnni", "amx_int8"], {{.*}}amx_min_rows = 1>
func.func @int8_gmm(%rows: tensor<?x32xf32>, %w: tensor<4x32x24xi8>, %s: tensor<4x24xf32>,
                    %sizes: tensor<4xi32>) -> tensor<?x24xf32> {
  %h = moe.gmm %rows, %w, %sizes scales(%s : tensor<4x24xf32>) : tensor<?x32xf32>, tensor<4x32x24xi8>, tensor<4xi32>
  return %h : tensor<?x24xf32>
}

// f32 and the backward's forms: the FMA tiles; a tgmm has no tiles to choose.
// SPR-LABEL: func @f32_and_backward
// SPR: moe.gmm {{.*}}transpose_rhs{{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 4,
// SPR: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"]>}
// AVX2 without SwiGLU: 6 rows of one vector (12 ymm accumulators); with it
// (@bf16_swiglu above), 2 x 2 for the gate/up vector pair.
// HSW-LABEL: func @f32_and_backward
// HSW: kernels = ["fma"], mr = 6, nv = 1,
// REF-LABEL: func @f32_and_backward
// REF: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["reference"]>}
func.func @f32_and_backward(%dy: tensor<?x24xf32>, %w: tensor<4x32x24xf32>, %x: tensor<?x32xf32>,
                            %sizes: tensor<4xi32>) -> (tensor<?x32xf32>, tensor<4x32x24xf32>) {
  %dx = moe.gmm %dy, %w, %sizes transpose_rhs : tensor<?x24xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  %dw = moe.tgmm %x, %dy, %sizes : tensor<?x32xf32>, tensor<?x24xf32>, tensor<4xi32>
  return %dx, %dw : tensor<?x32xf32>, tensor<4x32x24xf32>
}

// bf16 on transposed weights (the backward's row gradient): the AVX512_BF16
// dot kind where the CPU has it, with AMX beside it on an AMX CPU (both read
// the pair layout packed from the [E, N, D] weight); else the FMA tiles.
// SPR-LABEL: func @bf16_transposed
// SPR: moe.gmm {{.*}}transpose_rhs{{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"], {{.*}}amx_min_rows = 1, dot_rows = 48>}
// ZEN4-LABEL: func @bf16_transposed
// ZEN4: transpose_rhs {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"], {{.*}}packed_columns = 32, dot_rows = 48>}
// HSW-LABEL: func @bf16_transposed
// HSW: kernels = ["fma"], mr = 6, nv = 1,
// The weight gradient of bf16 operands: vdpbf16ps on row pairs with
// AVX512_BF16, AMX tiles beside it on an AMX CPU, else the FMA tiles.
// SPR: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"]>}
// ZEN4: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"]>}
// SKX: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"]>}
// HSW: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"]>}
func.func @bf16_transposed(%dy: tensor<?x24xbf16>, %w: tensor<4x32x24xbf16>, %x: tensor<?x32xbf16>,
                           %sizes: tensor<4xi32>) -> (tensor<?x32xbf16>, tensor<4x32x24xbf16>) {
  %dx = moe.gmm %dy, %w, %sizes transpose_rhs : tensor<?x24xbf16>, tensor<4x32x24xbf16>, tensor<4xi32>
  %dw = moe.tgmm %x, %dy, %sizes : tensor<?x32xbf16>, tensor<?x24xbf16>, tensor<4xi32>
  return %dx, %dw : tensor<?x32xbf16>, tensor<4x32x24xbf16>
}

// A lowering written already (by hand: what a tuner edits) is kept, and so
// is the half-written SwiGLU pair's other gmm (moe-lower-to-loops then says
// what does not match); the reference strategy replaces every one.
// SPR-LABEL: func @kept
// SPR: moe.gmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 1, nv = 2, kc = 8, nc = 32, mc = 1>}
// SPR: moe.gmm %arg0, %arg2, %arg5 : tensor
// SPR: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["reference"]>}
// REF-LABEL: func @kept
// REF-COUNT-3: kernels = ["reference"]
func.func @kept(%rows: tensor<?x32xf32>, %wg: tensor<4x32x24xf32>, %wu: tensor<4x32x24xf32>, %x: tensor<?x32xf32>,
                %dy: tensor<?x24xf32>, %sizes: tensor<4xi32>) -> (tensor<?x24xf32>, tensor<4x32x24xf32>) {
  %g = moe.gmm %rows, %wg, %sizes {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 1, nv = 2, kc = 8, nc = 32, mc = 1>} : tensor<?x32xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  %u = moe.gmm %rows, %wu, %sizes : tensor<?x32xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  %a = moe.swiglu %g, %u : tensor<?x24xf32>, tensor<?x24xf32>
  %dw = moe.tgmm %x, %dy, %sizes {moe.lowering = #moe.gmm_lowering<kernels = ["reference"]>} : tensor<?x32xf32>, tensor<?x24xf32>, tensor<4xi32>
  return %a, %dw : tensor<?x24xf32>, tensor<4x32x24xf32>
}

// Rows another op reads too (the weight gradient's tgmm) exist anyway: the
// gmm reads them, it does not fuse their gather.
// SPR-LABEL: func @gather_shared
// SPR: moe.gmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = {{[0-9]+}}, nv = {{[0-9]+}}, kc = {{[0-9]+}}, nc = {{[0-9]+}}, mc = {{[0-9]+}}>}
func.func @gather_shared(%x: tensor<?x32xf32>, %perm: tensor<?xi32>, %w: tensor<4x32x24xf32>, %dy: tensor<?x24xf32>,
                         %sizes: tensor<4xi32>) -> (tensor<?x24xf32>, tensor<4x32x24xf32>) {
  %rows = moe.gather_rows %x, %perm top 2 : tensor<?x32xf32>, tensor<?xi32>
  %y = moe.gmm %rows, %w, %sizes : tensor<?x32xf32>, tensor<4x32x24xf32>, tensor<4xi32>
  %dw = moe.tgmm %rows, %dy, %sizes : tensor<?x32xf32>, tensor<?x24xf32>, tensor<4xi32>
  return %y, %dw : tensor<?x24xf32>, tensor<4x32x24xf32>
}

// The packed block's width: the most whole register tiles (64 columns) whose
// block [D, columns] fits in half of L2 (1 MiB here): 320 at D 1408 (not
// 352: an odd number of column pairs computes its last pair twice), 64 at D
// 7168, and one pair (32) where not even 64 columns fit.
// ZEN4-LABEL: func @packed_block_width
// ZEN4: moe.gmm {{.*}}packed_columns = 320,
// ZEN4: moe.gmm {{.*}}packed_columns = 64,
// ZEN4: moe.gmm {{.*}}packed_columns = 32,
func.func @packed_block_width(%x1: tensor<?x1408xbf16>, %w1: tensor<4x1408x2048xbf16>,
                              %x2: tensor<?x7168xbf16>, %w2: tensor<4x7168x2048xbf16>,
                              %x3: tensor<?x20480xbf16>, %w3: tensor<4x20480x2048xbf16>,
                              %sizes: tensor<4xi32>)
    -> (tensor<?x2048xbf16>, tensor<?x2048xbf16>, tensor<?x2048xbf16>) {
  %a = moe.gmm %x1, %w1, %sizes : tensor<?x1408xbf16>, tensor<4x1408x2048xbf16>, tensor<4xi32>
  %b = moe.gmm %x2, %w2, %sizes : tensor<?x7168xbf16>, tensor<4x7168x2048xbf16>, tensor<4xi32>
  %c = moe.gmm %x3, %w3, %sizes : tensor<?x20480xbf16>, tensor<4x20480x2048xbf16>, tensor<4xi32>
  return %a, %b, %c : tensor<?x2048xbf16>, tensor<?x2048xbf16>, tensor<?x2048xbf16>
}
