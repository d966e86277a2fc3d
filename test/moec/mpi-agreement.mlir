// REQUIRES: mpi
// Ranks of one MPI run agree before they exchange (runtime/MpiComm.h): a
// rank started with other options or inputs (an appfile) is named, on every
// rank, before any collective; a rank that fails before the run ends the
// job at once (MPI_Abort), naming itself, instead of leaving the others in
// a collective or in MPI_Finalize until the timeout. Each run is bounded by
// `timeout 30` and must not need it (exit 124).
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{run} = moec run %S/sharded.mlir --mesh expert=2 --launcher mpi --threads 1

// Different --dim per rank (made collectives of different sizes: a heap
// corrupted, then a hang), different --seed (mixed inputs).
// RUN: printf -- '-np 1 %{run} --random-inputs --dim 64\n-np 1 %{run} --random-inputs --dim 128\n' > %t/dims.app
// RUN: timeout 30 %mpirun --app %t/dims.app > %t/dims.out 2>&1; echo "exit $?" >> %t/dims.out
// RUN: FileCheck %s --check-prefix=DIMS --implicit-check-not="exit 124" --implicit-check-not="double free" < %t/dims.out
// (Every rank says it; the first MPI_Abort may stop the others before
// they print.)
// DIMS: moec: rank {{[01]}} failed: rank 1 does not run what rank 0 runs: rank 0 has 'argument {{[0-9]+}}: --dim 64', rank 1 has 'argument {{[0-9]+}}: --dim 128' (every rank must run the same program with the same options and inputs)
// DIMS: exit {{[1-9]}}
// RUN: printf -- '-np 1 %{run} --random-inputs --seed 1\n-np 1 %{run} --random-inputs --seed 2\n' > %t/seeds.app
// RUN: timeout 30 %mpirun --app %t/seeds.app > %t/seeds.out 2>&1; echo "exit $?" >> %t/seeds.out
// RUN: FileCheck %s --check-prefix=SEEDS --implicit-check-not="exit 124" < %t/seeds.out
// SEEDS: moec: rank {{[01]}} failed: rank 1 does not run what rank 0 runs: rank 0 has 'argument {{[0-9]+}}: --seed 1', rank 1 has 'argument {{[0-9]+}}: --seed 2'

// The same command line but other input files' contents on rank 1.
// RUN: %python %S/npy.py zeros %t/x.npy f4 128x32 && %python %S/npy.py zeros %t/logits.npy f4 128x10
// RUN: %python %S/npy.py zeros %t/w13.npy f4 8x32x48 && %python %S/npy.py zeros %t/w2.npy f4 8x24x32
// RUN: %python %S/npy.py zeros %t/sw13.npy f4 32x32 && %python %S/npy.py zeros %t/sw2.npy f4 16x32
// RUN: mkdir -p %t/a %t/b && cp %t/*.npy %t/a && cp %t/*.npy %t/b
// RUN: %python %S/npy.py write %t/b/x.npy f4 128x32 $(seq 4096)
// DEFINE: %{inputs} = --input x.npy --input logits.npy --input w13.npy --input w2.npy --input sw13.npy --input sw2.npy
// RUN: printf -- '-np 1 -wdir %t/a %{run} %{inputs}\n-np 1 -wdir %t/b %{run} %{inputs}\n' > %t/files.app
// RUN: timeout 30 %mpirun --app %t/files.app > %t/files.out 2>&1; echo "exit $?" >> %t/files.out
// RUN: FileCheck %s --check-prefix=FILES --implicit-check-not="exit 124" < %t/files.out
// FILES: moec: rank {{[01]}} failed: rank 1 does not run what rank 0 runs: rank 0 has 'input 0 128x32xf32 content hash {{[0-9]+}}', rank 1 has 'input 0 128x32xf32 content hash {{[0-9]+}}'

// Rank 1's input is truncated: it fails at once and ends the job (before,
// rank 0 waited 61 s in MPI_Finalize).
// RUN: head -c 200 %t/a/x.npy > %t/b/x.npy
// RUN: timeout 30 %mpirun --app %t/files.app > %t/truncated.out 2>&1; echo "exit $?" >> %t/truncated.out
// RUN: FileCheck %s --check-prefix=TRUNCATED --implicit-check-not="exit 124" --implicit-check-not="rank 0 failed" < %t/truncated.out
// TRUNCATED: moec: rank 1 failed: x.npy: truncated data: the header's shape (128, 32) needs 16384 bytes, the file holds {{[0-9]+}}

// moe-bench's ranks agree on their command lines too.
// RUN: printf -- '-np 1 moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 4 --topk 2 --iters 1 --warmup 0 --peak-gflops 100 --parallel-mode ep --launcher mpi --seed 1\n-np 1 moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 4 --topk 2 --iters 1 --warmup 0 --peak-gflops 100 --parallel-mode ep --launcher mpi --seed 2\n' > %t/bench.app
// RUN: timeout 60 %mpirun --app %t/bench.app > %t/bench.out 2>&1; echo "exit $?" >> %t/bench.out
// RUN: FileCheck %s --check-prefix=BENCH --implicit-check-not="exit 124" --implicit-check-not=RESULT < %t/bench.out
// BENCH: moec: rank {{[01]}} failed: rank 1 does not run what rank 0 runs: rank 0 has 'argument {{[0-9]+}}: --seed 1', rank 1 has 'argument {{[0-9]+}}: --seed 2'

// The same everywhere: it runs.
// RUN: cp %t/a/x.npy %t/b/x.npy
// RUN: timeout 30 %mpirun --app %t/files.app | FileCheck %s --check-prefix=SAME
// SAME: out0: 128x32xf32
