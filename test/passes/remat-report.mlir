// RUN: moe-opt %s -moe-generate-backward -moe-remat-report=activation-budget=14000 -o /dev/null | FileCheck %s
// RUN: moe-opt %s -moe-remat-report -o /dev/null | FileCheck %s --check-prefix=NOFB

// T = 32, H = 16, M = 12, E = 4, top-2: A = 64 rows. none keeps the sorted
// rows (4096 B), h (6144), a (3072), y (2048), the permutation, sorted and
// token weights, group sizes and the 1/(T H) scalar. expert_mlp recomputes
// h and a: the up gmm 2*64*16*24 = 49152 FLOPs + swiglu 5*64*12 = 3840.
// combine recomputes y (2*64*16) and keeps the down rows instead of y.
// CHECK:      remat report for @block_forward_backward
// CHECK:        policy             kept_bytes   recomputed_flops
// CHECK-NEXT:   none                    16152                  0
// CHECK-NEXT:   expert_mlp               6936              52992
// CHECK-NEXT:   combine                 18200               2048
// CHECK-NEXT:   auto                    13080               3840
// CHECK-NEXT:   auto keeps at most 14000 bytes
// CHECK:        kept by none:
// CHECK:          moe.gmm -> tensor<64x24xf32>  6144 bytes
// CHECK:        kept by expert_mlp:
// CHECK-NOT:      moe.gmm -> tensor<64x24xf32>
// CHECK:        kept by combine:
// CHECK:          moe.gmm -> tensor<64x16xf32>  4096 bytes
// CHECK:        kept by auto:
// CHECK:          moe.gmm -> tensor<64x24xf32>  6144 bytes
// CHECK-NOT:      moe.swiglu ->

// NOFB: remat report: no forward_backward function (run moe-generate-backward first)
func.func @block(%x: tensor<32x16xf32>, %logits: tensor<32x4xf32>, %w13: tensor<4x16x24xf32>,
                 %w2: tensor<4x12x16xf32>) -> tensor<32x16xf32> {
  %y = moe.block %x logits(%logits : tensor<32x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
