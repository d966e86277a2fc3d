// UNSUPPORTED: avx512bf16
// RUN: not moe-opt %s -moe-lower-to-loops=gmm-strategy=microkernel-avx512bf16 2>&1 | FileCheck %s

// On a host without AVX512_BF16 the forced dot-product strategy is refused
// at compile time: the code would stop on an illegal instruction.
// CHECK: error: gmm-strategy=microkernel-avx512bf16 needs a CPU with AVX512_BF16, which the target CPU '{{.*}}' does not have
func.func @bf16_gmm(%rows: tensor<?x32xbf16>, %w: tensor<4x32x24xbf16>, %sizes: tensor<4xi32>) -> tensor<?x24xbf16> {
  %h = moe.gmm %rows, %w, %sizes : tensor<?x32xbf16>, tensor<4x32x24xbf16>, tensor<4xi32>
  return %h : tensor<?x24xbf16>
}
