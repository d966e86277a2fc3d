// Inputs of the wrong shape or type for `moec run`: one message naming
// the argument and what it expects, a non-zero exit, no stack dump. The
// input count, a static shape, an integer dtype, a missing or junk file
// and a header larger than its file: test/moec/errors.mlir.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump" --implicit-check-not=PLEASE
// RUN: %python %S/Inputs/npy-files.py %t

// Tokens of different counts in two arguments that must agree, which only
// the run can tell: test/moec/mismatch.mlir.

// RUN: not moec run %s --input %t/x5.npy --input %t/logits5.npy --input %t/w13.npy --input %t/w2-flat.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK %{nocrash}
// RANK: moec: error: argument 3 of 'block' expects 4x32x32xf32, got 4096xf32
// RUN: not moec run %s --input %t/x5.npy --input %t/logits5.npy --input %t/w13.npy --input %t/w2-fortran.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FORTRAN %{nocrash}
// FORTRAN: moec: error: {{.*}}w2-fortran.npy: Fortran-order arrays are not supported (save np.ascontiguousarray(a))
// RUN: not moec run %s --input %t/x5.npy --input %t/logits5.npy --input %t/w13.npy --input %t/w2-big-endian.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENDIAN %{nocrash}
// ENDIAN: moec: error: argument 3 ({{.*}}w2-big-endian.npy): stored dtype '>f4' cannot be read as f32 (expects float32 or float64)
// RUN: not moec run %s --input %t/x5.npy --input %t/logits5.npy --input %t/w13.npy --input %t/w2-f16.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HALF %{nocrash}
// HALF: moec: error: argument 3 ({{.*}}w2-f16.npy): stored dtype '<f2' cannot be read as f32 (expects float32 or float64)
// RUN: not moec run %s --input %t/x5.npy --input %t/logits5.npy --input %t/w13.npy --input %t/truncated.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNCATED %{nocrash}
// TRUNCATED: moec: error: {{.*}}truncated.npy: truncated .npy header

// The same files, right: it runs.
// RUN: moec run %s --input %t/x5.npy --input %t/logits5.npy --input %t/w13.npy --input %t/w2.npy | FileCheck %s --check-prefix=RIGHT
// RIGHT: out0: 5x32xf32
func.func @block(%x: tensor<?x32xf32>, %logits: tensor<?x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<?x32xf32> {
  %y = moe.block %x logits(%logits : tensor<?x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
