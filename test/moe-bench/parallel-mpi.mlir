// REQUIRES: mpi
// moe-bench under mpirun, one process per shard: rank 0 reports every
// rank's time and traffic (gathered over MPI), the same form as in-process.
// RUN: %mpirun -np 2 moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --iters 2 --warmup 0 --threads 1 --peak-gflops 100 --link-gbps 8 --parallel-mode ep --ep-dispatch ring --bench-pass forward_backward --launcher mpi | FileCheck %s
// A mesh that does not fit the processes is refused.
// RUN: not %mpirun -np 2 moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 8 --topk 2 --peak-gflops 100 --parallel-mode ep --devices 4 --launcher mpi 2>&1 | FileCheck %s --check-prefix=FIT

// CHECK: parallel: ep-ring on data=1,expert=2, 2 MPI processes, 1 thread(s) each
// CHECK: shard 0: median
// CHECK: shard 1: median
// CHECK: comm: busiest shard [[C:[0-9.]+]] MiB counted, [[C]] MiB modelled per call
// CHECK: RESULT {{.*}} pass=forward_backward {{.*}} parallel=ep-ring mesh=expert=2 shards=2 launcher=mpi
// FIT: moe-bench: error: --launcher mpi with the mesh expert=4: the mesh 4 needs 4 processes but mpirun started 2
