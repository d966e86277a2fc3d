// A bad option, pass option or pipeline: one message naming it and what
// it accepts, a non-zero exit, before any work. moe-bench's own options:
// test/moe-bench/errors.mlir; moec run's counts and files:
// test/moec/errors.mlir.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump" --implicit-check-not=Assertion

// RUN: not moec %s -o %t/x.o --frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN %{nocrash}
// RUN: not moe-opt %s --frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN %{nocrash}
// UNKNOWN: Unknown command line argument '--frobnicate'.

// RUN: not moec run %s --random-inputs --threads lots 2>&1 | FileCheck %s --check-prefix=NUMBER %{nocrash}
// NUMBER: moec: for the --threads option: 'lots' value invalid for uint argument!

// The gmm options: once for the whole program, not once per gmm.
// RUN: not moec %s -o %t/x.o --gmm-strategy fastest 2>&1 | FileCheck %s --check-prefix=STRATEGY %{nocrash}
// STRATEGY: moec: for the --gmm-strategy option: must be microkernel, microkernel-amx, microkernel-avx512bf16, microkernel-fma or reference (got 'fastest')
// RUN: not moec run %s --random-inputs --gmm-tiling mr=six 2>&1 | FileCheck %s --check-prefix=TILING %{nocrash}
// TILING: moec: error: gmm tiling 'mr=six': 'mr=six' is not key=positive integer
// RUN: not moec %s -o %t/x.o --gmm-tiling mr=6,nv=99 2>&1 | FileCheck %s --check-prefix=REGISTERS %{nocrash}
// REGISTERS: moec: error: gmm tiling mr=6,nv=99,kc=256,nc=256,mc=192: register tile mr=6 x nv=99 needs 694 vector registers, more than the target's {{8|32}}
// RUN: not moec %s -o %t/x.o --gmm-tiling mr=6,zz=4 2>&1 | FileCheck %s --check-prefix=KEY %{nocrash}
// KEY: moec: error: gmm tiling 'mr=6,zz=4': unknown key 'zz' (expected mr, nv, kc, nc, mc)

// The same through moe-opt's pass options: one error.
// RUN: not moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-tiling=mr=six --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=PASS-TILING %{nocrash}
// PASS-TILING: options.mlir:0:0: error: gmm tiling 'mr=six': 'mr=six' is not key=positive integer
// A choice pass option's parser prints the message; MLIR's pipeline parser
// then adds an empty "<unknown>:0: error:" of its own (upstream passes'
// enum options do the same), so only crashes are excluded here.
// RUN: not moe-opt %s -moe-remat=policy=cheapest --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=PASS-POLICY --implicit-check-not="Stack dump" --implicit-check-not=Assertion
// PASS-POLICY: moe-opt: for the --policy option: must be none, expert_mlp, combine or auto (got 'cheapest')

// Pipelines that do not parse or name no pass.
// RUN: not moec %s -o %t/x.o --pass-pipeline='moe-expand-block,moe-nope' 2>&1 | FileCheck %s --check-prefix=NOPASS %{nocrash}
// RUN: not moe-opt %s --pass-pipeline='builtin.module(moe-nope)' 2>&1 | FileCheck %s --check-prefix=NOPASS %{nocrash}
// NOPASS: {{.*}}error: 'moe-nope' does not refer to a registered pass or pass pipeline
// RUN: not moe-opt %s --pass-pipeline='builtin.module(func.func(moe-remat{policy=none)' 2>&1 | FileCheck %s --check-prefix=UNCLOSED %{nocrash}
// UNCLOSED: {{.*}}error: missing closing '}' while processing pass options

