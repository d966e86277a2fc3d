// bf16 gmms on AMX tiles against the reference loops, where the other AMX
// run tests do not go: a depth of 1100 (35 steps of 32 depth values, more
// than a block's 32 rows: a row of the previous block's epilogue a step,
// the last steps none) and transposed weights [E, N, D] (the
// backward's row gradient: the pair block packed from rows of the weight),
// over groups of 70, 0 and 50 rows and 80 columns (a column pair cut by N).
// REQUIRES: amx-bf16
// RUN: rm -rf %t && mkdir -p %t
// RUN: moe-opt %s -moe-attach-target -moe-select-lowering | FileCheck %s --check-prefix=KINDS
// RUN: moec run %s --random-inputs --dim 120 --output-dir %t/amx | FileCheck %s
// RUN: moec run %s --random-inputs --dim 120 --gmm-strategy=reference --output-dir %t/ref > /dev/null
// RUN: %python %S/npy.py compare %t/amx/out0.npy %t/ref/out0.npy 1e-2
// RUN: %python %S/npy.py compare %t/amx/out1.npy %t/ref/out1.npy 1e-2
// KINDS: moe.gmm {{.*}}kernels = ["avx512bf16_dot", "amx_bf16"]
// KINDS: moe.gmm {{.*}}transpose_rhs {{.*}}kernels = ["avx512bf16_dot", "amx_bf16"]
// CHECK: out0: 120x80xbf16
// CHECK: out1: 120x80xbf16
func.func @gmms(%x: tensor<?x1100xbf16>, %w: tensor<3x1100x80xbf16>, %wt: tensor<3x80x1100xbf16>)
    -> (tensor<?x80xbf16>, tensor<?x80xbf16>) {
  %sizes = arith.constant dense<[70, 0, 50]> : tensor<3xi32>
  %a = moe.gmm %x, %w, %sizes : tensor<?x1100xbf16>, tensor<3x1100x80xbf16>, tensor<3xi32>
  %b = moe.gmm %x, %wt, %sizes transpose_rhs : tensor<?x1100xbf16>, tensor<3x80x1100xbf16>, tensor<3xi32>
  return %a, %b : tensor<?x80xbf16>, tensor<?x80xbf16>
}
