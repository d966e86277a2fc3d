// RUN: moe-opt %s -moe-mark-stages | FileCheck %s
// A second run marks nothing more.
// RUN: moe-opt %s -moe-mark-stages -moe-mark-stages | FileCheck %s --check-prefix=TWICE
// The backward of a block: its ops named bwd, the transposed gmm gmm^T.
// RUN: moe-opt %s -moe-generate-backward -moe-mark-stages | FileCheck %s --check-prefix=BWD
// Only the functions asked for; one that is not there is an error.
// RUN: moe-opt %s -moe-mark-stages=functions=fused | FileCheck %s --check-prefix=ONLY
// RUN: not moe-opt %s -moe-mark-stages=functions=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// A function of the runtime mark's name and another type is an error.
// RUN: not moe-opt %S/Inputs/mark-stages-bad-mark.mlir -moe-mark-stages 2>&1 | FileCheck %s --check-prefix=BADMARK
// BADMARK: error: moe-mark-stages: @moert_stage_mark is '(f32) -> ()', but the runtime's stage mark is '(i64) -> ()'

// A block expanded, each op a stage: the first mark at the entry (the
// constants before route are timed too), one before each op, -1 before
// the return. The two elementwise adds are one stage.
// CHECK: func.func private @moert_stage_mark(i64)
// CHECK-LABEL: func.func @plain
// CHECK-SAME: moe.stages = ["route 16x2", "pack 32x64", "gmm 32x32", "swiglu 32x16", "gmm 32x64", "combine 16x64", "elementwise"]
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @moert_stage_mark(%[[C0]]) : (i64) -> ()
// CHECK-NEXT: moe.route
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @moert_stage_mark(%[[C1]])
// CHECK-NEXT: moe.pack
// CHECK: call @moert_stage_mark
// CHECK-NEXT: moe.gmm
// CHECK: call @moert_stage_mark
// CHECK-NEXT: moe.swiglu
// CHECK: call @moert_stage_mark
// CHECK-NEXT: moe.gmm
// CHECK: call @moert_stage_mark
// CHECK-NEXT: moe.combine
// CHECK: %[[C6:.*]] = arith.constant 6 : i64
// CHECK-NEXT: call @moert_stage_mark(%[[C6]])
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[END:.*]] = arith.constant -1 : i64
// CHECK-NEXT: call @moert_stage_mark(%[[END]])
// CHECK-NEXT: return
// TWICE-LABEL: func.func @plain
// TWICE-COUNT-8: call @moert_stage_mark
// TWICE-NOT: call @moert_stage_mark
// TWICE: return
// BWD-LABEL: func.func @plain_forward_backward
// BWD-SAME: moe.stages = ["route 16x2", "pack 32x64", "gmm 32x32", "swiglu 32x16", "gmm 32x64", "combine 16x64", "elementwise",
// BWD-SAME: "fill scalar", "reduce scalar", "elementwise", "bwd fill 16x64", "bwd elementwise", "bwd gather_rows 32x64", "bwd scale_rows 32x64",
// BWD-SAME: "bwd gmm^T 32x16", "bwd tgmm 4x16x64", "bwd swiglu_grad 32x32", "bwd gmm^T 32x64", "bwd tgmm 4x64x32", "bwd combine 16x64", "bwd elementwise"]
// ONLY-LABEL: func.func @plain
// ONLY-NOT: moe.stages
// ONLY-NOT: call @moert_stage_mark
// MISSING: error: moe-mark-stages: no function @missing to mark
func.func @plain(%x: tensor<16x64xf32>, %ids: tensor<16x2xi32>, %w: tensor<16x2xf32>, %l: tensor<16x4xf32>,
                 %w13: tensor<4x64x32xf32>, %w2: tensor<4x16x64xf32>) -> tensor<16x64xf32> {
  %i, %rw = moe.route %l top 2 : tensor<16x4xf32>
  %rows, %sw, %perm, %sizes = moe.pack %x, %i, %rw experts 4 : tensor<16x64xf32>, tensor<16x2xi32>, tensor<16x2xf32>
  %h = moe.gmm %rows, %w13, %sizes : tensor<32x64xf32>, tensor<4x64x32xf32>, tensor<4xi32>
  %a = moe.swiglu %h : tensor<32x32xf32>
  %d = moe.gmm %a, %w2, %sizes : tensor<32x16xf32>, tensor<4x16x64xf32>, tensor<4xi32>
  %y = moe.combine %d, %perm, %rw : tensor<32x64xf32>, tensor<32xi32>, tensor<16x2xf32>
  %s = arith.addf %y, %x : tensor<16x64xf32>
  %t = arith.addf %s, %x : tensor<16x64xf32>
  return %t : tensor<16x64xf32>
}

