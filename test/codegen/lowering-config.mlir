// moe-lower-to-loops follows a #moe.gmm_lowering as written: a tuner (or a
// person) edits the attribute, not the code. No moe-select-lowering here.
// RUN: moe-opt %s -split-input-file -moe-lower-to-loops -verify-diagnostics | FileCheck %s

// The tiles as written: a 2-row by 16-lane register tile (two vector.fma a
// depth step), 8 deep, 16-column blocks of 4 rows (the packed block and the
// partial sums).
// CHECK-LABEL: func @tiles_as_written
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x8x16xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK-COUNT-2: vector.fma
// CHECK-NOT: vector.fma
func.func @tiles_as_written(%x: tensor<?x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<?x16xf32> {
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 8, nc = 16, mc = 4>} : tensor<?x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<?x16xf32>
}

// -----

// Without moe.lowering: the reference loops (no vectors, no task table).
// CHECK-LABEL: func @no_lowering
// CHECK-NOT: vector.
// CHECK-NOT: memref.atomic_rmw
// CHECK: return
func.func @no_lowering(%x: tensor<?x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<?x16xf32> {
  %y = moe.gmm %x, %w, %s : tensor<?x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @swiglu_gone(%x: tensor<?x8xf32>, %w: tensor<2x8x32xf32>, %s: tensor<2xi32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{its lowering fuses a SwiGLU, but its result is not a moe.swiglu's only input use (run moe-select-lowering again after rewriting the IR)}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 2, kc = 8, nc = 32, mc = 4, fuse = ["swiglu"]>} : tensor<?x8xf32>, tensor<2x8x32xf32>, tensor<2xi32>
  return %y : tensor<?x32xf32>
}

// -----

func.func @mismatched_swiglu(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %w: tensor<2x8x32xf32>, %s: tensor<2xi32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{its lowering fuses a SwiGLU whose gate and up gmms do not share rows, groups, weight type and scales}}
  %g = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 2, kc = 8, nc = 32, mc = 4, fuse = ["swiglu"]>} : tensor<?x8xf32>, tensor<2x8x32xf32>, tensor<2xi32>
  // expected-error @+1 {{its lowering fuses a SwiGLU whose gate and up gmms do not share rows, groups, weight type and scales}}
  %u = moe.gmm %y, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 2, kc = 8, nc = 32, mc = 4, fuse = ["swiglu"]>} : tensor<?x8xf32>, tensor<2x8x32xf32>, tensor<2xi32>
  %a = moe.swiglu %g, %u : tensor<?x32xf32>, tensor<?x32xf32>
  return %a : tensor<?x32xf32>
}

// -----

// A register tile the target cannot hold: checked against #moe.target.
module attributes {moe.target = #moe.target<cpu = "haswell", features = ["avx2", "fma"], vector_registers = 8, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @too_many_registers(%x: tensor<?x8xf32>, %w: tensor<2x8x64xf32>, %s: tensor<2xi32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{gmm tiling mr=6,nv=4,kc=8,nc=64,mc=12: register tile mr=6 x nv=4 needs 29 vector registers, more than the target's 8}}
    %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 4, kc = 8, nc = 64, mc = 12>} : tensor<?x8xf32>, tensor<2x8x64xf32>, tensor<2xi32>
    return %y : tensor<?x64xf32>
  }
}

// -----

// A kind whose instructions the target lacks: refused before LLVM's
// instruction selection would stop on them. (AMX kinds compile anywhere and
// are chosen at run time.)
module attributes {moe.target = #moe.target<cpu = "znver3", features = ["avx2", "fma"], vector_registers = 8, l1_bytes = 32768, l2_bytes = 524288>} {
  func.func @dot_without_avx512bf16(%x: tensor<?x64xbf16>, %w: tensor<2x64x32xbf16>, %s: tensor<2xi32>) -> tensor<?x32xbf16> {
    // expected-error @+1 {{kernel kind 'avx512bf16_dot' needs the CPU feature 'avx512f', which the target 'znver3' lacks}}
    %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"], mr = 2, nv = 2, kc = 16, nc = 64, mc = 4, packed_columns = 64, dot_rows = 12>} : tensor<?x64xbf16>, tensor<2x64x32xbf16>, tensor<2xi32>
    return %y : tensor<?x32xbf16>
  }
}

