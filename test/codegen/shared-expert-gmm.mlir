// The microkernel strategies run the shared expert's matmuls as one-group
// gmms (the tiled kernel, SwiGLU fused) instead of scalar loops; bf16
// operands widened to f32 first (the matmul's f32 accumulation and result);
// the router's matmul stays a product the reference computes bit for bit,
// its loops ordered (rows, depth, columns) so that the innermost vectorizes.
// The reference strategy keeps all four as such products.
// RUN: moe-opt %s -moe-expand-block -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-lower-to-loops | FileCheck %s
// RUN: moe-opt %s -moe-expand-block -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-strategy=reference -moe-lower-to-loops | FileCheck %s --check-prefix=REF

// Gate and up as two weights: one group of the same rows, so the SwiGLU
// still fuses into the gmm's epilogue (no scalar exp of a separate swiglu).
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[WEIGHT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @shared_f32
// The router: x @ w_router, depth the middle loop.
// CHECK: linalg.generic {indexing_maps = [#[[ROWS]], #[[WEIGHT]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// Four kernels (each asks OpenMP for its workers once): routed up (SwiGLU
// fused), routed down, shared gate and up together (SwiGLU fused), shared
// down. Unfused, gate and up would be a kernel each.
// CHECK-COUNT-4: call @omp_get_max_threads
// CHECK-NOT: call @omp_get_max_threads
// CHECK-NOT: linalg.matmul
// CHECK-NOT: "reduction", "parallel"
// CHECK: return
// REF-LABEL: func @shared_f32
// REF-NOT: linalg.matmul
// REF-COUNT-4: iterator_types = ["parallel", "reduction", "parallel"]
// REF-NOT: linalg.matmul
func.func @shared_f32(%x: tensor<?x32xf32>, %wr: tensor<32x4xf32>, %w13: tensor<4x32x16xf32>,
                      %w2: tensor<4x8x32xf32>, %sw1: tensor<32x12xf32>, %sw3: tensor<32x12xf32>,
                      %sw2: tensor<12x32xf32>) -> tensor<?x32xf32> {
  %y = moe.block %x router(%wr : tensor<32x4xf32>) gate_up(%w13 : tensor<4x32x16xf32>)
         down(%w2 : tensor<4x8x32xf32>) shared_gate_up(%sw1, %sw3 : tensor<32x12xf32>, tensor<32x12xf32>)
         shared_down(%sw2 : tensor<12x32xf32>) top 2 : tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// CHECK-LABEL: func @shared_bf16
// CHECK: arith.extf {{.*}} : tensor<?x32xbf16> to tensor<?x32xf32>
// CHECK: arith.extf {{.*}} : tensor<32x24xbf16> to tensor<32x24xf32>
// CHECK-NOT: linalg.matmul
// CHECK-NOT: "reduction", "parallel"
// CHECK: return
func.func @shared_bf16(%x: tensor<?x32xbf16>, %logits: tensor<?x4xf32>, %w13: tensor<4x32x16xbf16>,
                       %w2: tensor<4x8x32xbf16>, %sw13: tensor<32x24xbf16>, %sw2: tensor<12x32xbf16>) -> tensor<?x32xbf16> {
  %y = moe.block %x logits(%logits : tensor<?x4xf32>) gate_up(%w13 : tensor<4x32x16xbf16>)
         down(%w2 : tensor<4x8x32xbf16>) shared_gate_up(%sw13 : tensor<32x24xbf16>)
         shared_down(%sw2 : tensor<12x32xbf16>) top 2 : tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}
