// moe-to-llvm, built in C++ from the passes' create functions and option
// structs (codegen/Pipelines.cpp): the passes and the options that matter,
// in order, as the textual pipeline that reproduces any stage prints them.
// RUN: moe-opt %s --moe-to-llvm --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s

// CHECK: Pass Manager with 39 passes:
// CHECK-NEXT: builtin.module(
// CHECK-NEXT:   moe-expand-block,
// CHECK-NEXT:   canonicalize
// CHECK-NEXT:   cse,
// CHECK-NEXT:   moe-attach-target{cpu=},
// CHECK-NEXT:   moe-select-lowering{gmm-strategy=microkernel gmm-tiling= tuning-table=},
// CHECK-NEXT:   moe-emit-c-interface,
// CHECK-NEXT:   moe-lower-to-loops,
// CHECK-NEXT:   func.func(
// CHECK-NEXT:     convert-elementwise-to-linalg
// CHECK-NEXT:   ),
// CHECK-NEXT:   one-shot-bufferize{{.*}}bufferize-function-boundaries=true{{.*}}function-boundary-type-conversion=identity-layout-map
// CHECK:        ownership-based-buffer-deallocation
// CHECK:        convert-bufferization-to-memref,
// CHECK-NEXT:   func.func(
// CHECK-NEXT:     moe-plan-buffers
// CHECK-NEXT:   ),
// CHECK-NEXT:   moe-copies-to-linalg,
// CHECK-NEXT:   func.func(
// CHECK-NEXT:     moe-parallel-linalg{min-elements=65536}
// CHECK-NEXT:   ),
// CHECK-NEXT:   convert-scf-to-openmp
// CHECK-NEXT:   convert-linalg-to-loops,
// CHECK-NEXT:   expand-strided-metadata,
// CHECK-NEXT:   lower-affine,
// CHECK-NEXT:   func.func(
// CHECK-NEXT:     arith-emulate-unsupported-floats{source-types={bf16} target-type=f32},
// CHECK-NEXT:     moe-expand-bf16-conversions
// CHECK-NEXT:   ),
// CHECK-NEXT:   moe-approximate-vector-math,
// CHECK-NEXT:   convert-vector-to-llvm{{.*}}enable-x86vector=true
// CHECK-NEXT:   finalize-memref-to-llvm
// CHECK-NEXT:   convert-scf-to-cf
// CHECK-NEXT:   convert-math-to-llvm
// CHECK-NEXT:   convert-arith-to-llvm
// CHECK-NEXT:   convert-index-to-llvm
// CHECK-NEXT:   convert-func-to-llvm
// CHECK-NEXT:   moe-convert-amx-to-llvm,
// CHECK-NEXT:   convert-cf-to-llvm
// CHECK-NEXT:   convert-openmp-to-llvm,
// CHECK-NEXT:   reconcile-unrealized-casts
// CHECK-NEXT: )

// The options reach the passes they name.
// RUN: moe-opt %s '--moe-to-llvm=gmm-strategy=microkernel-fma target-cpu=znver3' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: moe-attach-target{cpu=znver3},
// OPTIONS-NEXT: moe-select-lowering{gmm-strategy=microkernel-fma gmm-tiling= tuning-table=},
module {}

// prepare-weights: moe-prepare-weights after the strategy, before the C
// interface (which the new public functions get too).
// RUN: moe-opt %s '--moe-to-llvm=prepare-weights=true' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PREPARE
// PREPARE:      moe-select-lowering{gmm-strategy=microkernel gmm-tiling= tuning-table=},
// PREPARE-NEXT: moe-prepare-weights,
// PREPARE-NEXT: moe-emit-c-interface,
