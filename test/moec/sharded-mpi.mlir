// REQUIRES: mpi
// The same per-shard programs under mpirun, one process per shard, with the
// collectives over Open MPI: the single-device result again.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %S/sharded.mlir --random-inputs --seed 5 --threads 1 --output-dir %t/one
// RUN: %mpirun -np 2 moec run %S/sharded.mlir --mesh expert=2 --launcher mpi --random-inputs --seed 5 --threads 1 --output-dir %t/compact2 | FileCheck %s --check-prefix=NP2
// RUN: %python %S/npy.py compare %t/compact2/out0.npy %t/one/out0.npy 1e-5
// RUN: %mpirun -np 4 moec run %S/sharded.mlir --mesh data=2,expert=2 --ep-dispatch ring --launcher mpi --random-inputs --seed 5 --threads 1 --output-dir %t/ring4 | FileCheck %s --check-prefix=NP4
// RUN: %python %S/npy.py compare %t/ring4/out0.npy %t/one/out0.npy 1e-5
// RUN: %mpirun -np 4 moec run %S/sharded.mlir --mesh expert=4 --ep-dispatch a2a --launcher mpi --random-inputs --seed 5 --threads 1 --output-dir %t/a2a4
// RUN: %python %S/npy.py compare %t/a2a4/out0.npy %t/one/out0.npy 1e-5
// RUN: %mpirun -np 4 moec run %S/sharded.mlir --mesh data=4 --launcher mpi --random-inputs --seed 5 --threads 1 --output-dir %t/dp4
// RUN: %python %S/npy.py compare %t/dp4/out0.npy %t/one/out0.npy 1e-5
// The forward_backward too: the global loss and the gradients of the
// single-device block, with the replicas' gradients summed over MPI.
// RUN: moec run %S/sharded-backward.mlir --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 1 --output-dir %t/one-bwd
// RUN: %mpirun -np 2 moec run %S/sharded-backward.mlir --mesh expert=2 --launcher mpi --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 1 --output-dir %t/compact2-bwd
// RUN: %python %S/npy.py compare-all %t/compact2-bwd %t/one-bwd 1e-5
// RUN: %mpirun -np 4 moec run %S/sharded-backward.mlir --mesh data=2,expert=2 --ep-dispatch ring --launcher mpi --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 1 --output-dir %t/ring4-bwd
// RUN: %python %S/npy.py compare-all %t/ring4-bwd %t/one-bwd 1e-5
// bf16 gradients summed over MPI (widened a piece of 4M values at a time,
// rounded once): the single device's within a few bf16 steps of each
// output's largest value (sharded-backward-bf16.mlir); a gate/up gradient
// of 5.2M values goes in two pieces.
// RUN: moec run %S/sharded-backward-bf16.mlir --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 1 --output-dir %t/one-bf16
// RUN: %mpirun -np 2 moec run %S/sharded-backward-bf16.mlir --mesh data=2 --launcher mpi --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 1 --output-dir %t/dp2-bf16
// RUN: %python %S/npy.py compare-all-scaled %t/dp2-bf16 %t/one-bf16 3e-2
// RUN: moec run %S/Inputs/bf16-wide-backward.mlir --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 1 --output-dir %t/one-wide
// RUN: %mpirun -np 2 moec run %S/Inputs/bf16-wide-backward.mlir --mesh data=2 --launcher mpi --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 1 --output-dir %t/dp2-wide
// RUN: %python %S/npy.py compare-all-scaled %t/dp2-wide %t/one-wide 3e-2
// RUN: %mpirun -np 4 moec run %S/sharded-backward.mlir --mesh expert=4 --ep-dispatch a2a --launcher mpi --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 1 --output-dir %t/a2a4-bwd
// RUN: %python %S/npy.py compare-all %t/a2a4-bwd %t/one-bwd 1e-5
// RUN: %mpirun -np 2 moec run %S/sharded-backward.mlir --mesh data=2 --launcher mpi --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 1 --output-dir %t/dp2-bwd
// RUN: %python %S/npy.py compare-all %t/dp2-bwd %t/one-bwd 1e-5
// A mesh that does not fit the process count is refused.
// RUN: not %mpirun -np 2 moec run %S/sharded.mlir --mesh data=2,expert=2 --launcher mpi --random-inputs 2>&1 | FileCheck %s --check-prefix=FIT

// NP2: mesh: expert=2 (ep-compact), 2 MPI processes
// NP4: mesh: data=2,expert=2 (ep-ring), 4 MPI processes
// FIT: moec: error: --launcher mpi with the mesh data=2,expert=2: the mesh 2x2 needs 4 processes but mpirun started 2
