// RUN: moe-opt %s -moe-partition="mesh=data=2,expert=4" -moe-generate-backward | FileCheck %s
// RUN: moe-opt %s -moe-partition="mesh=expert=4" -moe-generate-backward=loss=cotangent | FileCheck %s --check-prefix=COT

// The backward of a per-shard function (moe-partition) is that of the
// global loss. On data=2 x expert=4 with compact EP: y is split over data
// and replicated over expert. The loss adds the local sums of squares over
// data and divides by the global element count (32 x 16 x 2); each of the
// 4 replicas of y seeds a quarter of dy = 2 y / (T H); the gradient of
// each argument is summed over the axes it is replicated on (x: expert;
// the expert weights: data; the shared expert's weights: both) and placed
// like its argument.
// CHECK-LABEL: func.func @block_forward_backward(
// CHECK-SAME:    -> (tensor<f32> {moe.split = []}, tensor<32x16xf32> {moe.split = {{\[\["data"\], \[\]\]}}}, tensor<2x16x24xf32> {moe.split = {{\[\["expert"\], \[\], \[\]\]}}}, tensor<2x12x16xf32> {moe.split = {{\[\["expert"\], \[\], \[\]\]}}}, tensor<16x8xf32> {moe.split = {{\[\[\], \[\]\]}}}, tensor<4x16xf32> {moe.split = {{\[\[\], \[\]\]}}})
// CHECK:         %[[Y:.*]] = moe.psum %{{.*}} over @mesh ["expert"] : tensor<32x16xf32>
// CHECK:         %[[LOCAL:.*]] = tensor.from_elements %{{.*}} : tensor<1xf32>
// CHECK:         %[[GLOBAL:.*]] = moe.psum %[[LOCAL]] over @mesh ["data"] : tensor<1xf32>
// CHECK:         %[[SHARDS:.*]] = arith.constant 2 : index
// CHECK:         arith.muli %{{.*}}, %[[SHARDS]] : index
// CHECK:         %[[HALF:.*]] = arith.constant {moe.adjoint} 5.000000e-01 : f32
// CHECK:         arith.mulf %{{.*}}, %[[HALF]] {moe.adjoint} : f32
// CHECK:         moe.psum %{{.*}} over @mesh ["expert"] {moe.adjoint} : tensor<32x16xf32>
// CHECK:         %[[DX:.*]] = moe.psum %{{.*}} over @mesh ["expert"] {moe.adjoint} : tensor<32x16xf32>
// CHECK:         %[[DW13:.*]] = moe.psum %{{.*}} over @mesh ["data"] {moe.adjoint} : tensor<2x16x24xf32>
// CHECK:         %[[DW2:.*]] = moe.psum %{{.*}} over @mesh ["data"] {moe.adjoint} : tensor<2x12x16xf32>
// CHECK:         %[[DS13:.*]] = moe.psum %{{.*}} over @mesh ["data", "expert"] {moe.adjoint} : tensor<16x8xf32>
// CHECK:         %[[DS2:.*]] = moe.psum %{{.*}} over @mesh ["data", "expert"] {moe.adjoint} : tensor<4x16xf32>
// CHECK:         return %{{.*}}, %[[DX]], %[[DW13]], %[[DW2]], %[[DS13]], %[[DS2]] :

// With the caller's cotangent (replicated like y over expert=4), each
// replica seeds a quarter of it; the cotangent argument is placed like y.
// COT-LABEL: func.func @block_forward_backward(
// COT-SAME:    %[[DY:arg6]]: tensor<64x16xf32> {moe.split = {{\[\[\], \[\]\]}}})
// COT:         %[[QUARTER:.*]] = arith.constant {moe.adjoint} 2.500000e-01 : f32
// COT:         %[[FILL:.*]] = linalg.fill {moe.adjoint} ins(%[[QUARTER]] : f32)
// COT:         arith.mulf %[[DY]], %[[FILL]] {moe.adjoint} : tensor<64x16xf32>
func.func @block(%x: tensor<64x16xf32>, %l: tensor<64x8xf32>, %w13: tensor<8x16x24xf32>,
                 %w2: tensor<8x12x16xf32>, %s13: tensor<16x8xf32>, %s2: tensor<4x16xf32>) -> tensor<64x16xf32> {
  %y = moe.block %x logits(%l : tensor<64x8xf32>) gate_up(%w13 : tensor<8x16x24xf32>)
         down(%w2 : tensor<8x12x16xf32>) shared_gate_up(%s13 : tensor<16x8xf32>)
         shared_down(%s2 : tensor<4x16xf32>) top 2 : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}
