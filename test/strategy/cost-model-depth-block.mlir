// The cost model's depth block (kc) for the fma kind, from the target's L1
// and register file: the register tile's rows of A in a quarter of L1, or
// with AVX-512's four vectors a row in 3/8 of it up to kc 512 (measured on
// a Zen 4's 32 KiB L1; strategy/GmmTiling.cpp).
// RUN: moe-opt %s -split-input-file -moe-select-lowering | FileCheck %s

// AVX-512, 32 KiB L1: 3/8 of it holds 6 rows x 512 f32; the weight block
// (kc x nc in a quarter of the 1 MiB L2) and mc follow.
// CHECK-LABEL: func @avx512_l1_32k
// CHECK: moe.gmm {{.*}}kernels = ["fma"], mr = 6, nv = 4, kc = 512, nc = 128, mc = 510>
module attributes {moe.target = #moe.target<cpu = "test", features = ["avx2", "fma", "avx512f"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @avx512_l1_32k(%x: tensor<?x2048xf32>, %w: tensor<4x2048x256xf32>, %s: tensor<4xi32>) -> tensor<?x256xf32> {
    %y = moe.gmm %x, %w, %s : tensor<?x2048xf32>, tensor<4x2048x256xf32>, tensor<4xi32>
    return %y : tensor<?x256xf32>
  }
}

// -----

// AVX-512, 48 KiB L1: 3/8 would be kc 768; the cap keeps 512.
// CHECK-LABEL: func @avx512_l1_48k
// CHECK: moe.gmm {{.*}}kernels = ["fma"], mr = 6, nv = 4, kc = 512,
module attributes {moe.target = #moe.target<cpu = "test", features = ["avx2", "fma", "avx512f"], vector_registers = 32, l1_bytes = 49152, l2_bytes = 2097152>} {
  func.func @avx512_l1_48k(%x: tensor<?x2048xf32>, %w: tensor<4x2048x256xf32>, %s: tensor<4xi32>) -> tensor<?x256xf32> {
    %y = moe.gmm %x, %w, %s : tensor<?x2048xf32>, tensor<4x2048x256xf32>, tensor<4xi32>
    return %y : tensor<?x256xf32>
  }
}

// -----

// AVX2's one-vector tile, 32 KiB L1: a quarter, kc 336 (32768 / 4 / 24,
// rounded down to 16).
// CHECK-LABEL: func @avx2_l1_32k
// CHECK: moe.gmm {{.*}}kernels = ["fma"], mr = 6, nv = 1, kc = 336, nc = 192, mc = 336>
module attributes {moe.target = #moe.target<cpu = "test", features = ["avx2", "fma"], vector_registers = 8, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @avx2_l1_32k(%x: tensor<?x2048xf32>, %w: tensor<4x2048x256xf32>, %s: tensor<4xi32>) -> tensor<?x256xf32> {
    %y = moe.gmm %x, %w, %s : tensor<?x2048xf32>, tensor<4x2048x256xf32>, tensor<4xi32>
    return %y : tensor<?x256xf32>
  }
}

// -----

// A depth shallower than the block: the depth itself.
// CHECK-LABEL: func @shallow
// CHECK: moe.gmm {{.*}}kernels = ["fma"], mr = 6, nv = 4, kc = 96,
module attributes {moe.target = #moe.target<cpu = "test", features = ["avx2", "fma", "avx512f"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @shallow(%x: tensor<?x96xf32>, %w: tensor<4x96x256xf32>, %s: tensor<4xi32>) -> tensor<?x256xf32> {
    %y = moe.gmm %x, %w, %s : tensor<?x96xf32>, tensor<4x96x256xf32>, tensor<4xi32>
    return %y : tensor<?x256xf32>
  }
}
