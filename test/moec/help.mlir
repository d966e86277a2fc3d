// moec --help lists moec's options (each choice with its values) and MLIR's
// pass-manager debugging options in one list on one screen of 67 lines, not
// the hundreds LLVM's libraries register (they still parse: --help-hidden
// lists them).
// RUN: moec --help | FileCheck %s --implicit-check-not=x86-asm-syntax
// RUN: moec --help | %python -c "import sys; n = len(sys.stdin.readlines()); print('lines', n); sys.exit(n > 67)"
// RUN: moec run --help | FileCheck %s --check-prefix=SUB
// CHECK: moec options:
// CHECK: --gmm-strategy=<value>
// CHECK-NEXT: =microkernel
// CHECK-NEXT: =microkernel-amx
// CHECK: --mlir-print-ir-after-all
// CHECK: --mlir-timing
// CHECK: --parallel-mode=<value>
// CHECK-NEXT: =none
// CHECK-NEXT: =dp
// CHECK-NEXT: =ep
// CHECK-NEXT: =auto
// CHECK: --target-cpu
// SUB-DAG: --random-inputs
// SUB-DAG: --gmm-strategy=<value>

// The pass manager's options apply to moec's pipeline: the strategy shows.
// RUN: moec %s -o %t.o --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=PRINT
// PRINT: IR Dump After MoeSelectLowering (moe-select-lowering)
// PRINT: moe.lowering = #moe.gmm_lowering<kernels = [
func.func @block(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
