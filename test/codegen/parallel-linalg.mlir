// RUN: moe-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(moe-parallel-linalg))' | FileCheck %s
// RUN: moe-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(moe-parallel-linalg{min-elements=1}))' | FileCheck %s --check-prefix=SMALL

// An elementwise op over the tokens (a size known at run time): a parallel
// loop over its dimensions.
// CHECK-LABEL: func @squares
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
func.func @squares(%y: memref<?x64xf32>, %out: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<?x64xf32>) outs(%out : memref<?x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// The loss's sum into a 0-d buffer: rows in parallel, each row's sum (its
// additions reassociable) combined by an scf.reduce, then added to the
// buffer's value.
// CHECK-LABEL: func @sum
// CHECK: %[[ROWS:.*]] = memref.dim %[[IN:.*]], %c0
// CHECK: %[[TOTAL:.*]] = scf.parallel (%[[R:.*]]) = (%c0{{.*}}) to (%[[ROWS]]) step (%c1{{.*}}) init (%{{.*}}) -> f32
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.load %[[IN]][%[[R]], %{{.*}}]
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: scf.reduce(%{{.*}} : f32)
// CHECK: ^bb0(%[[L:.*]]: f32, %[[RR:.*]]: f32):
// CHECK: %[[BOTH:.*]] = arith.addf %[[L]], %[[RR]] : f32
// CHECK: scf.reduce.return %[[BOTH]]
// CHECK: %[[INIT:.*]] = memref.load %[[OUT:.*]][] : memref<f32>
// CHECK: %[[SUM:.*]] = arith.addf %[[INIT]], %[[TOTAL]]
// CHECK: memref.store %[[SUM]], %[[OUT]][] : memref<f32>
// CHECK-NOT: linalg.reduce
func.func @sum(%in: memref<?x64xf32>, %out: memref<f32>) {
  linalg.reduce ins(%in : memref<?x64xf32>) outs(%out : memref<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Small static ops stay serial (a parallel region costs more than they
// do), unless min-elements says otherwise; an op inside a parallel loop
// stays as it is.
// CHECK-LABEL: func @small
// CHECK: linalg.fill
// SMALL-LABEL: func @small
// SMALL: scf.parallel
// SMALL-NOT: linalg.fill
func.func @small(%out: memref<4x4xf32>) {
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%out : memref<4x4xf32>)
  return
}

// -----

// CHECK-LABEL: func @nested
// SMALL-LABEL: func @nested
// CHECK: scf.parallel
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<?x64xf32>)
// CHECK-NOT: scf.parallel
func.func @nested(%out: memref<?x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    linalg.fill ins(%c : f32) outs(%out : memref<?x64xf32>)
    scf.reduce
  }
  return
}

// -----

// The router's matmul as moe-lower-to-loops orders it (rows, depth,
// columns): a reduction before a parallel dimension would start the
// threads once per (row, depth) pair; it stays a serial loop nest. So does
// an op inside a serial loop.
// CHECK-LABEL: func @router_matmul
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
// CHECK: linalg.fill
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @router_matmul(%x: memref<?x64xf32>, %w: memref<64x8xf32>, %logits: memref<?x8xf32>,
                         %big: memref<512x512xf32>, %n: index) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<?x64xf32>, memref<64x8xf32>) outs(%logits : memref<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    linalg.fill ins(%c : f32) outs(%big : memref<512x512xf32>)
  }
  return
}
