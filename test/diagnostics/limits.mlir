// Inputs and limits a hostile but legitimate user can hit: each ends in one
// error line and a non-zero exit, before any work, with nothing written
// and nothing hung.
// RUN: rm -rf %t && mkdir -p %t && cd %t
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump" --implicit-check-not="LLVM ERROR" --implicit-check-not=PLEASE
// DEFINE: %{small} = --tokens 16 --hidden 32 --mlp-dim 32 --experts 4 --topk 2 --iters 1 --warmup 0 --peak-gflops 100

// A FIFO (or any file that is not regular) as an input: refused at once,
// not waited on for a writer.
// RUN: mkfifo %t/fifo
// RUN: not moec %t/fifo -o %t/x.o 2>&1 | FileCheck %s --check-prefix=FIFO-MLIR %{nocrash}
// RUN: not moec run %t/fifo --random-inputs 2>&1 | FileCheck %s --check-prefix=FIFO-MLIR %{nocrash}
// RUN: not moe-opt %t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO-MLIR %{nocrash}
// FIFO-MLIR: {{.*}}fifo: is a FIFO (it could wait for a writer forever); inputs are read from regular files
// RUN: not moec run %s --input %t/fifo --input %t/fifo --input %t/fifo --input %t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO-NPY %{nocrash}
// FIFO-NPY: moec: error: {{.*}}fifo: is a FIFO (it could wait for a writer forever); inputs are read from regular files
// RUN: not moec %s -o %t/x.o --tuning-table %t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO-TABLE %{nocrash}
// RUN: not moe-bench %{small} --tuning-table %t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO-TABLE %{nocrash}
// FIFO-TABLE: error: cannot read tuning table: {{.*}}fifo: is a FIFO
// RUN: not moec run %s --input /dev/zero --input %t/fifo --input %t/fifo --input %t/fifo 2>&1 | FileCheck %s --check-prefix=DEVICE %{nocrash}
// DEVICE: moec: error: /dev/zero: is a character device; inputs are read from regular files

// An .npy whose header claims more than memory (4 TiB), in a (sparse) file
// that really is that long: refused before allocating.
// RUN: %python -c "h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\".ljust(117) + '\n'; f = open('%t/huge.npy', 'wb'); f.write(b'\x93NUMPY\x01\x00' + bytes([len(h), 0]) + h.encode()); f.truncate(128 + 4 * 1099511627776)"
// RUN: not moec run %s --input %t/huge.npy --input %t/huge.npy --input %t/huge.npy --input %t/huge.npy 2>&1 | FileCheck %s --check-prefix=HUGE %{nocrash}
// HUGE: moec: error: {{.*}}huge.npy: the array of shape (1099511627776,) needs 4.0 TiB, more than the {{.*}} of memory available
// RUN: rm %t/huge.npy

// Threads beyond what the machine runs: refused, not 14 s of libomp and an
// abort.
// RUN: not moec run %s --random-inputs --dim 4 --threads 100000 2>&1 | FileCheck %s --check-prefix=THREADS %{nocrash} --implicit-check-not=time:
// RUN: not moe-bench %{small} --threads 100000 2>&1 | FileCheck %s --check-prefix=THREADS %{nocrash} --implicit-check-not=RESULT
// THREADS: error: --threads 100000: more threads than this machine runs ({{[0-9]+}} cores; at most {{[0-9]+}}, 16 per core)
// RUN: env OMP_NUM_THREADS=100000 not moec run %s --random-inputs --dim 4 2>&1 | FileCheck %s --check-prefix=OMP %{nocrash} --implicit-check-not=time:
// OMP: {{moec: error|run_block}}: OMP_NUM_THREADS=100000: more threads than this machine runs
// RUN: moec run %s --random-inputs --dim 4 --threads 64 | FileCheck %s --check-prefix=SIXTY-FOUR
// SIXTY-FOUR: out0: 4x32xf32

