// Bad options: one clear message, nothing run (exit code 2 from moe-bench's own checks, 1
// from the option parser's for a value not in a choice's list).
// RUN: not moe-bench --impl fastest 2>&1 | FileCheck %s --check-prefix=IMPL
// RUN: not moe-bench --read-gbps -3 2>&1 | FileCheck %s --check-prefix=READ
// RUN: not moe-bench --peak-gflops -1 2>&1 | FileCheck %s --check-prefix=PEAK
// RUN: not moe-bench --measured-peak-scale 0 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not moe-bench --llc-mib -2 2>&1 | FileCheck %s --check-prefix=LLC
// RUN: not moe-bench --routing-pack-strategy bubble 2>&1 | FileCheck %s --check-prefix=PACK
// RUN: not moe-bench --distribution zipf 2>&1 | FileCheck %s --check-prefix=DIST
// RUN: not moe-bench --queue-mode half 2>&1 | FileCheck %s --check-prefix=QUEUE
// RUN: not moe-bench --topk 0 2>&1 | FileCheck %s --check-prefix=TOPK
// RUN: not moe-bench --topk-list 2,x 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not moe-bench --bench-pass backward 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not moe-bench --threads 0 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not moe-bench --tuning-table %t.none 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: not moe-bench --experts 100000 --hidden 65536 --mlp-dim 65536 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not moe-bench --tune --gmm-tiling mr=6 2>&1 | FileCheck %s --check-prefix=TUNE
// RUN: not moe-bench --parallel-mode tp --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=PMODE
// RUN: not moe-bench --parallel-mode ep --ep-dispatch scatter --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=DISPATCH
// RUN: not moe-bench --parallel-mode ep --mesh data=2 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=EPMESH
// RUN: not moe-bench --parallel-mode dp --mesh data=2,expert=2 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=DPMESH
// RUN: not moe-bench --parallel-mode ep --mesh model=2 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not moe-bench --parallel-mode ep --mesh expert=7 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not moe-bench --mesh expert=2 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=NOMODE
// RUN: not moe-bench --launcher mpi --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=LAUNCH
// RUN: not moe-bench --launcher slurm --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=LAUNCHER
// RUN: not moe-bench --parallel-mode ep --tune --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=PTUNE
// RUN: not moe-bench --predict-only --link-gbps -1 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=LINK
// RUN: not moe-bench --predict-only --training-share 1.5 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=TSHARE
// RUN: not moe-bench --predict-only --training-share 0 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=TSHARE
// RUN: not moe-bench --predict-only --training-share nan --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=TSHARE
// RUN: not moe-bench --predict-only --half-rate-rows nan --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=HALFNAN
// RUN: not moe-bench --parallel-mode dp --devices 0 --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not moe-bench --parallel-mode ep --mesh expert=x --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=MESHSIZE
// RUN: not moe-bench --parallel-mode dp --stage-timing --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=PSTAGES

// PMODE: moe-bench: for the --parallel-mode option: must be none, dp, ep or auto (got 'tp')
// DISPATCH: moe-bench: for the --ep-dispatch option: must be dense, compact, ring or a2a (got 'scatter')
// EPMESH: moe-bench: error: --parallel-mode ep needs an expert axis of size > 1 (--mesh expert=N, or more than one device)
// DPMESH: moe-bench: error: --parallel-mode dp splits tokens only: give a mesh without an expert axis
// AXIS: moe-bench: error: --mesh 'model=2': the parallel plans partition over data and expert (got 'model')
// DIVIDE: moe-bench: error: the expert axis (7) must divide the experts (60)
// NOMODE: moe-bench: error: --mesh needs --parallel-mode dp, ep or auto
// LAUNCH: moe-bench: error: --launcher mpi runs a sharded block: give --parallel-mode dp, ep or auto
// LAUNCHER: moe-bench: for the --launcher option: must be inprocess or mpi (got 'slurm')
// LINK: moe-bench: error: --link-gbps must be >= 0 (got -1.000000)
// TSHARE: moe-bench: error: --training-share must be in (0, 1] (got {{1.5|0|nan}}
// HALFNAN: moe-bench: error: --half-rate-rows must be >= 0 (got nan
// DEVICES: moe-bench: error: --devices must be >= 1 (got 0)
// MESHSIZE: moe-bench: error: --mesh 'expert=x': mesh axis 'expert' needs a size >= 1 (got 'x')
// PSTAGES: moe-bench: error: --stage-timing and --queue-mode prequeue time a single device's stages; give them without --parallel-mode
// PTUNE: moe-bench: error: --tune tunes the single-device block: run it without --parallel-mode first