// A gmm whose lowering fuses the gather of its rows and the SwiGLU: one
// stage, where the kernel runs (the SwiGLU's place: the first stage, so
// its mark is at the entry), and none for the gather and the gmm.
// CHECK-LABEL: func.func @fused
// CHECK-SAME: moe.stages = ["gather+gmm+swiglu 32x32", "gmm 32x64"]
// CHECK: call @moert_stage_mark
// CHECK-NEXT: moe.gather_rows
// CHECK-NEXT: moe.gmm
// CHECK-NEXT: moe.swiglu
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @moert_stage_mark(%[[C1]])
// CHECK-NEXT: moe.gmm
// ONLY-LABEL: func.func @fused
// ONLY-SAME: moe.stages = ["gather+gmm+swiglu 32x32", "gmm 32x64"]
func.func @fused(%x: tensor<16x64xf32>, %perm: tensor<32xi32>, %sizes: tensor<4xi32>,
                 %w13: tensor<4x64x32xf32>, %w2: tensor<4x16x64xf32>) -> tensor<32x64xf32> {
  %rows = moe.gather_rows %x, %perm top 2 : tensor<16x64xf32>, tensor<32xi32>
  %h = moe.gmm %rows, %w13, %sizes {moe.lowering = #moe.gmm_lowering<kernels = ["fma"], mr = 2, nv = 2, kc = 64, nc = 32, mc = 32, fuse = ["gather", "swiglu"]>} : tensor<32x64xf32>, tensor<4x64x32xf32>, tensor<4xi32>
  %a = moe.swiglu %h : tensor<32x32xf32>
  %d = moe.gmm %a, %w2, %sizes : tensor<32x16xf32>, tensor<4x16x64xf32>, tensor<4xi32>
  return %d : tensor<32x64xf32>
}

// A function that calls one with a body (a prepared block's @f calling its
// halves) is timed through its callee: not marked.
// CHECK-LABEL: func.func @caller
// CHECK-NOT: moe.stages
// CHECK-NOT: call @moert_stage_mark
// CHECK: call @fused
// CHECK-NOT: call @moert_stage_mark
// CHECK: return
func.func @caller(%x: tensor<16x64xf32>, %perm: tensor<32xi32>, %sizes: tensor<4xi32>,
                  %w13: tensor<4x64x32xf32>, %w2: tensor<4x16x64xf32>) -> tensor<32x64xf32> {
  %d = func.call @fused(%x, %perm, %sizes, %w13, %w2) : (tensor<16x64xf32>, tensor<32xi32>, tensor<4xi32>, tensor<4x64x32xf32>, tensor<4x16x64xf32>) -> tensor<32x64xf32>
  return %d : tensor<32x64xf32>
}

// More than one block: left alone (stages in layout order need not run in
// that order).
// CHECK-LABEL: func.func @branches
// CHECK-NOT: moe.stages
// CHECK-NOT: call @moert_stage_mark
// CHECK: return
func.func @branches(%x: tensor<16x64xf32>, %c: i1) -> tensor<16x64xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  %y = arith.addf %x, %x : tensor<16x64xf32>
  return %y : tensor<16x64xf32>
^b:
  return %x : tensor<16x64xf32>
}
