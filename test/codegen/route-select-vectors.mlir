// RUN: moe-opt %s -moe-lower-to-loops | FileCheck %s

// moe.route selects its K columns 16 at a time (RouteLowering.cpp,
// selectTopK): the logits copied once into whole vectors (60 columns: 4
// vectors, the last 4 lanes padding), each free column holding its id and a
// taken or padding one INT32_MAX; per slot the largest free non-NaN value
// and the lowest free id (a min, ties to the lower id), then the lowest free
// id holding that value, unless the first free value is a NaN (the scan
// keeps it). Whether it picks what the scan picks: test/unit/NumericsTest.cpp
// (RouteNumerics.SelectionOfTiesInfinitiesAndNaNsMatchesTheScan).
// CHECK-LABEL: func @route_60
// CHECK-DAG: %[[NONE:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG: %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xi32>
// CHECK: %[[VALUES:.*]] = memref.alloca() {{.*}} : memref<64xf32>
// CHECK: %[[FREE_ID:.*]] = memref.alloca() {{.*}} : memref<64xi32>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: vector.store %{{.*}}, %[[FREE_ID]]
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     vector.load %[[VALUES]][
// CHECK:     vector.load %[[FREE_ID]][
// CHECK:     arith.cmpf ord
// CHECK:     arith.maxnumf %{{.*}} : vector<16xf32>
// CHECK:     arith.minsi %{{.*}} : vector<16xi32>
// CHECK:   vector.reduction <maxnumf>
// CHECK:   vector.reduction <minsi>
// CHECK:   scf.for
// CHECK:     arith.cmpf oeq
// CHECK:   vector.reduction <minsi>
// CHECK:   memref.load %[[VALUES]][
// CHECK:   arith.cmpf uno
// CHECK:   arith.select
// CHECK:   memref.store %[[NONE]], %[[FREE_ID]][
func.func @route_60(%l: tensor<?x60xf32>) -> (tensor<?x8xi32>, tensor<?x8xf32>) {
  %ids, %w = moe.route %l top 8 : tensor<?x60xf32>
  return %ids, %w : tensor<?x8xi32>, tensor<?x8xf32>
}