// moec's own choices.
// RUN: not moec %s -o %t/x.o --backward squared 2>&1 | FileCheck %s --check-prefix=BACKWARD %{nocrash}
// BACKWARD: moec: for the --backward option: must be mean-square or cotangent (got 'squared')
// RUN: not moec %s -o %t/x.o --remat expert_mlp 2>&1 | FileCheck %s --check-prefix=REMAT %{nocrash}
// REMAT: moec: error: --remat, --activation-budget and --routing-grad apply to the backward: give --backward too
// RUN: not moec run %s --random-inputs --iters 0 2>&1 | FileCheck %s --check-prefix=ITERS %{nocrash}
// ITERS: moec: error: --iters must be at least 1
// RUN: not moec run %s --random-inputs --launcher ssh 2>&1 | FileCheck %s --check-prefix=LAUNCHER %{nocrash}
// LAUNCHER: moec: for the --launcher option: must be inprocess or mpi (got 'ssh')
// RUN: not moec run --hf-config %s --dtype f16 --random-inputs 2>&1 | FileCheck %s --check-prefix=DTYPE %{nocrash}
// DTYPE: moec: for the --dtype option: must be f32 or bf16 (got 'f16')
// RUN: not moec run %s --random-inputs --mesh expert=2 --ep-dispatch broadcast 2>&1 | FileCheck %s --check-prefix=DISPATCH %{nocrash}
// DISPATCH: moec: for the --ep-dispatch option: must be dense, compact, ring or a2a (got 'broadcast')
// RUN: not moec run %s --random-inputs --ep-dispatch dense 2>&1 | FileCheck %s --check-prefix=NOMESH %{nocrash}
// RUN: not moec %s -o %t/x.o --capacity-factor 1.5 2>&1 | FileCheck %s --check-prefix=NOMESH %{nocrash}
// NOMESH: moec: error: --ep-dispatch, --capacity-factor and --capacity-round apply to a partitioned block: give --mesh (e.g. --mesh expert=2) or --parallel-mode too
// Quantizing or differentiating in --pass-pipeline with --backward would
// not give the int8 training form: refused, naming the command that does.
// RUN: not moec run %s --random-inputs --backward mean-square --pass-pipeline 'moe-quantize{mode=int8},moe-to-llvm' 2>&1 | FileCheck %s --check-prefix=QUANT-BACKWARD %{nocrash}
// RUN: not moec run %s --random-inputs --pass-pipeline 'moe-generate-backward,moe-to-llvm' 2>&1 | FileCheck %s --check-prefix=QUANT-BACKWARD %{nocrash}
// QUANT-BACKWARD: moec: error: --pass-pipeline runs after --backward's moe-generate-backward, so it may not differentiate the block, nor quantize one being trained; for the int8 training form, quantize before differentiating: moe-opt FILE -moe-quantize='mode=int8 hoist-weights=false' -moe-generate-backward=loss=mean-square -o q.mlir, then moec run q.mlir --entry <block>_forward_backward
// moe-partition runs before --pass-pipeline and moe-quantize takes one
// device's block: a plan beside a quantizing pipeline is refused before any
// work, not from inside the pipeline after the plan is printed.
// RUN: not moec run %s --random-inputs --parallel-mode auto --pass-pipeline 'moe-quantize{mode=int8},moe-to-llvm' 2>&1 | FileCheck %s --check-prefix=QUANT-PLAN %{nocrash}
// RUN: not moec run %s --random-inputs --parallel-mode dp --pass-pipeline 'moe-quantize{mode=fake_int8},moe-to-llvm' 2>&1 | FileCheck %s --check-prefix=QUANT-PLAN %{nocrash}
// RUN: not moec %s -o %t/x.o --mesh expert=2 --parallel-mode ep --pass-pipeline 'moe-quantize,moe-to-llvm' 2>&1 | FileCheck %s --check-prefix=QUANT-PLAN %{nocrash}
// QUANT-PLAN-NOT: model:
// QUANT-PLAN: moec: error: --pass-pipeline quantizes the block, and --parallel-mode and --mesh partition it before the pipeline runs: moe-quantize takes a single-device block (int8 on a mesh is not supported yet); run it without --parallel-mode and --mesh (one device on all --threads)
// Without a plan, the same pipeline runs the int8 block on one device; so
// does auto where there is one device to plan for.
// RUN: moec run %s --random-inputs --threads 2 --pass-pipeline 'moe-quantize{mode=int8},moe-to-llvm' | FileCheck %s --check-prefix=QUANT-ONE
// RUN: moec run %s --random-inputs --threads 1 --parallel-mode auto --pass-pipeline 'moe-quantize{mode=int8},moe-to-llvm' | FileCheck %s --check-prefixes=QUANT-AUTO-ONE,QUANT-ONE
// QUANT-AUTO-ONE: parallel: none
// QUANT-ONE: out0:
// A block quantized before has no moe.block left for auto to plan.
// RUN: moe-opt %s -moe-quantize -o %t.quantized.mlir
// RUN: not moec run %t.quantized.mlir --random-inputs --parallel-mode auto 2>&1 | FileCheck %s --check-prefix=QUANT-BEFORE %{nocrash}
// QUANT-BEFORE: moec: error: --parallel-mode auto plans one moe.block, and the program has none (moe-expand-block or moe-quantize expands them, and a plan partitions the block before they run): plan the block before expanding or quantizing it, or run this program on one device (without --parallel-mode)
// The command it names works, and runs the int8 training form.
// RUN: moe-opt %s -moe-quantize='mode=int8 hoist-weights=false' -moe-generate-backward=loss=mean-square -o %t.q.mlir
// RUN: moec run %t.q.mlir --entry block_forward_backward --random-inputs | FileCheck %s --check-prefix=QUANT-TRAIN
// QUANT-TRAIN: out0:
// moe-opt reports a bad mesh as it reports any bad pass option (moec's own
// refusal is in mesh.mlir).
// RUN: not moe-opt %s -moe-partition=mesh=expert=2,expert=2 2>&1 | FileCheck %s --check-prefix=PASS-AXIS %{nocrash}
// PASS-AXIS: error: moe-partition: mesh 'expert=2,expert=2': mesh axis 'expert' given twice

// Nothing was written.
// RUN: ls %t | count 0
func.func @block(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
