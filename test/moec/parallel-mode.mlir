// --parallel-mode partitions the block for a plan moec chooses (the same
// plans and cost model as moe-bench's, tooling/ParallelPlan.h): dp and ep
// for the device count, auto for the plan the model predicts fastest on
// this host. Every plan gives the single-device result.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --random-inputs --seed 5 --threads 2 --output-dir %t/one
// RUN: moec run %s --parallel-mode dp --random-inputs --seed 5 --threads 2 --output-dir %t/dp | FileCheck %s --check-prefix=DP
// RUN: %python %S/npy.py compare %t/dp/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --parallel-mode ep --mesh expert=4 --ep-dispatch ring --random-inputs --seed 5 --threads 2 --output-dir %t/ep | FileCheck %s --check-prefix=EP
// RUN: %python %S/npy.py compare %t/ep/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --parallel-mode auto --mesh expert=4 --random-inputs --seed 5 --threads 2 --output-dir %t/auto | FileCheck %s --check-prefix=AUTO
// RUN: %python %S/npy.py compare %t/auto/out0.npy %t/one/out0.npy 1e-5
//
// Compiling: the plan goes to stderr (stdout may be the output), the
// partitioned program to the output.
// RUN: moec %s --parallel-mode ep --mesh expert=2 --emit=mlir -o %t/ep.mlir 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: FileCheck %s --check-prefix=IR < %t/ep.mlir
//
// Plans that cannot be made are refused with the reason.
// RUN: not moec %s --parallel-mode dp --mesh expert=2 -o %t/x.o 2>&1 | FileCheck %s --check-prefix=DP-EXPERT
// RUN: not moec %s --parallel-mode ep --mesh expert=3 -o %t/x.o 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not moec %examples/small-e60-top8.mlir --parallel-mode auto -o %t/x.o 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: not moec %S/Inputs/two-blocks.mlir --parallel-mode auto -o %t/x.o 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not moec %s --parallel-mode sideways -o %t/x.o 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not moec %s --parallel-mode dp --ep-dispatch ring -o %t/x.o 2>&1 | FileCheck %s --check-prefix=DP-DISPATCH
// RUN: not moec %s --parallel-mode auto --ep-dispatch ring -o %t/x.o 2>&1 | FileCheck %s --check-prefix=AUTO-DISPATCH
// RUN: not moec run %s --parallel-mode auto --launcher mpi --random-inputs 2>&1 | FileCheck %s --check-prefix=MPI
//
// dp and ep need no sizes (moe-partition checks the axes against every
// block): two blocks, or a dynamic token count, partition for --mesh.
// RUN: moec %S/Inputs/two-blocks.mlir --parallel-mode dp --mesh data=2 -o %t/two.o 2>&1 | FileCheck %s --check-prefix=TWO-DP
// RUN: moec %examples/small-e60-top8.mlir --parallel-mode ep --mesh expert=2 -o %t/dyn.o 2>&1 | FileCheck %s --check-prefix=DYN-EP
//
// auto offers only plans moe-partition can make: no all-to-all for a
// dynamic token count (its buffers are sized at compile time), no dense
// dispatch under a capacity factor.
// RUN: moec run %examples/small-e60-top2.mlir --parallel-mode auto --random-inputs --dim 256 --threads 2 | FileCheck %s --check-prefix=NO-A2A --implicit-check-not=ep-a2a
// RUN: moec run %s --parallel-mode auto --capacity-factor 4 --random-inputs --threads 2 | FileCheck %s --check-prefix=NO-DENSE --implicit-check-not=ep-dense
//
// moec run takes a dynamic token count from --dim.
// RUN: moec run %examples/small-e60-top8.mlir --parallel-mode auto --mesh expert=2 --random-inputs --dim 96 --threads 2 | FileCheck %s --check-prefix=DIM
// ... or from the x input's rows (its header: the data is read once, by the
// run), and a bad x file is the run's error, naming it.
// RUN: %python %S/npy.py zeros %t/x.npy f4 40x64
// RUN: %python %S/npy.py zeros %t/logits.npy f4 40x60
// RUN: %python %S/npy.py zeros %t/w13.npy f4 60x64x88
// RUN: %python %S/npy.py zeros %t/w2.npy f4 60x44x64
// RUN: %python %S/npy.py zeros %t/sw13.npy f4 64x176
// RUN: %python %S/npy.py zeros %t/sw2.npy f4 88x64
// RUN: moec run %examples/small-e60-top8.mlir --parallel-mode auto --mesh expert=2 --threads 2 --input %t/x.npy --input %t/logits.npy --input %t/w13.npy --input %t/w2.npy --input %t/sw13.npy --input %t/sw2.npy | FileCheck %s --check-prefix=XROWS
// RUN: not moec run %examples/small-e60-top8.mlir --parallel-mode auto --threads 2 --input %t/missing.npy --input %t/logits.npy --input %t/w13.npy --input %t/w2.npy --input %t/sw13.npy --input %t/sw2.npy 2>&1 | FileCheck %s --check-prefix=XMISSING

