// The bf16 weight gradients on AMX tiles (TgmmAmx.cpp) against the
// reference loops: a group of 2100 rows (three chunks of 700: partial sums
// carried in the task's f32 block), an empty group (zeros), one of 37 rows
// (two steps of 16 row pairs, the second mostly padding), and one of 1024
// (one full chunk); D 560 (a second, partial depth block of 48 values, 3
// tiles: its last depth pair half past D) and N 600 (a second column block
// of 88 columns: 6 tiles, the last one cut by N).
// REQUIRES: amx-bf16
// RUN: rm -rf %t && mkdir -p %t
// RUN: moe-opt %s -moe-attach-target -moe-select-lowering | FileCheck %s --check-prefix=KINDS
// RUN: moec run %s --random-inputs --output-dir %t/amx | FileCheck %s
// RUN: moec run %s --random-inputs --gmm-strategy=reference --output-dir %t/ref > /dev/null
// RUN: %python %S/npy.py compare %t/amx/out0.npy %t/ref/out0.npy 3e-3
// KINDS: moe.tgmm {{.*}} {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"]>}
// CHECK: out0: 4x560x600xbf16
func.func @tgmm(%lhs: tensor<3161x560xbf16>, %rhs: tensor<3161x600xbf16>) -> tensor<4x560x600xbf16> {
  %sizes = arith.constant dense<[2100, 0, 37, 1024]> : tensor<4xi32>
  %0 = moe.tgmm %lhs, %rhs, %sizes : tensor<3161x560xbf16>, tensor<3161x600xbf16>, tensor<4xi32>
  return %0 : tensor<4x560x600xbf16>
}