// A truncated library and bad run_block arguments: one error each, no
// SIGBUS, no abort.
// RUN: moec %s -o %t/lib.so && head -c 3000 %t/lib.so > %t/truncated.so
// RUN: not run_block %t/truncated.so 2>&1 | FileCheck %s --check-prefix=TRUNCATED-SO %{nocrash}
// TRUNCATED-SO: run_block: {{.*}}truncated.so: truncated: the file has 3000 bytes, {{.*}} needs {{[0-9]+}} (rebuild it with moec -o)
// RUN: not run_block %t/lib.so block -5 2>&1 | FileCheck %s --check-prefix=NEGATIVE %{nocrash}
// NEGATIVE: run_block: TOKENS must be a whole number >= 0 (got '-5')
// RUN: not run_block %t/lib.so block 1x 2>&1 | FileCheck %s --check-prefix=JUNK %{nocrash}
// JUNK: run_block: TOKENS must be a whole number >= 0 (got '1x')
// RUN: not run_block %t/lib.so block 100000000000 2>&1 | FileCheck %s --check-prefix=TOO-MANY %{nocrash}
// TOO-MANY: run_block: random inputs with TOKENS 100000000000 need {{[0-9]+}} MiB; this machine has {{[0-9]+}} MiB
// RUN: env OMP_NUM_THREADS=100000 not run_block %t/lib.so 2>&1 | FileCheck %s --check-prefix=OMP %{nocrash}
// RUN: run_block %t/lib.so block 4 | FileCheck %s --check-prefix=RUNS
// RUNS: out0: 4x32xf32

// A sweep's plot of an unknown type is refused before the sweep runs.
// RUN: not moe-bench %{small} --sweep "null=0,0.5" --plot %t/p.xyz 2>&1 | FileCheck %s --check-prefix=PLOT %{nocrash} --implicit-check-not=RESULT --implicit-check-not=sweep:
// PLOT: moe-bench: error: --plot {{.*}}p.xyz: the plot is drawn as .svg, .svgz, .png, .pdf, .ps or .eps (named by the extension)

// Many public functions and no --entry: a few names and the count, not a
// line listing every one.
// RUN: %python -c "print('\n'.join('func.func @f%%d(%%%%a: tensor<4xf32>) -> tensor<4xf32> { return %%%%a : tensor<4xf32> }' %% i for i in range(3000)))" > %t/many.mlir
// RUN: not moec run %t/many.mlir --random-inputs 2>&1 | FileCheck %s --check-prefix=MANY %{nocrash}
// MANY: moec: error: the module has 3000 public functions (f0, f1, f2, f3, f4, f5, f6, f7, ... and 2992 more); pick one with --entry
// RUN: not moec run %t/many.mlir --random-inputs --entry nope 2>&1 | FileCheck %s --check-prefix=NOPE %{nocrash}
// NOPE: moec: error: no public function 'nope' (public functions: f0, f1, f2, f3, f4, f5, f6, f7, ... and 2992 more)

// A mesh axis given twice: moe-bench refuses it as moec does.
// RUN: not moe-bench %{small} --parallel-mode ep --mesh expert=2,expert=2 2>&1 | FileCheck %s --check-prefix=TWICE %{nocrash}
// RUN: not moec run %s --random-inputs --mesh expert=2,expert=2 2>&1 | FileCheck %s --check-prefix=TWICE-MOEC %{nocrash}
// TWICE: moe-bench: error: --mesh 'expert=2,expert=2': mesh axis 'expert' given twice
// TWICE-MOEC: moec: error: --mesh 'expert=2,expert=2': mesh axis 'expert' given twice

// Nothing was written but what the tests made.
// RUN: ls -A %t | FileCheck %s --check-prefix=NOTHING
// NOTHING: {{^}}fifo
// NOTHING-NEXT: {{^}}lib.so
// NOTHING-NEXT: {{^}}many.mlir
// NOTHING-NEXT: {{^}}truncated.so
// NOTHING-NOT: {{.}}
func.func @block(%x: tensor<?x32xf32>, %logits: tensor<?x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<?x32xf32> {
  %y = moe.block %x logits(%logits : tensor<?x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
