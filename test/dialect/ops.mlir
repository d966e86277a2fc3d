// RUN: moe-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same printed form.
// RUN: moe-opt %s | moe-opt | FileCheck %s
// And through the generic form, which exercises the properties encoding.
// RUN: moe-opt %s --mlir-print-op-generic | moe-opt | FileCheck %s

// CHECK-LABEL: func @route
func.func @route(%logits: tensor<?x60xf32>, %nl: tensor<16x68xbf16>) {
  // CHECK: moe.route %{{.*}} top 2 : tensor<?x60xf32>
  %ids, %w = moe.route %logits top 2 : tensor<?x60xf32>
  // CHECK: moe.route %{{.*}} top 8 scoring sigmoid order softmax_then_topk renormalize null_experts 4 null_policy take_until_null : tensor<16x68xbf16>
  %ids2, %w2 = moe.route %nl top 8 scoring sigmoid order softmax_then_topk renormalize null_experts 4 null_policy take_until_null : tensor<16x68xbf16>
  return
}

// CHECK-LABEL: func @pack
func.func @pack(%x: tensor<?x2048xf32>, %ids: tensor<?x8xi32>, %w: tensor<?x8xf32>) -> (tensor<?x2048xf32>, tensor<4096x2048xf32>, tensor<15xi32>) {
  // CHECK: moe.pack %{{.*}}, %{{.*}}, %{{.*}} experts 60 : tensor<?x2048xf32>, tensor<?x8xi32>, tensor<?x8xf32>
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 60 : tensor<?x2048xf32>, tensor<?x8xi32>, tensor<?x8xf32>
  // CHECK: moe.pack %{{.*}}, %{{.*}}, %{{.*}} experts 60 offset 15 local 15 capacity 4096 strategy counting
  %r1, %sw1, %p1, %s1 = moe.pack %x, %ids, %w experts 60 offset 15 local 15 capacity 4096 strategy counting : tensor<?x2048xf32>, tensor<?x8xi32>, tensor<?x8xf32>
  // CHECK: moe.pack {{.*}} strategy tuple_sort
  %r2, %sw2, %p2, %s2 = moe.pack %x, %ids, %w experts 60 strategy tuple_sort : tensor<?x2048xf32>, tensor<?x8xi32>, tensor<?x8xf32>
  return %rows, %r1, %s1 : tensor<?x2048xf32>, tensor<4096x2048xf32>, tensor<15xi32>
}

// CHECK-LABEL: func @gather_rows
func.func @gather_rows(%src: tensor<?x64xf32>, %perm: tensor<?xi32>) -> tensor<?x64xf32> {
  // CHECK: moe.gather_rows %{{.*}}, %{{.*}} top 2 : tensor<?x64xf32>, tensor<?xi32>
  %rows = moe.gather_rows %src, %perm top 2 : tensor<?x64xf32>, tensor<?xi32>
  return %rows : tensor<?x64xf32>
}

// CHECK-LABEL: func @gmm
func.func @gmm(%rows: tensor<?x64xbf16>, %w13: tensor<6x64x32xbf16>, %sizes: tensor<6xi32>,
               %dh: tensor<?x32xf32>, %w: tensor<6x64x32xf32>, %x: tensor<?x64xf32>) -> (tensor<?x32xbf16>, tensor<?x64xf32>, tensor<6x64x32xf32>) {
  // CHECK: moe.gmm %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xbf16>, tensor<6x64x32xbf16>, tensor<6xi32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<?x64xbf16>, tensor<6x64x32xbf16>, tensor<6xi32>
  // CHECK: moe.gmm %{{.*}}, %{{.*}}, %{{.*}} transpose_rhs : tensor<?x32xf32>, tensor<6x64x32xf32>, tensor<6xi32>
  %dx = moe.gmm %dh, %w, %sizes transpose_rhs : tensor<?x32xf32>, tensor<6x64x32xf32>, tensor<6xi32>
  // CHECK: moe.tgmm %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?x32xf32>, tensor<6xi32>
  %dw = moe.tgmm %x, %dh, %sizes : tensor<?x64xf32>, tensor<?x32xf32>, tensor<6xi32>
  return %h, %dx, %dw : tensor<?x32xbf16>, tensor<?x64xf32>, tensor<6x64x32xf32>
}

