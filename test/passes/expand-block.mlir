// RUN: moe-opt %s -moe-expand-block -split-input-file | FileCheck %s
// The expansion verifies, and the default pipeline leaves no moe.block.
// RUN: moe-opt %s -split-input-file --pass-pipeline='builtin.module(moe-default)' | FileCheck %s --check-prefix=PIPE
// PIPE-NOT: moe.block

// fused_w13 with fixed logits, no shared expert.
// CHECK-LABEL: func @fused_w13
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[L:.*]]: tensor<?x8xf32>, %[[W13:.*]]: tensor<8x64x32xf32>, %[[W2:.*]]: tensor<8x16x64xf32>)
// CHECK: %[[IDS:.*]], %[[W:.*]] = moe.route %[[L]] top 2 : tensor<?x8xf32>
// CHECK: %[[ROWS:.*]], %{{.*}}, %[[PERM:.*]], %[[SIZES:.*]] = moe.pack %[[X]], %[[IDS]], %[[W]] experts 8 :
// CHECK: %[[H:.*]] = moe.gmm %[[ROWS]], %[[W13]], %[[SIZES]] : tensor<?x64xf32>, tensor<8x64x32xf32>, tensor<8xi32>
// CHECK: %[[A:.*]] = moe.swiglu %[[H]] : tensor<?x32xf32>
// CHECK: %[[D:.*]] = moe.gmm %[[A]], %[[W2]], %[[SIZES]] : tensor<?x16xf32>, tensor<8x16x64xf32>, tensor<8xi32>
// CHECK: %[[Y:.*]] = moe.combine %[[D]], %[[PERM]], %[[W]] : tensor<?x64xf32>, tensor<?xi32>, tensor<?x2xf32>
// CHECK: return %[[Y]]
func.func @fused_w13(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// baseline w1/w3, router weights, null experts, preweight, every strategy
// attribute carried over, and a bf16 block: f32 router accumulator, shared
// expert computed in f32 and truncated once.
// CHECK-LABEL: func @baseline_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xbf16>, %[[R:.*]]: tensor<64x10xbf16>, %[[W1:.*]]: tensor<8x64x16xbf16>, %[[W3:.*]]: tensor<8x64x16xbf16>, %[[W2:.*]]: tensor<8x16x64xbf16>, %[[SW1:.*]]: tensor<64x24xbf16>, %[[SW3:.*]]: tensor<64x24xbf16>, %[[SW2:.*]]: tensor<24x64xbf16>)
// CHECK: %[[LOGITS:.*]] = linalg.matmul ins(%[[X]], %[[R]] : tensor<16x64xbf16>, tensor<64x10xbf16>) outs(%{{.*}} : tensor<16x10xf32>)
// CHECK: %[[IDS:.*]], %[[W:.*]] = moe.route %[[LOGITS]] top 4 scoring sigmoid order softmax_then_topk renormalize null_experts 2 null_policy take_until_null : tensor<16x10xf32>
// CHECK: %[[ROWS:.*]], %[[SW:.*]], %[[PERM:.*]], %[[SIZES:.*]] = moe.pack %[[X]], %[[IDS]], %[[W]] experts 8 strategy counting :
// CHECK: %[[G:.*]] = moe.gmm %[[ROWS]], %[[W1]], %[[SIZES]] : tensor<64x64xbf16>
// CHECK: %[[U:.*]] = moe.gmm %[[ROWS]], %[[W3]], %[[SIZES]]
// CHECK: %[[A:.*]] = moe.swiglu %[[G]], %[[U]] : tensor<64x16xbf16>, tensor<64x16xbf16>
// CHECK: %[[AW:.*]] = moe.scale_rows %[[A]], %[[SW]] : tensor<64x16xbf16>, tensor<64xf32>
// CHECK: %[[D:.*]] = moe.gmm %[[AW]], %[[W2]], %[[SIZES]]
// CHECK: %[[Y:.*]] = moe.combine %[[D]], %[[PERM]], %[[W]] strategy scatter preweighted :
// CHECK: %[[SG:.*]] = linalg.matmul ins(%[[X]], %[[SW1]] : {{.*}}) outs(%{{.*}} : tensor<16x24xf32>)
// CHECK: %[[SU:.*]] = linalg.matmul ins(%[[X]], %[[SW3]] : {{.*}}) outs(%{{.*}} : tensor<16x24xf32>)
// CHECK: %[[SA:.*]] = moe.swiglu %[[SG]], %[[SU]] : tensor<16x24xf32>, tensor<16x24xf32>
// CHECK: %[[SO:.*]] = linalg.matmul ins(%[[SA]], %[[SW2]] : tensor<16x24xf32>, tensor<24x64xbf16>) outs(%{{.*}} : tensor<16x64xf32>)
// CHECK: %[[ST:.*]] = arith.truncf %[[SO]] : tensor<16x64xf32> to tensor<16x64xbf16>
// CHECK: %[[OUT:.*]] = arith.addf %[[Y]], %[[ST]] : tensor<16x64xbf16>
// CHECK: return %[[OUT]]
func.func @baseline_bf16(%x: tensor<16x64xbf16>, %r: tensor<64x10xbf16>, %w1: tensor<8x64x16xbf16>, %w3: tensor<8x64x16xbf16>,
                         %w2: tensor<8x16x64xbf16>, %sw1: tensor<64x24xbf16>, %sw3: tensor<64x24xbf16>, %sw2: tensor<24x64xbf16>) -> tensor<16x64xbf16> {
  %y = moe.block %x router(%r : tensor<64x10xbf16>) gate_up(%w1, %w3 : tensor<8x64x16xbf16>, tensor<8x64x16xbf16>) down(%w2 : tensor<8x16x64xbf16>)
         shared_gate_up(%sw1, %sw3 : tensor<64x24xbf16>, tensor<64x24xbf16>) shared_down(%sw2 : tensor<24x64xbf16>)
         top 4 scoring sigmoid order softmax_then_topk renormalize null_experts 2 null_policy take_until_null
         pack_strategy counting combine_strategy scatter preweight : tensor<16x64xbf16>
  return %y : tensor<16x64xbf16>
}

// -----

// shared_fused in f32: one matmul against sw13, no truncation.
// CHECK-LABEL: func @shared_fused
// CHECK: %[[Y:.*]] = moe.combine
// CHECK: %[[SH:.*]] = linalg.matmul ins(%arg0, %arg4 : tensor<?x64xf32>, tensor<64x48xf32>) outs(%{{.*}} : tensor<?x48xf32>)
// CHECK: %[[SA:.*]] = moe.swiglu %[[SH]] : tensor<?x48xf32>
// CHECK: %[[SO:.*]] = linalg.matmul ins(%[[SA]], %arg5 : tensor<?x24xf32>, tensor<24x64xf32>)
// CHECK-NOT: arith.truncf
// CHECK: arith.addf %[[Y]], %[[SO]] : tensor<?x64xf32>
func.func @shared_fused(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>,
                        %sw13: tensor<64x48xf32>, %sw2: tensor<24x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>)
         shared_gate_up(%sw13 : tensor<64x48xf32>) shared_down(%sw2 : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// x with a static token count and logits with a dynamic one: pack takes the
// row count from x, combine the token count from the (dynamic) weights, and
// the result keeps the block's more static type.
// CHECK-LABEL: func @static_tokens
// CHECK: moe.pack {{.*}} : tensor<16x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>
// CHECK: %[[Y:.*]] = moe.combine {{.*}} : tensor<32x64xf32>, tensor<32xi32>, tensor<?x2xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[Y]] : tensor<?x64xf32> to tensor<16x64xf32>
// CHECK: return %[[C]]
func.func @static_tokens(%x: tensor<16x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) -> tensor<16x64xf32> {
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

// Benchmark null routing: moe.null_slots between route and pack, with the
// block's policy and renormalisation; pack and combine see its routing.
// CHECK-LABEL: func @null_draws
// CHECK-SAME: %[[U:[^:]*]]: tensor<?x4xf32>
// CHECK: %[[IDS:.*]], %[[W:.*]] = moe.route %{{.*}} top 4 renormalize : tensor<?x8xf32>
// CHECK: %[[NIDS:.*]], %[[NW:.*]] = moe.null_slots %[[IDS]], %[[W]], %[[U]] fraction 2.500000e-01 experts 8 policy take_until_null renormalize :
// CHECK: moe.pack %{{.*}}, %[[NIDS]], %[[NW]] experts 8
// CHECK: moe.combine %{{.*}}, %{{.*}}, %[[NW]]
func.func @null_draws(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %u: tensor<?x4xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) -> tensor<?x64xf32> {
  %y = moe.block %x logits(%l : tensor<?x8xf32>) null_draws(%u : tensor<?x4xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>)
         top 4 renormalize null_policy take_until_null null_fraction 0.25 : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
