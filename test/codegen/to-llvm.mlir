// The moe-to-llvm pipeline leaves nothing but the LLVM dialect and gives the
// public function a C entry point.
// RUN: moe-opt %examples/small-e60-top8.mlir --pass-pipeline='builtin.module(moe-to-llvm)' | FileCheck %s
// RUN: moe-opt %examples/small-e64-shared-fused.mlir --pass-pipeline='builtin.module(moe-to-llvm)' | FileCheck %s
// RUN: moe-opt %examples/backward-fused-w13.mlir --pass-pipeline='builtin.module(moe-to-llvm)' | FileCheck %s --check-prefix=GRAD

// CHECK-NOT: {{^ *(%[^ ]+ = )?(moe|func|arith|scf|memref|tensor|linalg|bufferization|math|cf)\.}}
// CHECK: llvm.func @moe_block(
// CHECK: llvm.func @_mlir_ciface_moe_block(
// GRAD: llvm.func @_mlir_ciface_moe_block_grad(
