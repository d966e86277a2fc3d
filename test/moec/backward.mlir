// moec --backward adds <f>_forward_backward (moe-generate-backward) before
// compiling: the loss, then the gradient of x and of each weight; the
// logits get none unless --routing-grad. Gradient values are checked against finite differences
// in test/unit/NumericsTest.cpp (Gradients).
// RUN: moec run %s --backward mean-square --entry block_forward_backward --random-inputs --dim 6 | FileCheck %s
// RUN: moec run %s --backward cotangent --entry block_forward_backward --random-inputs --dim 6 | FileCheck %s --check-prefix=COT
// RUN: moec %s --backward mean-square -o %t.mlir --emit mlir && FileCheck %s --check-prefix=LIB < %t.mlir
// RUN: not moec run %s --backward hinge --random-inputs 2>&1 | FileCheck %s --check-prefix=BAD
// moec run reports moe-remat's decision for the entry (tokens are dynamic
// here: the kept values of dynamic size are not in the bytes).
// RUN: moec run %s --backward mean-square --remat expert_mlp --entry block_forward_backward --random-inputs --dim 6 | FileCheck %s --check-prefix=REMAT
// RUN: not moec run %s --backward mean-square --remat auto --activation-budget -5 --entry block_forward_backward --random-inputs 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not moec run %s --remat combine --random-inputs 2>&1 | FileCheck %s --check-prefix=NOBACKWARD
// REMAT: remat: policy expert_mlp: keeps {{[0-9.]+}} MiB for the backward, recomputes {{[0-9.]+}} GFLOP in it (and values of dynamic size)
// REMAT: out0: f32
// NEGATIVE: moec: error: --activation-budget must be a number of bytes (got -5)
// NOBACKWARD: moec: error: --remat, --activation-budget and --routing-grad apply to the backward: give --backward too
// --routing-grad: the logits' gradient comes after x's.
// RUN: moec run %s --backward mean-square --routing-grad --entry block_forward_backward --random-inputs --dim 6 | FileCheck %s --check-prefix=ROUTER
// RUN: not moec run %s --routing-grad --random-inputs 2>&1 | FileCheck %s --check-prefix=NOBACKWARD
// ROUTER: out0: f32
// ROUTER-NEXT: out1: 6x8xf32
// ROUTER-NEXT: out2: 6x3xf32
// ROUTER-NEXT: out3: 3x8x10xf32
// ROUTER-NEXT: out4: 3x5x8xf32

// CHECK: out0: f32
// CHECK-NEXT: out1: 6x8xf32
// CHECK-NEXT: out2: 3x8x10xf32
// CHECK-NEXT: out3: 3x5x8xf32
// CHECK-NOT: out4
// COT: out0: 6x8xf32
// COT-NEXT: out1: 6x8xf32
// LIB-DAG: llvm.func @block_forward_backward(
// LIB-DAG: llvm.func @block(
// BAD: moec: for the --backward option: must be mean-square or cotangent (got 'hinge')
func.func @block(%x: tensor<?x8xf32>, %logits: tensor<?x3xf32>, %w13: tensor<3x8x10xf32>,
                 %w2: tensor<3x5x8xf32>) -> tensor<?x8xf32> {
  %y = moe.block %x logits(%logits : tensor<?x3xf32>) gate_up(%w13 : tensor<3x8x10xf32>)
         down(%w2 : tensor<3x5x8xf32>) top 2 : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
