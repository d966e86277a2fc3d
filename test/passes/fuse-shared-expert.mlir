// RUN: moe-opt %s -moe-expand-block -moe-fuse-shared-expert -split-input-file | FileCheck %s --check-prefix=MATMUL
// RUN: moe-opt %s '-moe-fuse-shared-expert=mode=grouped' -split-input-file | FileCheck %s --check-prefix=GROUPED
// RUN: not moe-opt %s '-moe-fuse-shared-expert=mode=dense' -split-input-file 2>&1 | FileCheck %s --check-prefix=BADMODE

// BADMODE: moe-fuse-shared-expert: mode must be 'matmul' or 'grouped', got 'dense'

// mode=matmul: the shared gate and up matmuls become one against [sw1 | sw3].
// MATMUL-LABEL: func @shared
// MATMUL: %[[SW13:.*]] = tensor.concat dim(1) %arg4, %arg5 : (tensor<16x30xf32>, tensor<16x30xf32>) -> tensor<16x60xf32>
// MATMUL: %[[H:.*]] = linalg.matmul ins(%arg0, %[[SW13]] : tensor<?x16xf32>, tensor<16x60xf32>)
// MATMUL: moe.swiglu %[[H]] : tensor<?x60xf32>
// MATMUL-COUNT-1: linalg.matmul ins(%{{.*}}, %arg6

// mode=grouped: S = 30 over M = 12 is 3 extra experts (30 padded to 36):
// every token takes experts 4, 5, 6 with weight 1, null ids move past them,
// and one gmm over 7 experts computes routed and shared work.
// GROUPED-LABEL: func @shared
// GROUPED-NOT: linalg.matmul
// GROUPED: %[[IDS:.*]], %[[W:.*]] = moe.route %arg1 top 2 null_experts 2 : tensor<?x6xf32>
// GROUPED: arith.cmpi sge, %[[IDS]]
// GROUPED: tensor.generate
// GROUPED: %[[ALLIDS:.*]] = tensor.concat dim(1) {{.*}} -> tensor<?x5xi32>
// GROUPED: %[[ALLW:.*]] = tensor.concat dim(1) %[[W]], {{.*}} -> tensor<?x5xf32>
// GROUPED: tensor.insert_slice %arg4 into %{{.*}}[0, 0] [16, 30] [1, 1] : tensor<16x30xf32> into tensor<16x36xf32>
// GROUPED: linalg.transpose {{.*}} permutation = [1, 0, 2]
// GROUPED: %[[W13:.*]] = tensor.concat dim(0) {{.*}} -> tensor<7x16x24xf32>
// GROUPED: %[[W2:.*]] = tensor.concat dim(0) {{.*}} -> tensor<7x12x16xf32>
// GROUPED: %[[ROWS:.*]], %{{.*}}, %[[PERM:.*]], %[[SIZES:.*]] = moe.pack %arg0, %[[ALLIDS]], %[[ALLW]] experts 7
// The gmms say that their last 3 groups are the shared expert's
// (moe-quantize{mode=int8_routed} refuses them).
// GROUPED: moe.gmm %[[ROWS]], %[[W13]], %[[SIZES]] {moe.shared_groups = 3 : i64} : tensor<?x16xf32>, tensor<7x16x24xf32>, tensor<7xi32>
// GROUPED: moe.gmm %{{.*}}, %[[W2]], %[[SIZES]] {moe.shared_groups = 3 : i64}
// GROUPED: moe.combine %{{.*}}, %[[PERM]], %[[ALLW]]
// GROUPED-NOT: moe.block
func.func @shared(%x: tensor<?x16xf32>, %l: tensor<?x6xf32>, %w13: tensor<4x16x24xf32>, %w2: tensor<4x12x16xf32>,
                  %sw1: tensor<16x30xf32>, %sw3: tensor<16x30xf32>, %sw2: tensor<30x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%l : tensor<?x6xf32>) gate_up(%w13 : tensor<4x16x24xf32>) down(%w2 : tensor<4x12x16xf32>)
         shared_gate_up(%sw1, %sw3 : tensor<16x30xf32>, tensor<16x30xf32>) shared_down(%sw2 : tensor<30x16xf32>)
         top 2 null_experts 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// A block without a shared expert is left to -moe-expand-block.
// GROUPED-LABEL: func @routed_only
// GROUPED: moe.block
func.func @routed_only(%x: tensor<?x16xf32>, %l: tensor<?x4xf32>, %w13: tensor<4x16x24xf32>, %w2: tensor<4x12x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%l : tensor<?x4xf32>) gate_up(%w13 : tensor<4x16x24xf32>) down(%w2 : tensor<4x12x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