// CHECK-LABEL: func @activation
func.func @activation(%h: tensor<?x32xf32>, %g: tensor<?x16xbf16>, %u: tensor<?x16xbf16>, %s: tensor<?xf32>) -> (tensor<?x16xf32>, tensor<?x16xbf16>) {
  // CHECK: moe.swiglu %{{.*}} : tensor<?x32xf32>
  %a = moe.swiglu %h : tensor<?x32xf32>
  // CHECK: moe.swiglu %{{.*}}, %{{.*}} : tensor<?x16xbf16>, tensor<?x16xbf16>
  %b = moe.swiglu %g, %u : tensor<?x16xbf16>, tensor<?x16xbf16>
  // CHECK: moe.scale_rows %{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<?xf32>
  %c = moe.scale_rows %a, %s : tensor<?x16xf32>, tensor<?xf32>
  // CHECK: moe.swiglu_grad %{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<?x32xf32>
  %dh = moe.swiglu_grad %c, %h : tensor<?x16xf32>, tensor<?x32xf32>
  // CHECK: moe.swiglu_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x16xbf16>, tensor<?x16xbf16>, tensor<?x16xbf16>
  %dg, %du = moe.swiglu_grad %b, %g, %u : tensor<?x16xbf16>, tensor<?x16xbf16>, tensor<?x16xbf16>
  return %c, %b : tensor<?x16xf32>, tensor<?x16xbf16>
}

// CHECK-LABEL: func @combine
func.func @combine(%rows: tensor<?x64xf32>, %perm: tensor<?xi32>, %w: tensor<?x2xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  // CHECK: moe.combine %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?xi32>, tensor<?x2xf32>
  %y = moe.combine %rows, %perm, %w : tensor<?x64xf32>, tensor<?xi32>, tensor<?x2xf32>
  // CHECK: moe.combine %{{.*}}, %{{.*}}, %{{.*}} strategy scatter preweighted :
  %z = moe.combine %rows, %perm, %w strategy scatter preweighted : tensor<?x64xf32>, tensor<?xi32>, tensor<?x2xf32>
  return %y, %z : tensor<?x64xf32>, tensor<?x64xf32>
}

// The adjoints of the routing (moe-generate-backward routing-grad=true).
// CHECK-LABEL: func @routing_adjoints
func.func @routing_adjoints(%dsorted: tensor<?xf32>, %perm: tensor<?xi32>, %w: tensor<?x2xf32>,
                            %logits: tensor<?x6xbf16>) -> (tensor<?x2xf32>, tensor<?x6xf32>, tensor<?x6xf32>) {
  // CHECK: moe.scatter_slots %{{.*}}, %{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi32>, tensor<?x2xf32>
  %dw = moe.scatter_slots %dsorted, %perm, %w : tensor<?xf32>, tensor<?xi32>, tensor<?x2xf32>
  // CHECK: moe.route_grad %{{.*}}, %{{.*}} : tensor<?x2xf32>, tensor<?x6xbf16>
  %d0 = moe.route_grad %dw, %logits : tensor<?x2xf32>, tensor<?x6xbf16>
  // CHECK: moe.route_grad %{{.*}}, %{{.*}} scoring sigmoid order softmax_then_topk renormalize null_experts 2 null_policy take_until_null :
  %d1 = moe.route_grad %dw, %logits scoring sigmoid order softmax_then_topk renormalize
          null_experts 2 null_policy take_until_null : tensor<?x2xf32>, tensor<?x6xbf16>
  return %dw, %d0, %d1 : tensor<?x2xf32>, tensor<?x6xf32>, tensor<?x6xf32>
}

// CHECK: shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}

// CHECK-LABEL: func @collectives
func.func @collectives(%p: tensor<?x64xf32>, %x: tensor<8x64xf32>, %y: tensor<32x64xf32>, %rows: tensor<?x64xf32>, %send: tensor<2xi32>)
    -> (tensor<?x64xf32>, tensor<16x64xf32>, tensor<32x64xf32>, tensor<8x64xf32>, tensor<?x64xf32>, tensor<2xi32>) {
  // CHECK: moe.psum %{{.*}} over @mesh ["expert"] : tensor<?x64xf32>
  %0 = moe.psum %p over @mesh ["expert"] : tensor<?x64xf32>
  // CHECK: moe.all_gather %{{.*}} over @mesh ["expert"] dim 0 : tensor<8x64xf32> -> tensor<16x64xf32>
  %1 = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<8x64xf32> -> tensor<16x64xf32>
  // CHECK: moe.all_gather %{{.*}} over @mesh ["data", "expert"] dim 0 : tensor<8x64xf32> -> tensor<32x64xf32>
  %2 = moe.all_gather %x over @mesh ["data", "expert"] dim 0 : tensor<8x64xf32> -> tensor<32x64xf32>
  // CHECK: moe.reduce_scatter %{{.*}} over @mesh ["data", "expert"] dim 0 : tensor<32x64xf32> -> tensor<8x64xf32>
  %3 = moe.reduce_scatter %y over @mesh ["data", "expert"] dim 0 : tensor<32x64xf32> -> tensor<8x64xf32>
  // CHECK: moe.all_to_all %{{.*}}, %{{.*}} over @mesh ["expert"] : tensor<?x64xf32>, tensor<2xi32> -> tensor<?x64xf32>
  %4, %5 = moe.all_to_all %rows, %send over @mesh ["expert"] : tensor<?x64xf32>, tensor<2xi32> -> tensor<?x64xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x64xf32>, tensor<16x64xf32>, tensor<32x64xf32>, tensor<8x64xf32>, tensor<?x64xf32>, tensor<2xi32>
}

