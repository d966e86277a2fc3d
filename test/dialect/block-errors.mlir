// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_hidden(%x: tensor<?x?xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{hidden size (x dimension 1) must be static}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x?xf32>
  return
}

// -----

func.func @dynamic_down(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %d: tensor<?x16x64xf32>) {
  // expected-error @+1 {{expert down weights must have a static shape, got 'tensor<?x16x64xf32>'}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%d : tensor<?x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @down_hidden(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %d: tensor<8x16x32xf32>) {
  // expected-error @+1 {{hidden size of expert down weights (dimension 2) (32) does not match hidden size of x (64)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%d : tensor<8x16x32xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @down_element(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %d: tensor<8x16x64xbf16>) {
  // expected-error @+1 {{expert down weights element type 'bf16' does not match x element type 'f32'}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%d : tensor<8x16x64xbf16>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @three_gate_up(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w1: tensor<8x64x16xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expects expert gate/up weights as one fused w13 or two (w1, w3), got 3}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w1, %w1, %w1 : tensor<8x64x16xf32>, tensor<8x64x16xf32>, tensor<8x64x16xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @w13_experts(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %g: tensor<7x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expert w13 expert count (7) does not match expert count of down weights (8)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%g : tensor<7x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @w13_hidden(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %g: tensor<8x32x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expert w13 hidden size (32) does not match hidden size of x (64)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%g : tensor<8x32x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @w13_dynamic_width(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %g: tensor<8x64x?xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expert w13 width must be static}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%g : tensor<8x64x?xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @w13_width(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %g: tensor<8x64x16xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expert w13 width (16) does not match 2 x mlp size of down weights (32)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%g : tensor<8x64x16xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @w1_width(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %g: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expert w1/w3 width (32) does not match mlp size of down weights (16)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%g, %g : tensor<8x64x32xf32>, tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @w13_element(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %g: tensor<8x64x32xbf16>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expert w13 element type 'bf16' does not match x element type 'f32'}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%g : tensor<8x64x32xbf16>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @two_routers(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %r: tensor<64x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expects exactly one router input: logits(...) or router(...)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) router(%r : tensor<64x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @no_router(%x: tensor<?x64xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{expects exactly one router input: logits(...) or router(...)}}
  %y = moe.block %x gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @logits_tokens(%x: tensor<5x64xf32>, %l: tensor<4x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{token count of router logits (4) does not match token count of x (5)}}
  %y = moe.block %x logits(%l : tensor<4x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<5x64xf32>
  return
}

// -----

func.func @router_rows(%x: tensor<?x64xf32>, %r: tensor<32x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{router weight rows (32) does not match hidden size of x (64)}}
  %y = moe.block %x router(%r : tensor<32x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @router_element(%x: tensor<?x64xf32>, %r: tensor<64x8xbf16>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{router weight element type 'bf16' does not match x element type 'f32'}}
  %y = moe.block %x router(%r : tensor<64x8xbf16>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @router_config(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{top-k (9) must be in [1, 8] (router columns)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 9 : tensor<?x64xf32>
  return
}

// -----

func.func @router_experts(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>) {
  // expected-error @+1 {{router scores 6 real experts (8 columns - 2 null experts) but the expert weights hold 8}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) top 2 null_experts 2 : tensor<?x64xf32>
  return
}

// -----

func.func @shared_without_down(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x48xf32>) {
  // expected-error @+1 {{shared expert needs both gate/up and down weights}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<64x48xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @down_without_shared(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<24x64xf32>) {
  // expected-error @+1 {{shared expert needs both gate/up and down weights}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_down(%s : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @three_shared(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x24xf32>, %sd: tensor<24x64xf32>) {
  // expected-error @+1 {{expects shared gate/up weights as one fused sw13 or two (sw1, sw3), got 3}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s, %s, %s : tensor<64x24xf32>, tensor<64x24xf32>, tensor<64x24xf32>) shared_down(%sd : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @shared_dynamic(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x48xf32>, %sd: tensor<?x64xf32>) {
  // expected-error @+1 {{shared expert size must be static}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<64x48xf32>) shared_down(%sd : tensor<?x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @shared_down_hidden(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x48xf32>, %sd: tensor<24x32xf32>) {
  // expected-error @+1 {{hidden size of shared down weights (32) does not match hidden size of x (64)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<64x48xf32>) shared_down(%sd : tensor<24x32xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @shared_down_element(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x48xf32>, %sd: tensor<24x64xbf16>) {
  // expected-error @+1 {{shared down weights element type 'bf16' does not match x element type 'f32'}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<64x48xf32>) shared_down(%sd : tensor<24x64xbf16>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @sw13_hidden(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<32x48xf32>, %sd: tensor<24x64xf32>) {
  // expected-error @+1 {{shared sw13 hidden size (32) does not match hidden size of x (64)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<32x48xf32>) shared_down(%sd : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @sw13_dynamic(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x?xf32>, %sd: tensor<24x64xf32>) {
  // expected-error @+1 {{shared sw13 width must be static}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<64x?xf32>) shared_down(%sd : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @sw13_width(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x24xf32>, %sd: tensor<24x64xf32>) {
  // expected-error @+1 {{shared sw13 width (24) does not match 2 x shared size of down weights (48)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<64x24xf32>) shared_down(%sd : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @sw1_width(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x48xf32>, %sd: tensor<24x64xf32>) {
  // expected-error @+1 {{shared sw1/sw3 width (48) does not match shared size of down weights (24)}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s, %s : tensor<64x48xf32>, tensor<64x48xf32>) shared_down(%sd : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

func.func @sw13_element(%x: tensor<?x64xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x64x32xf32>, %w2: tensor<8x16x64xf32>, %s: tensor<64x48xbf16>, %sd: tensor<24x64xf32>) {
  // expected-error @+1 {{shared sw13 element type 'bf16' does not match x element type 'f32'}}
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x64x32xf32>) down(%w2 : tensor<8x16x64xf32>) shared_gate_up(%s : tensor<64x48xbf16>) shared_down(%sd : tensor<24x64xf32>) top 2 : tensor<?x64xf32>
  return
}

// -----

// expected-error@+1 {{'moe.adjoint' must be a unit attribute}}
%0 = arith.constant {moe.adjoint = 1 : i64} 0.0 : f32

// -----

// expected-error@+1 {{'moe.remat' must be a dictionary of policy, kept_bytes and recomputed_flops}}
func.func @f() attributes {moe.remat = {policy = "none"}} {
  return
}

// -----

// expected-error@+1 {{'moe.memory_plan' must be a dictionary of integers (bytes and counts)}}
func.func @f() attributes {moe.memory_plan = {arena_bytes = "big"}} {
  return
}

// -----

// expected-error@+1 {{'moe.stages' must be an array of stage names, on a function}}
func.func @f() attributes {moe.stages = ["route", 3]} {
  return
}

// -----

// expected-error@+1 {{'moe.stages' must be an array of stage names, on a function}}
%0 = arith.constant {moe.stages = ["route"]} 0.0 : f32