// -----

module attributes {moe.target = #moe.target<cpu = "skylake-avx512", features = ["avx2", "fma", "avx512f"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @vnni_without_avx512vnni(%x: tensor<?x64xf32>, %w: tensor<2x64x32xi8>, %sc: tensor<2x32xf32>, %s: tensor<2xi32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{kernel kind 'int8_vnni' needs the CPU feature 'avx512vnni', which the target 'skylake-avx512' lacks}}
    %y = moe.gmm %x, %w, %s scales(%sc : tensor<2x32xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_vnni"], mr = 4, nv = 2, kc = 16, nc = 64, mc = 8, packed_columns = 64>} : tensor<?x64xf32>, tensor<2x64x32xi8>, tensor<2xi32>
    return %y : tensor<?x32xf32>
  }
}

// -----

module attributes {moe.target = #moe.target<cpu = "x86-64", features = [], vector_registers = 8, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @avx2_kind_without_avx2(%x: tensor<?x64xf32>, %w: tensor<2x64x32xi8>, %sc: tensor<2x32xf32>, %s: tensor<2xi32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{kernel kind 'int8_avx2' needs the CPU feature 'avx2', which the target 'x86-64' lacks}}
    %y = moe.gmm %x, %w, %s scales(%sc : tensor<2x32xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_avx2"], mr = 4, nv = 1, kc = 16, nc = 64, mc = 8, packed_columns = 64>} : tensor<?x64xf32>, tensor<2x64x32xi8>, tensor<2xi32>
    return %y : tensor<?x32xf32>
  }
}

// -----

func.func @gather_gone(%x: tensor<?x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{its lowering fuses a gather, but its rows are not a moe.gather_rows that every user reads through (run moe-select-lowering again after rewriting the IR)}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 8, nc = 16, mc = 4, fuse = ["gather"]>} : tensor<?x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<?x16xf32>
}

// -----

// The gather has a user that does not read through it (the weight
// gradient's tgmm): its rows must exist, and no gmm may claim to fuse it.
func.func @gather_shared(%x: tensor<?x8xf32>, %perm: tensor<?xi32>, %w: tensor<2x8x16xf32>, %dy: tensor<?x16xf32>, %s: tensor<2xi32>) -> (tensor<?x16xf32>, tensor<2x8x16xf32>) {
  %rows = moe.gather_rows %x, %perm top 2 : tensor<?x8xf32>, tensor<?xi32>
  // expected-error @+1 {{its lowering fuses a gather, but its rows are not a moe.gather_rows that every user reads through}}
  %y = moe.gmm %rows, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 8, nc = 16, mc = 4, fuse = ["gather"]>} : tensor<?x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  %dw = moe.tgmm %rows, %dy, %s : tensor<?x8xf32>, tensor<?x16xf32>, tensor<2xi32>
  return %y, %dw : tensor<?x16xf32>, tensor<2x8x16xf32>
}

// -----

// A tgmm on vdpbf16ps needs AVX512_BF16 (and AVX-512's 32 registers).
module attributes {moe.target = #moe.target<cpu = "skylake-avx512", features = ["avx2", "fma", "avx512f"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @tgmm_dot_without_avx512bf16(%x: tensor<?x64xbf16>, %dy: tensor<?x32xbf16>, %s: tensor<2xi32>) -> tensor<2x64x32xbf16> {
    // expected-error @+1 {{kernel kind 'avx512bf16_dot' needs the CPU feature 'avx512bf16', which the target 'skylake-avx512' lacks}}
    %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"]>} : tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<2xi32>
    return %dw : tensor<2x64x32xbf16>
  }
}

// -----

module attributes {moe.target = #moe.target<cpu = "custom", features = ["avx2", "fma", "avx512f", "avx512bf16"], vector_registers = 16, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @tgmm_dot_few_registers(%x: tensor<?x64xbf16>, %dy: tensor<?x32xbf16>, %s: tensor<2xi32>) -> tensor<2x64x32xbf16> {
    // expected-error @+1 {{a moe.tgmm on avx512bf16_dot needs 32 vector registers, the target's 16}}
    %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"]>} : tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<2xi32>
    return %dw : tensor<2x64x32xbf16>
  }
}
