// moe-emit-c-interface: public functions get a C entry point and read-only
// tensor arguments; bufferized, the elementwise sum writes a new buffer, not
// its first operand's (the caller's memory).
// RUN: moe-opt %s --moe-emit-c-interface | FileCheck %s
// RUN: moe-opt %s --pass-pipeline='builtin.module(moe-emit-c-interface,func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map})' | FileCheck %s --check-prefix=BUFFERS

// CHECK-LABEL: func.func @add_mul(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {bufferization.writable = false}, %{{.*}}: tensor<4xf32> {bufferization.writable = false})
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: bufferization.writable
// CHECK-NOT: llvm.emit_c_interface
func.func @add_mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %b : tensor<4xf32>
  %s = arith.mulf %r, %b : tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// BUFFERS: func.func @add_mul(%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>)
// BUFFERS: %[[NEW:.*]] = memref.alloc
// BUFFERS: linalg.generic {{.*}} ins(%[[A]], %[[B]] : memref<4xf32>, memref<4xf32>) outs(%[[NEW]] : memref<4xf32>)
