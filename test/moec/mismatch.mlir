// Dynamic sizes the verifier cannot compare are checked when the code runs:
// a block given 3 tokens of x and 5 rows of logits stops with one error
// line and exit status 1 (runtime/RunTimeChecks.h), instead of reading past
// a buffer or dumping a stack.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/npy.py write %t/x.npy f4 3x4 1 2 3 4 5 6 7 8 9 10 11 12
// RUN: %python %S/npy.py write %t/l.npy f4 5x2 1 0 0 1 1 0 0 1 1 0
// RUN: %python %S/npy.py write %t/w13.npy f4 2x4x2 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1
// RUN: %python %S/npy.py write %t/w2.npy f4 2x1x4 1 1 1 1 1 1 1 1
// RUN: not moec run %s --input %t/x.npy --input %t/l.npy --input %t/w13.npy --input %t/w2.npy --output-dir %t/out 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=error: --implicit-check-not="Stack dump" --implicit-check-not=PLEASE
// RUN: test ! -e %t/out
// CHECK: memory: planned peak
// CHECK: moec: error: run-time check failed: moe.pack: x and ids have different token counts (the inputs' sizes do not agree)

func.func @block(%x: tensor<?x4xf32>, %l: tensor<?x2xf32>, %w13: tensor<2x4x2xf32>, %w2: tensor<2x1x4xf32>) -> tensor<?x4xf32> {
  %y = moe.block %x logits(%l : tensor<?x2xf32>) gate_up(%w13 : tensor<2x4x2xf32>) down(%w2 : tensor<2x1x4xf32>) top 1 : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
