// Bad input is refused with one clear message and a non-zero exit, and
// nothing is written.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/npy.py write %t/a.npy f4 2x3 1 2 3 4 5 6
// RUN: %python %S/npy.py write %t/wrong.npy f4 3x2 1 2 3 4 5 6
// RUN: %python %S/npy.py write %t/ints.npy i4 2x3 1 2 3 4 5 6
// RUN: %python %S/npy.py write %t/s.npy f4 2 1 1
// RUN: echo "not numpy" > %t/junk.npy

// RUN: not moec run %s --input %t/a.npy --output-dir %t/o1 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: moec: error: 'scale' takes 2 inputs; 1 --input files given (or use --random-inputs)

// RUN: not moec run %s --input %t/wrong.npy --input %t/s.npy --output-dir %t/o2 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: moec: error: argument 0 of 'scale' expects 2x3xf32, got 3x2xf32

// RUN: not moec run %s --input %t/ints.npy --input %t/s.npy --output-dir %t/o3 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: moec: error: argument 0 ({{.*}}ints.npy): stored dtype '<i4' cannot be read as f32 (expects float32 or float64)

// RUN: not moec run %s --input %t/missing.npy --input %t/s.npy --output-dir %t/o4 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: moec: error: {{.*}}missing.npy: cannot open: No such file or directory

// RUN: not moec run %s --input %t/junk.npy --input %t/s.npy --output-dir %t/o5 2>&1 | FileCheck %s --check-prefix=JUNK
// JUNK: moec: error: {{.*}}junk.npy: not an .npy file (bad magic)

// A header promising more than the file holds is refused before any
// allocation.
// RUN: %python -c "import struct; h=\"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 1), }\".ljust(117) + '\n'; open('%t/huge.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + bytes(8))"
// RUN: not moec run %s --input %t/huge.npy --input %t/s.npy 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: moec: error: {{.*}}huge.npy: truncated data: the header's shape (100000000000, 1) needs 400000000000 bytes, the file holds 8

// RUN: not moec run %S/Inputs/dynamic.mlir --random-inputs --dim 100000000000 2>&1 | FileCheck %s --check-prefix=TOOBIG
// TOOBIG: moec: error: random inputs with --dim 100000000000 need 381469 MiB; this machine has {{[0-9]+}} MiB

// RUN: not moec run %s --entry nope --random-inputs 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: moec: error: no public function 'nope' (public functions: scale)

// RUN: not moec run %s --random-inputs --input %t/a.npy 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: moec: error: give either --input files or --random-inputs, not both

// RUN: not moec %s 2>&1 | FileCheck %s --check-prefix=NOOUT
// NOOUT: moec: error: no output: give -o FILE (.o, .so, .s, .ll or .mlir)

// RUN: not moec %s -o %t/x.o --emit=exe 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: moec: error: --emit must be one of mlir, llvm, asm, obj, so (got 'exe')

// RUN: not moec %t/nothing.mlir -o %t/y.o 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: moec: error: cannot open input file '{{.*}}nothing.mlir': No such file or directory

// RUN: moec %S/Inputs/collective.mlir -o %t/collective.o && rm %t/collective.o
// RUN: not moec run %S/Inputs/collective.mlir --random-inputs 2>&1 | FileCheck %s --check-prefix=COLLECTIVE
// COLLECTIVE: moec: error: all_reduce: the program calls a collective but runs without a mesh

// RUN: not moec %S/Inputs/malformed.mlir -o %t/m.o 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:3:8: error: 'moe.gmm' op lhs contraction size (64) does not match rhs contraction size (dimension 1) (32)

// An output whose directory does not exist: the reason, and no temporary
// file left beside it.
// RUN: not moec %s -o %t/nodir/x.o 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: moec: error: {{.*}}nodir/x.o: No such file or directory

// Nothing was written by any failing command.
// RUN: ls %t | FileCheck %s --check-prefix=NOTHING
// NOTHING-NOT: {{^o[0-9]|x.o|y.o|c.o|m.o|tmp}}

func.func @scale(%a: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = moe.scale_rows %a, %s : tensor<2x3xf32>, tensor<2xf32>
  return %0 : tensor<2x3xf32>
}