// DP: parallel: dp on data=2,expert=1 (--parallel-mode dp)
// DP: mesh: data=2 (dp), 2 shards in-process
// EP: parallel: ep-ring on data=1,expert=4 (--parallel-mode ep)
// EP: mesh: expert=4 (ep-ring), 4 shards in-process
// AUTO: model: core {{.*}} GFLOP/s (0.88 of the FP32 FMA peak) x 1 per shard
// AUTO: <- fastest
// AUTO: parallel: {{dp|ep-dense|ep-compact|ep-ring|ep-a2a}} on data={{[124]}},expert={{[124]}} (--parallel-mode auto)
// AUTO: mesh:
// COMPILE: parallel: ep-compact on data=1,expert=2 (--parallel-mode ep)
// The experts' partial outputs are summed over the expert axis.
// IR: llvm.func @moert_all_reduce_sum_f32
// DP-EXPERT: moec: error: --parallel-mode dp splits tokens only: give a mesh without an expert axis
// DIVIDE: moec: error: the expert axis (3) must divide the experts (8)
// DYNAMIC: moec: error: --parallel-mode auto plans for a token count, and the block's is dynamic
// TWO: moec: error: --parallel-mode auto plans one moe.block; the program has 2 (choose the plan: --parallel-mode dp or ep)
// BAD: moec: for the --parallel-mode option: must be none, dp, ep or auto (got 'sideways')
// DP-DISPATCH: moec: error: --parallel-mode dp splits the tokens only: --ep-dispatch and --capacity-factor apply to ep
// AUTO-DISPATCH: moec: error: --parallel-mode auto chooses the dispatch: give --parallel-mode ep for --ep-dispatch
// MPI: moec: error: --launcher mpi runs the plan its --mesh gives (with --parallel-mode dp or ep)
// TWO-DP: parallel: dp on data=2,expert=1 (--parallel-mode dp)
// DYN-EP: parallel: ep-compact on data=1,expert=2 (--parallel-mode ep)
// NO-A2A: <- fastest
// NO-A2A: out0: 256x64xf32
// NO-DENSE: <- fastest
// NO-DENSE: out0: 128x32xf32
// DIM: parallel: {{.*}} on data={{[12]}},expert={{[12]}} (--parallel-mode auto)
// DIM: out0: 96x64xf32

// XROWS: parallel: {{.*}} (--parallel-mode auto)
// XROWS: out0: 40x64xf32
// XMISSING: missing.npy

func.func @block(%x: tensor<128x32xf32>, %logits: tensor<128x8xf32>,
                 %w13: tensor<8x32x48xf32>, %w2: tensor<8x24x32xf32>) -> tensor<128x32xf32> {
  %y = moe.block %x logits(%logits : tensor<128x8xf32>) gate_up(%w13 : tensor<8x32x48xf32>)
         down(%w2 : tensor<8x24x32xf32>) top 2 : tensor<128x32xf32>
  return %y : tensor<128x32xf32>
}
