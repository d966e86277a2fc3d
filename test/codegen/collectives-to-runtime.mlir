// The collectives and the shard indices become calls into the sharded
// runtime (runtime/ShardComm.h) on contiguous rank-1 buffers; the grid and
// the placement attributes are gone after.
// RUN: moe-opt %s -moe-lower-to-loops | FileCheck %s

// CHECK-NOT: shard.grid
// CHECK-DAG: func.func private @moert_all_reduce_sum_f32(memref<?xf32>, i64, i64)
// CHECK-DAG: func.func private @moert_all_gather_f32(memref<?xf32>, memref<?xf32>, i64, i64)
// CHECK-DAG: func.func private @moert_reduce_scatter_sum_bf16(memref<?xbf16>, memref<?xbf16>, i64, i64)
// CHECK-DAG: func.func private @moert_all_to_all_i32(memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, i64, i64, i64)
// CHECK-DAG: func.func private @moert_mesh_coordinate(i64, i64, i64) -> i64
shard.grid @mesh(shape = 2x3) {moe.axes = ["data", "expert"]}

// CHECK-LABEL: func.func @psum(
// CHECK-NOT: moe.mesh
// CHECK: memref.copy
// CHECK: memref.collapse_shape
// Axes code: expert (1) then the end mark 0xF: 0xF1 = 241; groups of 3.
// CHECK: %[[CODE:.*]] = arith.constant 241 : i64
// CHECK: %[[GROUP:.*]] = arith.constant 3 : i64
// CHECK: call @moert_all_reduce_sum_f32({{.*}}, %[[CODE]], %[[GROUP]])
func.func @psum(%x: tensor<4x5xf32> {moe.split = [["data"], []]}) -> tensor<4x5xf32>
    attributes {moe.mesh = @mesh, moe.parallel = "ep-compact"} {
  %0 = moe.psum %x over @mesh ["expert"] : tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// Both axes, expert listed first: 0xF01 = 3841, groups of 6.
// CHECK-LABEL: func.func @gather_dim0(
// CHECK: arith.constant 3841 : i64
// CHECK: arith.constant 6 : i64
// CHECK: call @moert_all_gather_f32
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @gather_dim0(%x: tensor<2x5xf32>) -> tensor<12x5xf32> {
  %0 = moe.all_gather %x over @mesh ["expert", "data"] dim 0 : tensor<2x5xf32> -> tensor<12x5xf32>
  return %0 : tensor<12x5xf32>
}

// Along dimension 1 the gathered blocks are reordered after the call.
// CHECK-LABEL: func.func @gather_dim1(
// CHECK: call @moert_all_gather_f32
// CHECK: scf.parallel
func.func @gather_dim1(%x: tensor<2x5xf32>) -> tensor<2x15xf32> {
  %0 = moe.all_gather %x over @mesh ["expert"] dim 1 : tensor<2x5xf32> -> tensor<2x15xf32>
  return %0 : tensor<2x15xf32>
}

// And before it for a reduce-scatter.
// CHECK-LABEL: func.func @scatter_dim1(
// CHECK: scf.parallel
// CHECK: call @moert_reduce_scatter_sum_bf16
func.func @scatter_dim1(%x: tensor<2x6xbf16>) -> tensor<2x3xbf16> {
  %0 = moe.reduce_scatter %x over @mesh ["data"] dim 1 : tensor<2x6xbf16> -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// CHECK-LABEL: func.func @ragged(
// CHECK: call @moert_all_to_all_i32
func.func @ragged(%rows: tensor<8x1xi32>, %send: tensor<3xi32>) -> (tensor<24x1xi32>, tensor<3xi32>) {
  %r, %c = moe.all_to_all %rows, %send over @mesh ["expert"] : tensor<8x1xi32>, tensor<3xi32> -> tensor<24x1xi32>
  return %r, %c : tensor<24x1xi32>, tensor<3xi32>
}

// Axis 1 of a grid of 2 axes with 3 shards on it.
// CHECK-LABEL: func.func @index(
// CHECK: %[[AXIS:.*]] = arith.constant 1 : i64
// CHECK: %[[SIZE:.*]] = arith.constant 3 : i64
// CHECK: %[[RANK:.*]] = arith.constant 2 : i64
// CHECK: call @moert_mesh_coordinate(%[[AXIS]], %[[SIZE]], %[[RANK]])
func.func @index() -> index {
  %i = shard.process_multi_index on @mesh axes = [1] : index
  return %i : index
}