// PACK: moe-bench: for the --routing-pack-strategy option: must be argsort, tuple_sort or counting (got 'bubble')
// DIST: moe-bench: for the --distribution option: must be random, runs or both (got 'zipf')
// QUEUE: moe-bench: for the --queue-mode option: must be full, prequeue or both (got 'half')
// READ: moe-bench: error: --read-gbps must be a rate >= 0 (0: measure it; got -3.000000)
// PEAK: moe-bench: error: --peak-gflops must be a rate >= 0 (0: measure it; got -1.000000)
// SCALE: moe-bench: error: --measured-peak-scale must be > 0 (got 0.000000)
// LLC: moe-bench: error: --llc-mib must be >= 0 (0: the cache Linux describes; got -2.000000)
// IMPL: moe-bench: for the --impl option: must be baseline, fused_w13, preweight or scatter (got 'fastest')
// TOPK: moe-bench: error: top-k 0 must be in 1..60
// LIST: moe-bench: error: --topk-list: 'x' is not an integer
// PASS: moe-bench: for the --bench-pass option: must be forward or forward_backward (got 'backward')
// THREADS: moe-bench: error: --threads must be a positive integer (got '0')
// TABLE: moe-bench: error: tuning table '{{.*}}.none' does not exist (make it with --tune)
// MEMORY: moe-bench: error: this configuration needs about {{[0-9]+}} GB, more than the {{[0-9]+}} GB of memory available: refused before allocating
// TUNE: moe-bench: error: --tune searches the tiles; do not give --gmm-tiling with it

// Null routing flags.
// RUN: not moe-bench --null-route-frac 0.5 --null-route-sweep 2>&1 | FileCheck %s --check-prefix=NULLTWO
// RUN: not moe-bench --null-route-frac-list 0.2,1.5 2>&1 | FileCheck %s --check-prefix=NULLRANGE
// RUN: not moe-bench --null-route-frac-list 0.2,half 2>&1 | FileCheck %s --check-prefix=NULLLIST
// RUN: not moe-bench --null-route-frac 0.5 --null-routing-mode first 2>&1 | FileCheck %s --check-prefix=NULLMODE
// RUN: not moe-bench --renormalize-real-after-null 2>&1 | FileCheck %s --check-prefix=NULLNONE
// NULLTWO: moe-bench: error: give one of --null-route-frac, --null-route-frac-list and --null-route-sweep
// NULLRANGE: moe-bench: error: a null fraction must be in [0, 1] (got 1.500000)
// NULLLIST: moe-bench: error: --null-route-frac-list: 'half' is not a number
// NULLMODE: moe-bench: for the --null-routing-mode option: must be independent or take_until_null (got 'first')
// NULLNONE: moe-bench: error: --null-routing-mode and --renormalize-real-after-null apply to null routing

// int8 flags.
// RUN: not moe-bench --quant-mode int4 2>&1 | FileCheck %s --check-prefix=QMODE
// RUN: not moe-bench --quant-mode int8 --quant-weight-scales row 2>&1 | FileCheck %s --check-prefix=QSCALES
// RUN: not moe-bench --quant-mode int8 --queue-mode prequeue 2>&1 | FileCheck %s --check-prefix=QQUEUE
// RUN: not moe-bench --quant-mode int8 --parallel-mode ep --peak-gflops 1 2>&1 | FileCheck %s --check-prefix=QMESH
// QMODE: moe-bench: for the --quant-mode option: must be none, int8, int8_routed or fake_int8 (got 'int4')
// QSCALES: moe-bench: for the --quant-weight-scales option: must be expert or channel (got 'row')
// QQUEUE: moe-bench: error: --queue-mode prequeue times the float block without its gather; give it without --quant-mode
// QMESH: moe-bench: error: --quant-mode runs the single-device block: int8 on a mesh is not supported yet (give it without --parallel-mode)
// Refused before the peak is measured and the plans printed (auto too).
// RUN: not moe-bench --quant-mode int8 --parallel-mode auto 2>&1 | FileCheck %s --check-prefix=QAUTO
// QAUTO-NOT: peak:
// QAUTO-NOT: model:
// QAUTO: moe-bench: error: --quant-mode runs the single-device block: int8 on a mesh is not supported yet (give it without --parallel-mode)
// auto over one device plans the single device, and int8 runs there.
// RUN: moe-bench --quant-mode int8 --parallel-mode auto --mesh data=1 --tokens 16 --hidden 64 --mlp-dim 32 --experts 4 --topk 2 --iters 1 --peak-gflops 1 | FileCheck %s --check-prefix=QAUTO-ONE
// QAUTO-ONE: RESULT {{.*}}quant=int8

// The gmm strategy is moec's enum: its values in the message, the same name.
// RUN: not moe-bench --gmm-strategy fastest 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not moe-bench --backend fastest 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: moe-bench: for the --gmm-strategy option: must be microkernel, microkernel-amx, microkernel-avx512bf16, microkernel-fma or reference (got 'fastest')
