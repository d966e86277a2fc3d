// RUN: moe-opt %s -moe-generate-backward -moe-remat=policy=none | FileCheck %s --check-prefix=NONE
// RUN: moe-opt %s -moe-generate-backward -moe-remat=policy=expert_mlp -cse | FileCheck %s --check-prefix=MLP
// RUN: moe-opt %s -moe-generate-backward -moe-remat=policy=combine -cse | FileCheck %s --check-prefix=COMB
// RUN: moe-opt %s -moe-generate-backward -moe-remat="policy=auto activation-budget=14000" | FileCheck %s --check-prefix=AUTO
// RUN: moe-opt %s -moe-generate-backward -moe-remat="policy=auto activation-budget=7000" | FileCheck %s --check-prefix=MLP

// none: the backward reads the forward's h and a (tgmm, swiglu_grad); no
// forward op is repeated.
// NONE-LABEL: func.func @block_forward_backward(
// NONE:         %[[H:.*]] = moe.gmm %{{.*}} : tensor<64x16xf32>
// NONE:         %[[A:.*]] = moe.swiglu %[[H]] : tensor<64x24xf32>
// NONE:         moe.tgmm %[[A]],
// NONE:         moe.swiglu_grad %{{.*}}, %[[H]] {moe.adjoint}
// NONE-NOT:     moe.swiglu %{{.*}} {moe.adjoint}
// NONE:         return

// expert_mlp: the up gmm and the activation run again in the backward from
// the kept rows and group sizes, right before the first backward op that
// reads them (the down gmm's weight gradient); CSE leaves them (moe.adjoint
// tells them apart). The down gmm is not repeated: no backward op reads
// its output. The same under auto with a budget of 7000 bytes (the forward
// keeps 16152; without h and a, 6936).
// MLP-LABEL: func.func @block_forward_backward(
// MLP-SAME:    moe.remat = {kept_bytes = 6936 : i64, kept_dynamic = false, policy = "{{expert_mlp|auto}}", recomputed_flops = 52992 : i64}
// MLP:         %[[ROWS:.*]], %{{.*}}, %{{.*}}, %[[SIZES:.*]] = moe.pack
// MLP:         %[[H:.*]] = moe.gmm %[[ROWS]], %[[W13:.*]], %[[SIZES]] : tensor<64x16xf32>
// MLP:         %[[A:.*]] = moe.swiglu %[[H]] :
// MLP:         moe.gmm %[[A]]
// MLP:         %[[DA:.*]] = moe.gmm %{{.*}} transpose_rhs {moe.adjoint}
// MLP-NEXT:    %[[H2:.*]] = moe.gmm %[[ROWS]], %[[W13]], %[[SIZES]] {moe.adjoint}
// MLP-NEXT:    %[[A2:.*]] = moe.swiglu %[[H2]] {moe.adjoint}
// MLP-NEXT:    moe.tgmm %[[A2]],
// MLP-NEXT:    moe.swiglu_grad %[[DA]], %[[H2]] {moe.adjoint}
// MLP-NOT:     moe.gmm %[[A2]]
// MLP:         return

// combine: the loss gradient reads y, which is recomputed from the kept
// down-projection rows (more bytes here: the fused combine keeps no
// intermediate, so the policy only trades y [T, H] for its K-times larger
// input).
// COMB-LABEL: func.func @block_forward_backward(
// COMB:         %[[Y:.*]] = moe.combine %[[OUT:.*]], %[[PERM:.*]], %[[W:.*]] :
// COMB:         arith.mulf %[[Y]], %[[Y]] :
// COMB:         %[[Y2:.*]] = moe.combine %[[OUT]], %[[PERM]], %[[W]] {moe.adjoint}
// COMB-NEXT:    arith.mulf %[[Y2]], %{{.*}} {moe.adjoint}

// auto under 14000 bytes: recomputing the activation alone (3840 FLOPs,
// keeps 13080) beats recomputing the up gmm too.
// AUTO-LABEL: func.func @block_forward_backward(
// AUTO:         %[[H:.*]] = moe.gmm
// AUTO:         %[[DA:.*]] = moe.gmm %{{.*}} transpose_rhs {moe.adjoint}
// AUTO-NEXT:    %[[A2:.*]] = moe.swiglu %[[H]] {moe.adjoint}
// AUTO-NEXT:    moe.tgmm %[[A2]],
// AUTO-NEXT:    moe.swiglu_grad %[[DA]], %[[H]] {moe.adjoint}
func.func @block(%x: tensor<32x16xf32>, %logits: tensor<32x4xf32>, %w13: tensor<4x16x24xf32>,
                 %w2: tensor<4x12x16xf32>) -> tensor<32x16xf32> {
  %y = moe.block %x logits(%logits : tensor<32x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>)
         down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
