// Missing or unreadable files, and outputs that cannot be made: one message
// naming the path and the reason, a non-zero exit, before any work, and no
// file written. The .npy inputs' own errors: test/moec/errors.mlir.
// RUN: rm -rf %t && mkdir -p %t/adir && echo text > %t/afile
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump"

// Inputs: missing, a directory.
// RUN: not moec %t/missing.mlir -o %t/x.o 2>&1 | FileCheck %s --check-prefix=MISSING %{nocrash}
// MISSING: moec: error: cannot open input file '{{.*}}missing.mlir': No such file or directory
// RUN: not moe-opt %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=OPT-MISSING %{nocrash}
// OPT-MISSING: cannot open input file '{{.*}}missing.mlir': No such file or directory
// RUN: not moec %t/adir -o %t/x.o 2>&1 | FileCheck %s --check-prefix=DIR %{nocrash}
// DIR: moec: error: cannot open input file '{{.*}}adir': Is a directory
// RUN: not moe-opt %t/adir 2>&1 | FileCheck %s --check-prefix=OPT-DIR %{nocrash}
// OPT-DIR: cannot open input file '{{.*}}adir': Is a directory
// RUN: not moec run %s --input %t/adir --input %t/adir --input %t/adir --input %t/adir 2>&1 | FileCheck %s --check-prefix=NPY-DIR %{nocrash}
// NPY-DIR: moec: error: {{.*}}adir: cannot open: Is a directory

// Outputs: under a regular file, a directory, a directory that is a file.
// RUN: not moec %s -o %t/afile/x.o 2>&1 | FileCheck %s --check-prefix=UNDER-FILE %{nocrash}
// UNDER-FILE: moec: error: {{.*}}afile/x.o: Not a directory
// RUN: not moec %s -o %t/adir 2>&1 | FileCheck %s --check-prefix=IS-DIR %{nocrash}
// IS-DIR: moec: error: {{.*}}adir: Is a directory
// RUN: not moec %s -o %t/nodir/lib.so 2>&1 | FileCheck %s --check-prefix=NO-DIR %{nocrash}
// NO-DIR: moec: error: {{.*}}nodir/lib.so: No such file or directory
// RUN: not moec run %s --random-inputs --output-dir %t/afile 2>&1 | FileCheck %s --check-prefix=OUTDIR %{nocrash} --implicit-check-not=time:
// OUTDIR: moec: error: --output-dir {{.*}}afile: Not a directory
// RUN: not moec run %s --random-inputs --output-dir %t/afile/out 2>&1 | FileCheck %s --check-prefix=OUTDIR-UNDER %{nocrash} --implicit-check-not=time:
// OUTDIR-UNDER: moec: error: --output-dir {{.*}}afile/out: Not a directory
// RUN: not moe-opt %s -o %t/afile/x.mlir 2>&1 | FileCheck %s --check-prefix=OPT-OUT %{nocrash}
// OPT-OUT: cannot open output file '{{.*}}afile/x.mlir': Not a directory
// RUN: not moe-bench --tokens 16 --hidden 32 --mlp-dim 32 --experts 4 --topk 2 --json %t/afile/r.json 2>&1 | FileCheck %s --check-prefix=BENCH-JSON %{nocrash} --implicit-check-not=RESULT
// BENCH-JSON: moe-bench: error: {{.*}}afile/r.json: Not a directory

// A tuning table that is not one (a wrong path): refused, not read as empty.
// RUN: not moec %s -o %t/x.o --tuning-table %t/afile 2>&1 | FileCheck %s --check-prefix=TABLE %{nocrash}
// RUN: env MOEC_TUNING_TABLE=%t/afile not moec %s -o %t/x.o 2>&1 | FileCheck %s --check-prefix=TABLE %{nocrash}
// RUN: not moe-bench --tokens 16 --hidden 32 --mlp-dim 32 --experts 4 --topk 2 --tuning-table %t/afile 2>&1 | FileCheck %s --check-prefix=TABLE %{nocrash}
// TABLE: error: {{.*}}afile:1: not a tuning-table line (expected '<shape> <tiling>'
// RUN: printf '# a table\nD=32,N=32,swiglu=1,bytes=4 mr=6,nv=4,kc=zz\n' > %t/bad-table.txt
// RUN: not moec %s -o %t/x.o --tuning-table %t/bad-table.txt 2>&1 | FileCheck %s --check-prefix=TABLE-LINE %{nocrash}
// TABLE-LINE: moec: error: {{.*}}bad-table.txt:2: gmm tiling 'mr=6,nv=4,kc=zz': 'kc=zz' is not key=positive integer
// RUN: not moec %s -o %t/x.o --tuning-table %t/no-table.txt 2>&1 | FileCheck %s --check-prefix=TABLE-MISSING %{nocrash}
// TABLE-MISSING: moec: error: cannot read tuning table '{{.*}}no-table.txt': No such file or directory

// Nothing was written.
// RUN: ls %t | FileCheck %s --check-prefix=NOTHING --implicit-check-not=.o --implicit-check-not=.so --implicit-check-not=json --implicit-check-not=tmp
// NOTHING: adir
// NOTHING: afile
// NOTHING: bad-table.txt
func.func @block(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
