// RUN: moe-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{#moe.target needs a CPU name}}
module attributes {moe.target = #moe.target<cpu = "", features = [], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {}

// -----

// expected-error @+1 {{#moe.target caches must be at least 1 KiB with l2_bytes >= l1_bytes, got l1_bytes = 32768, l2_bytes = 1024}}
module attributes {moe.target = #moe.target<cpu = "znver4", features = ["avx512f"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1024>} {}

// -----

// expected-error @+1 {{target feature 'avx2' is listed twice}}
module attributes {moe.target = #moe.target<cpu = "haswell", features = ["avx2", "avx2"], vector_registers = 8, l1_bytes = 32768, l2_bytes = 1048576>} {}

// -----

// A misspelt feature would silently turn its kernel kinds off.
// expected-error @+1 {{unknown target feature 'avx512-bf16' (expected one of: avx2, fma, avx512f, avx512bf16, avx512vnni, amx-tile, amx-bf16, amx-int8)}}
module attributes {moe.target = #moe.target<cpu = "znver4", features = ["avx512f", "avx512-bf16"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {}

// -----

// expected-error @+1 {{'moe.target' must be a #moe.target on a module}}
func.func @target_on_function() attributes {moe.target = #moe.target<cpu = "znver4", features = [], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  return
}

// -----

func.func @unknown_kind(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{unknown gmm kernel kind 'avx1024' (expected one of: reference, fma, avx512bf16_dot, amx_bf16, int8_vector, int8_avx2, int8_vnni, amx_int8)}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx1024"], mr = 1, nv = 1, kc = 8, nc = 16, mc = 1>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @reference_with_tiles(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{the reference kernel takes no tiles, thresholds or fusions}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["reference"], mr = 6>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

// Sizes that would overflow the tile arithmetic (16 * nv was a division by
// zero in the verifier, found by moe-fuzz-mutate).
func.func @huge_vectors(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{register tile mr=2 x nv=1152921504606846976 is larger than any target's 64 vector registers}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1152921504606846976, kc = 8, nc = 16, mc = 12>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @tile_past_registers(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{register tile mr=16 x nv=8 is larger than any target's 64 vector registers}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 16, nv = 8, kc = 8, nc = 128, mc = 16>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @huge_block(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{kc, nc and mc must be at most 1048576, got kc=8, nc=16, mc=9223372036854775806}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 1, kc = 8, nc = 16, mc = 9223372036854775806>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @columns(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{nc=16 must be a multiple of the register tile's 32 columns}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 2, kc = 8, nc = 16, mc = 12>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @odd_swiglu_tile(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{nv must be 1 or even when SwiGLU is fused (half the panel gate, half up)}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 3, kc = 8, nc = 48, mc = 12, fuse = ["swiglu"]>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @amx_alone(%x: tensor<4x64xbf16>, %w: tensor<2x64x32xbf16>, %s: tensor<2xi32>) -> tensor<4x32xbf16> {
  // expected-error @+1 {{the AMX kernels need another kind beside them: Linux may refuse the tile state at run time}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["amx_bf16"], mr = 6, nv = 2, kc = 64, nc = 32, mc = 12, packed_columns = 32, amx_min_rows = 16>} : tensor<4x64xbf16>, tensor<2x64x32xbf16>, tensor<2xi32>
  return %y : tensor<4x32xbf16>
}

// -----

func.func @gmm_without_tiles(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{a moe.gmm's kernels need tiles (mr, nv, kc, nc, mc)}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"]>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @tgmm_with_tiles(%x: tensor<?x8xf32>, %dy: tensor<?x16xf32>, %s: tensor<2xi32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{a moe.tgmm runs on the reference loops, or the fma kernel alone (avx512bf16_dot for bf16 operands, amx_bf16 beside it), without tiles or fusions}}
  %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 1, kc = 8, nc = 16, mc = 12>} : tensor<?x8xf32>, tensor<?x16xf32>, tensor<2xi32>
  return %dw : tensor<2x8x16xf32>
}

// -----

func.func @lowering_on_swiglu(%h: tensor<4x32xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'moe.lowering' must be a #moe.gmm_lowering on a moe.gmm or moe.tgmm}}
  %a = moe.swiglu %h {moe.lowering = #moe.gmm_lowering<kernels = ["reference"]>} : tensor<4x32xf32>
  return %a : tensor<4x16xf32>
}

// -----

func.func @kind_for_other_types(%x: tensor<4x8xf32>, %w: tensor<2x8x32xf32>, %s: tensor<2xi32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{kernel kind 'avx512bf16_dot' does not compute this gmm: an f32 gmm takes fma alone}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"], mr = 6, nv = 2, kc = 8, nc = 32, mc = 12, packed_columns = 32, dot_rows = 48>} : tensor<4x8xf32>, tensor<2x8x32xf32>, tensor<2xi32>
  return %y : tensor<4x32xf32>
}

// -----

func.func @int8_on_fma(%x: tensor<4x8xf32>, %w: tensor<2x8x32xi8>, %sc: tensor<2xf32>, %s: tensor<2xi32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{kernel kind 'fma' does not compute this gmm: an int8 gmm takes int8_vector, int8_avx2 or int8_vnni, and amx_int8 beside it}}
  %y = moe.gmm %x, %w, %s scales(%sc : tensor<2xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 6, nv = 2, kc = 8, nc = 32, mc = 12>} : tensor<4x8xf32>, tensor<2x8x32xi8>, tensor<2xi32>
  return %y : tensor<4x32xf32>
}

// -----

func.func @two_base_kinds(%x: tensor<4x64xbf16>, %w: tensor<2x64x32xbf16>, %s: tensor<2xi32>) -> tensor<4x32xbf16> {
  // expected-error @+1 {{one non-AMX kernel kind runs every group AMX does not: a bf16 gmm takes fma or avx512bf16_dot, and amx_bf16 beside it}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma", "avx512bf16_dot"], mr = 6, nv = 2, kc = 64, nc = 32, mc = 12, packed_columns = 32, dot_rows = 48>} : tensor<4x64xbf16>, tensor<2x64x32xbf16>, tensor<2xi32>
  return %y : tensor<4x32xbf16>
}

// -----

func.func @tgmm_with_fusion(%x: tensor<?x8xf32>, %dy: tensor<?x16xf32>, %s: tensor<2xi32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{a lowering without tiles (a moe.tgmm's) takes no packed_columns, amx_min_rows, dot_rows or fusions}}
  %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], fuse = ["gather"]>} : tensor<?x8xf32>, tensor<?x16xf32>, tensor<2xi32>
  return %dw : tensor<2x8x16xf32>
}

// -----

// vdpbf16ps reads bf16 operands only.
func.func @tgmm_dot_on_f32(%x: tensor<?x8xf32>, %dy: tensor<?x16xf32>, %s: tensor<2xi32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{a moe.tgmm runs on the reference loops, or the fma kernel alone (avx512bf16_dot for bf16 operands, amx_bf16 beside it), without tiles or fusions}}
  %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"]>} : tensor<?x8xf32>, tensor<?x16xf32>, tensor<2xi32>
  return %dw : tensor<2x8x16xf32>
}

// -----

// A gmm's kinds need their tiles (a tgmm's form is a kind alone).
func.func @gmm_without_tiles(%x: tensor<4x64xbf16>, %w: tensor<2x64x32xbf16>, %s: tensor<2xi32>) -> tensor<4x32xbf16> {
  // expected-error @+1 {{a moe.gmm's kernels need tiles (mr, nv, kc, nc, mc)}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"]>} : tensor<4x64xbf16>, tensor<2x64x32xbf16>, tensor<2xi32>
  return %y : tensor<4x32xbf16>
}

// -----

// A number no listed kind reads would be an edit that changes nothing.
func.func @packed_columns_for_fma(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{packed_columns is read by the packed kernels only, not by fma}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 1, nv = 1, kc = 8, nc = 16, mc = 1, packed_columns = 64>} : tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @amx_min_rows_without_amx(%x: tensor<4x8xbf16>, %w: tensor<2x8x32xbf16>, %s: tensor<2xi32>) -> tensor<4x32xbf16> {
  // expected-error @+1 {{amx_min_rows is read by the AMX kernels only}}
  %y = moe.gmm %x, %w, %s {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"], mr = 1, nv = 1, kc = 8, nc = 16, mc = 1, packed_columns = 32, amx_min_rows = 16, dot_rows = 48>} : tensor<4x8xbf16>, tensor<2x8x32xbf16>, tensor<2xi32>
  return %y : tensor<4x32xbf16>
}

// -----

func.func @two_int8_kinds(%x: tensor<4x8xf32>, %w: tensor<2x8x32xi8>, %sc: tensor<2xf32>, %s: tensor<2xi32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{int8_vector, int8_avx2 and int8_vnni are alternatives: list one}}
  %y = moe.gmm %x, %w, %s scales(%sc : tensor<2xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_avx2", "int8_vnni"], mr = 1, nv = 1, kc = 8, nc = 16, mc = 1, packed_columns = 32>} : tensor<4x8xf32>, tensor<2x8x32xi8>, tensor<2xi32>
  return %y : tensor<4x32xf32>
}

// -----

func.func @dot_rows_without_dot(%x: tensor<4x8xf32>, %w: tensor<2x8x32xi8>, %sc: tensor<2xf32>, %s: tensor<2xi32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{dot_rows is read by avx512bf16_dot only}}
  %y = moe.gmm %x, %w, %s scales(%sc : tensor<2xf32>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_vnni"], mr = 1, nv = 1, kc = 8, nc = 16, mc = 1, packed_columns = 32, dot_rows = 48>} : tensor<4x8xf32>, tensor<2x8x32xi8>, tensor<2xi32>
  return %y : tensor<4x32xf32>
}

// -----

// AMX runs a tgmm's groups only beside the dot kind, which takes the rest.
func.func @tgmm_amx_alone(%x: tensor<?x8xbf16>, %dy: tensor<?x16xbf16>, %s: tensor<2xi32>) -> tensor<2x8x16xbf16> {
  // expected-error @+1 {{a moe.tgmm runs on the reference loops, or the fma kernel alone (avx512bf16_dot for bf16 operands, amx_bf16 beside it), without tiles or fusions}}
  %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["amx_bf16"]>} : tensor<?x8xbf16>, tensor<?x16xbf16>, tensor<2xi32>
  return %dw : tensor<2x8x16xbf16>
}

// -----

func.func @tgmm_amx_beside_fma(%x: tensor<?x8xbf16>, %dy: tensor<?x16xbf16>, %s: tensor<2xi32>) -> tensor<2x8x16xbf16> {
  // expected-error @+1 {{a moe.tgmm runs on the reference loops, or the fma kernel alone (avx512bf16_dot for bf16 operands, amx_bf16 beside it), without tiles or fusions}}
  %dw = moe.tgmm %x, %dy, %s {moe.lowering = #moe.gmm_lowering<kernels = ["fma", "amx_bf16"]>} : tensor<?x8xbf16>, tensor<?x16xbf16>, tensor<2xi32>
  return %dw : tensor<2x8x16xbf16>
}