// CHECK-LABEL: func @block
func.func @block(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %r: tensor<64x10xf32>,
                 %w13: tensor<8x64x32xf32>, %w1: tensor<8x64x16xf32>, %w3: tensor<8x64x16xf32>, %w2: tensor<8x16x64xf32>,
                 %sw13: tensor<64x48xf32>, %sw1: tensor<64x24xf32>, %sw3: tensor<64x24xf32>, %sw2: tensor<24x64xf32>)
    -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  // CHECK: moe.block %{{.*}} logits(%{{.*}} : tensor<?x8xf32>) gate_up(%{{.*}} : tensor<8x64x32xf32>) down(%{{.*}} : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  %0 = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  // CHECK: moe.block %{{.*}} router(%{{.*}} : tensor<64x10xf32>) gate_up(%{{.*}}, %{{.*}} : tensor<8x64x16xf32>, tensor<8x64x16xf32>) down(%{{.*}} : tensor<8x16x64xf32>)
  // CHECK-SAME: shared_gate_up(%{{.*}}, %{{.*}} : tensor<64x24xf32>, tensor<64x24xf32>) shared_down(%{{.*}} : tensor<24x64xf32>)
  // CHECK-SAME: top 8 scoring sigmoid order softmax_then_topk renormalize null_experts 2 null_policy take_until_null pack_strategy counting combine_strategy scatter preweight : tensor<?x64xf32>
  %1 = moe.block %x router(%r : tensor<64x10xf32>) gate_up(%w1, %w3 : tensor<8x64x16xf32>, tensor<8x64x16xf32>) down(%w2 : tensor<8x16x64xf32>)
         shared_gate_up(%sw1, %sw3 : tensor<64x24xf32>, tensor<64x24xf32>) shared_down(%sw2 : tensor<24x64xf32>)
         top 8 scoring sigmoid order softmax_then_topk renormalize null_experts 2 null_policy take_until_null
         pack_strategy counting combine_strategy scatter preweight : tensor<?x64xf32>
  // CHECK: moe.block {{.*}} shared_gate_up(%{{.*}} : tensor<64x48xf32>) shared_down
  %2 = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>)
         shared_gate_up(%sw13 : tensor<64x48xf32>) shared_down(%sw2 : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return %1, %2 : tensor<?x64xf32>, tensor<?x64xf32>
}

// The keywords after the operands come in any order and print in one; the
// defaults (groups 1, routed_scaling 1.0, ...) are left out.
// CHECK-LABEL: func @block_knobs_any_order
func.func @block_knobs_any_order(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>)
    -> tensor<?x64xf32> {
  // CHECK: down(%{{.*}} : tensor<8x16x64xf32>) top 2 scoring sigmoid order softmax_then_topk renormalize groups 4 topk_groups 2 routed_scaling 2.500000e+00 activation gpt_oss alpha 1.500000e+00 limit 3.000000e+00 interleaved {note = "kept"} : tensor<?x64xf32>
  %0 = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>)
         interleaved limit 3.0 routed_scaling 2.5 topk_groups 2 activation gpt_oss groups 4
         alpha 1.5 renormalize order softmax_then_topk scoring sigmoid top 2 {note = "kept"} : tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// CHECK-LABEL: func @int8
func.func @int8(%x: tensor<?x64xf32>, %w: tensor<6x64x32xf32>, %wb: tensor<6x64x32xbf16>, %sizes: tensor<6xi32>)
    -> (tensor<?x32xf32>, tensor<6x64x32xf32>, tensor<?x64xf32>, tensor<6xf32>) {
  // CHECK: %[[Q:.*]], %[[S:.*]] = moe.quantize %{{.*}} per_channel : tensor<6x64x32xf32>
  %q, %s = moe.quantize %w per_channel : tensor<6x64x32xf32>
  // CHECK: moe.quantize %{{.*}} per_expert : tensor<6x64x32xbf16>
  %qe, %se = moe.quantize %wb per_expert : tensor<6x64x32xbf16>
  // CHECK: moe.gmm %{{.*}}, %[[Q]], %{{.*}} scales(%[[S]] : tensor<6x32xf32>) : tensor<?x64xf32>, tensor<6x64x32xi8>, tensor<6xi32>
  %y = moe.gmm %x, %q, %sizes scales(%s : tensor<6x32xf32>) : tensor<?x64xf32>, tensor<6x64x32xi8>, tensor<6xi32>
  // CHECK: moe.dequantize %[[Q]], %[[S]] : tensor<6x64x32xi8>, tensor<6x32xf32>
  %d = moe.dequantize %q, %s : tensor<6x64x32xi8>, tensor<6x32xf32>
  // CHECK: moe.fake_quant %{{.*}} : tensor<?x64xf32>
  %f = moe.fake_quant %x : tensor<?x64xf32>
  return %y, %d, %f, %se : tensor<?x32xf32>, tensor<6x64x32xf32>, tensor<?x64xf32>, tensor<6xf32>
}
