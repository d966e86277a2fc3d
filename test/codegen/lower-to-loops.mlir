// RUN: moe-opt %s -moe-attach-target=cpu=haswell -moe-select-lowering=gmm-strategy=reference -moe-lower-to-loops -split-input-file | FileCheck %s

// Operands are read through to_buffer, the result is a fresh allocation that
// becomes a tensor again. Groups are walked once to map rows to groups; the
// rows are then computed in parallel, each with stack scratch released per
// iteration.
// CHECK-LABEL: func @gmm
// CHECK-DAG: %[[LHS:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-DAG: %[[RHS:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK-DAG: %[[SIZES:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x32xbf16>
// CHECK: %[[GROUP_OF:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xindex>
// CHECK: scf.for %[[G:.*]] = {{.*}} iter_args(%[[START:.*]] = {{.*}}) -> (index)
// CHECK:   memref.load %[[SIZES]][%[[G]]]
// CHECK:   memref.store %[[G]], %[[GROUP_OF]]
// CHECK: scf.parallel (%[[R:.*]]) =
// CHECK:   memref.alloca_scope
// CHECK:     memref.load %[[GROUP_OF]][%[[R]]]
// CHECK:     memref.alloca() {alignment = 64 : i64} : memref<32xf32>
// CHECK:       memref.load %[[LHS]]
// CHECK:       arith.extf
// CHECK:       memref.load %[[RHS]]
// CHECK:     arith.truncf {{.*}} : f32 to bf16
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<?x32xbf16>
// CHECK-NOT: moe.gmm
func.func @gmm(%rows: tensor<?x64xbf16>, %w: tensor<6x64x32xbf16>, %sizes: tensor<6xi32>) -> tensor<?x32xbf16> {
  %0 = moe.gmm %rows, %w, %sizes : tensor<?x64xbf16>, tensor<6x64x32xbf16>, tensor<6xi32>
  return %0 : tensor<?x32xbf16>
}

// -----

// Every primitive of the forward and backward lowers; nothing moe is left.
// CHECK-LABEL: func @all_primitives
// CHECK-NOT: {{^ *%.* = moe\.}}
// CHECK: return
func.func @all_primitives(%x: tensor<?x16xf32>, %l: tensor<?x6xf32>, %w13: tensor<4x16x24xf32>,
                          %w2: tensor<4x12x16xf32>, %dy: tensor<?x16xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<4x16x24xf32>, tensor<?x24xf32>) {
  %ids, %w = moe.route %l top 2 scoring sigmoid order softmax_then_topk renormalize null_experts 2 null_policy take_until_null : tensor<?x6xf32>
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 4 : tensor<?x16xf32>, tensor<?x2xi32>, tensor<?x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x16xf32>, tensor<4x16x24xf32>, tensor<4xi32>
  %a = moe.swiglu %h : tensor<?x24xf32>
  %as = moe.scale_rows %a, %sw : tensor<?x12xf32>, tensor<?xf32>
  %d = moe.gmm %as, %w2, %sizes : tensor<?x12xf32>, tensor<4x12x16xf32>, tensor<4xi32>
  %y = moe.combine %d, %perm, %w preweighted : tensor<?x16xf32>, tensor<?xi32>, tensor<?x2xf32>
  %g = moe.gather_rows %dy, %perm top 2 : tensor<?x16xf32>, tensor<?xi32>
  %dx = moe.gmm %g, %w2, %sizes transpose_rhs : tensor<?x16xf32>, tensor<4x12x16xf32>, tensor<4xi32>
  %dh = moe.swiglu_grad %dx, %h : tensor<?x12xf32>, tensor<?x24xf32>
  %dw = moe.tgmm %rows, %dh, %sizes : tensor<?x16xf32>, tensor<?x24xf32>, tensor<4xi32>
  %y2 = moe.combine %d, %perm, %w strategy scatter : tensor<?x16xf32>, tensor<?xi32>, tensor<?x2xf32>
  return %y, %y2, %dw, %dh : tensor<?x16xf32>, tensor<?x16xf32>, tensor<4x16x24xf32>, tensor<?x24xf32>
}
