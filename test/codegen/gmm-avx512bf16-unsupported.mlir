// RUN: not moe-opt %s -moe-attach-target=cpu=skylake-avx512 -moe-select-lowering=gmm-strategy=microkernel-avx512bf16 -moe-lower-to-loops 2>&1 | FileCheck %s

// For a target without AVX512_BF16 the forced dot-product strategy is refused
// at compile time: the code would stop on an illegal instruction.
// CHECK: error: gmm-strategy=microkernel-avx512bf16 needs a CPU with AVX512_BF16, which the target CPU 'skylake-avx512' does not have
func.func @bf16_gmm(%rows: tensor<?x32xbf16>, %w: tensor<4x32x24xbf16>, %sizes: tensor<4xi32>) -> tensor<?x24xbf16> {
  %h = moe.gmm %rows, %w, %sizes : tensor<?x32xbf16>, tensor<4x32x24xbf16>, tensor<4xi32>
  return %h : tensor<?x24xbf16>
}
