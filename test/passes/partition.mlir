// RUN: moe-opt %s -moe-partition="mesh=data=2" | FileCheck %s --check-prefix=DP
// RUN: moe-opt %s -moe-partition="mesh=data=2,expert=2 ep-dispatch=compact" | FileCheck %s --check-prefix=COMPACT
// RUN: moe-opt %s -moe-partition="mesh=expert=2 ep-dispatch=compact capacity-factor=1.25 capacity-round=64" | FileCheck %s --check-prefix=CAP
// RUN: moe-opt %s -moe-partition="mesh=expert=2 ep-dispatch=dense" | FileCheck %s --check-prefix=DENSE
// RUN: moe-opt %s -moe-partition="mesh=data=2,expert=2 ep-dispatch=ring" | FileCheck %s --check-prefix=RING
// RUN: moe-opt %s -moe-partition="mesh=expert=4 ep-dispatch=a2a" | FileCheck %s --check-prefix=A2A

func.func @block(%x: tensor<64x16xf32>, %l: tensor<64x8xf32>, %w13: tensor<8x16x24xf32>,
                 %w2: tensor<8x12x16xf32>, %sw13: tensor<16x32xf32>, %sw2: tensor<16x16xf32>)
    -> tensor<64x16xf32> {
  %y = moe.block %x logits(%l : tensor<64x8xf32>) gate_up(%w13 : tensor<8x16x24xf32>)
         down(%w2 : tensor<8x12x16xf32>) shared_gate_up(%sw13 : tensor<16x32xf32>)
         shared_down(%sw2 : tensor<16x16xf32>) top 2 preweight : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// Data parallel: tokens split over data, weights whole, the same block.
// DP: shard.grid @mesh(shape = 2) {moe.axes = ["data"]}
// DP-LABEL: func.func @block(
// DP-SAME: %{{.*}}: tensor<32x16xf32> {moe.split = {{\[}}["data"], []]}
// DP-SAME: %{{.*}}: tensor<32x8xf32> {moe.split = {{\[}}["data"], []]}
// DP-SAME: %{{.*}}: tensor<8x16x24xf32> {moe.split = {{\[}}[], [], []]}
// DP-SAME: -> (tensor<32x16xf32> {moe.split = {{\[}}["data"], []]})
// DP-SAME: attributes {moe.mesh = @mesh, moe.parallel = "dp"}
// DP: moe.block {{.*}} top 2 {{.*}}: tensor<32x16xf32>
// DP-NOT: moe.psum

// Compact: tokens over data only, experts over expert; ids shifted by the
// shard's first expert; only the local experts' rows packed; psum closes.
// COMPACT: shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
// COMPACT-LABEL: func.func @block(
// COMPACT-SAME: tensor<32x16xf32> {moe.split = {{\[}}["data"], []]}
// COMPACT-SAME: tensor<4x16x24xf32> {moe.split = {{\[}}["expert"], [], []]}
// COMPACT-SAME: tensor<16x32xf32> {moe.split = {{\[}}[], []]}
// COMPACT-SAME: moe.parallel = "ep-compact"
// COMPACT: %[[IDS:.*]], %[[W:.*]] = moe.route
// COMPACT: %[[SHARD:.*]] = shard.process_multi_index on @mesh axes = [1] : index
// COMPACT: %[[LOCAL:.*]] = arith.subi %[[IDS]]
// COMPACT: moe.pack %{{.*}}, %[[LOCAL]], %[[W]] experts 8 local 4 :
// COMPACT: %[[PARTIAL:.*]] = moe.combine
// COMPACT: %[[SUM:.*]] = moe.psum %[[PARTIAL]] over @mesh ["expert"]
// COMPACT: linalg.matmul
// COMPACT: arith.addf %[[SUM]]

// A capacity factor: max(L, ceil(1.25 * 128 / 2)) = 80 rows, rounded to 128.
// CAP: func.func private @moert_count_dropped_rows(i64, i64)
// CAP: moe.pack {{.*}} experts 8 local 4 capacity 128
// The rows routed to the local experts are counted, and those past the
// capacity reported to the runtime.
// CAP: %[[ROUTED:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CAP: %[[OVER:.*]] = arith.subi %[[ROUTED]], %c128_i64 : i64
// CAP: %[[DROPPED:.*]] = arith.maxsi %[[OVER]], %{{.*}} : i64
// CAP: call @moert_count_dropped_rows(%[[ROUTED]], %[[DROPPED]]) : (i64, i64) -> ()

// Dense masked: all rows on every shard, a zero dummy expert, masked weights.
// DENSE: arith.select
// DENSE: %[[MASKED:.*]] = arith.select
// DENSE: tensor.concat {{.*}} -> tensor<5x16x24xf32>
// DENSE: tensor.concat {{.*}} -> tensor<5x12x16xf32>
// DENSE: moe.pack %{{.*}}, %{{.*}}, %[[MASKED]] experts 5 :
// DENSE: moe.psum

// Ring: tokens over data and expert; gather, local experts, reduce-scatter.
// RING-LABEL: func.func @block(
// RING-SAME: tensor<16x16xf32> {moe.split = {{\[}}["data", "expert"], []]}
// RING-SAME: -> (tensor<16x16xf32> {moe.split = {{\[}}["data", "expert"], []]})
// RING: moe.all_gather %arg0 over @mesh ["expert"] dim 0 : tensor<16x16xf32> -> tensor<32x16xf32>
// RING: moe.all_gather %arg1 over @mesh ["expert"] dim 0
// RING: moe.pack {{.*}} experts 8 local 4
// RING: moe.reduce_scatter {{.*}} over @mesh ["expert"] dim 0 : tensor<32x16xf32> -> tensor<16x16xf32>

// All-to-all: rows to their experts' shards with local id + 1, computed
// unweighted there, back, weighted at home. Worst-case capacity 4 x 32 rows.
// A2A: %[[ROWS:[a-z_0-9]+]], %{{[a-z_0-9]+}}, %[[PERM:[a-z_0-9]+]], %[[SIZES:[a-z_0-9]+]] = moe.pack %arg0, %{{.*}}, %{{.*}} experts 8 :
// A2A: tensor.expand_shape %[[SIZES]] {{.*}} into tensor<4x2xi32>
// A2A: %[[SEND:.*]] = linalg.reduce
// A2A: moe.gather_rows
// A2A: %[[RECV:[a-z_0-9]+]], %[[COUNTS:[a-z_0-9]+]] = moe.all_to_all %[[ROWS]], %[[SEND]] over @mesh ["expert"] : tensor<32x16xf32>, tensor<4xi32> -> tensor<128x16xf32>
// A2A: moe.all_to_all {{.*}} -> tensor<128x1xi32>
// A2A: moe.pack %[[RECV]], {{.*}} experts 3 offset 1 local 2
// A2A: moe.combine {{.*}} preweighted
// A2A: moe.all_to_all %{{.*}}, %[[COUNTS]] over @mesh ["expert"] : tensor<128x16xf32>, tensor<4xi32> -> tensor<32x16xf32>
// A2A: moe.combine %{{.*}}, %[[PERM]], %{{.*}} :
